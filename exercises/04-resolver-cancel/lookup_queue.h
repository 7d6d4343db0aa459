// exercises/04-resolver-cancel: chapter 04's bounded resolver cut down to its queue and its
// threads; the step a thread takes to get its next lookup, to write.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace exercise {

/// What a lookup runs (blocking: getaddrinfo in the chapter, a test's stand-in here).
using LookupFunction = std::function<std::string(const std::string& name)>;
/// Runs with the answer, on the thread that did the lookup, unless the lookup was cancelled.
using Done = std::function<void(std::string answer)>;

/// The queue's mutex: a std::mutex that counts its releases, so that the grader can tell
/// whether a thread let the lock go between two steps. Hold n is the time the lock is held
/// after its n-th release. Use it as you would a std::mutex.
class QueueMutex {
 public:
  void lock() { m_.lock(); }
  bool try_lock() { return m_.try_lock(); }
  void unlock() {
    ++releases_;
    m_.unlock();
  }
  /// Which hold of the lock this is; call it with the lock held.
  std::uint64_t hold() const noexcept { return releases_; }

 private:
  std::mutex m_;
  std::uint64_t releases_ = 0;  // guarded by m_ (counted while it is still held)
};

/// A lookup's flag, guarded by the queue's mutex: read it and set it as a bool. It notes the
/// hold of the lock, and the thread, of its last read and its last set, which is how the
/// grader sees take()'s cancel check and its mark.
class GuardedFlag {
 public:
  struct Access {
    bool happened = false;
    std::uint64_t hold = 0;
    std::thread::id thread;
  };
  explicit GuardedFlag(const QueueMutex& mutex) : mutex_(mutex) {}
  operator bool() const {
    last_read_ = now();
    return value_;
  }
  GuardedFlag& operator=(bool value) {
    value_ = value;
    last_set_ = now();
    return *this;
  }
  Access last_read() const { return last_read_; }
  Access last_set() const { return last_set_; }

 private:
  Access now() const { return Access{true, mutex_.hold(), std::this_thread::get_id()}; }
  const QueueMutex& mutex_;
  bool value_ = false;
  mutable Access last_read_;
  Access last_set_;
};

/// One lookup's state, shared by the queue and the caller's ticket. Every field is guarded by
/// the queue's mutex.
struct LookupState {
  explicit LookupState(const QueueMutex& mutex) : cancelled(mutex), started(mutex) {}
  std::string name;
  Done done;
  GuardedFlag cancelled;  ///< cancel() was called
  GuardedFlag started;    ///< a thread took it for the lookup function: too late to skip
};

struct QueueCounts {
  std::uint64_t lookups_run = 0;      ///< lookups that reached the lookup function
  std::uint64_t lookups_skipped = 0;  ///< cancelled lookups a thread dropped unrun
  std::uint64_t answers_dropped = 0;  ///< answers of lookups cancelled while they ran
  /// Counted by the given thread loop as take() returns (the grader reads them):
  std::uint64_t taken_unmarked = 0;   ///< lookups take() returned without setting `started`
  std::uint64_t marked_unchecked = 0; ///< marked started, and `cancelled` never read
  std::uint64_t marked_apart = 0;     ///< `started` set in another hold of the lock than the
                                      ///< one in which `cancelled` was last read
};

/// The point a test may hold a thread at. Production passes none.
struct LookupQueueHooks {
  /// Run by take() between finding a lookup not cancelled and marking it started (with the
  /// queue's mutex held there, in a take that keeps the two in one step): the tests hold the
  /// thread in this window while another thread cancels the lookup.
  std::function<void()> after_cancel_check;
};

/// `threads` threads take lookups from one queue, first asked first taken, and run each
/// outside the lock. A cancelled lookup still queued never reaches the lookup function; one
/// cancelled while it runs finishes there and its answer is dropped.
class LookupQueue {
 public:
  using Ticket = std::shared_ptr<LookupState>;

  // ---- given (lookup_queue.cpp)

  LookupQueue(std::size_t threads, LookupFunction lookup, LookupQueueHooks hooks = {});
  /// Drops what is still queued and joins the threads (after the lookups they are running).
  ~LookupQueue();
  LookupQueue(const LookupQueue&) = delete;
  LookupQueue& operator=(const LookupQueue&) = delete;

  Ticket resolve(std::string name, Done done);
  /// Cancel a lookup: true if it will never reach the lookup function (it was still queued),
  /// false if a thread already took it (its answer will be dropped) or it has finished.
  bool cancel(const Ticket& ticket);
  QueueCounts counts() const;

 private:
  // ---- the exercise (take.cpp)

  /// A thread's next lookup: wait, with `lock` held on mutex_ (queued_ is a
  /// condition_variable_any, as the mutex is a QueueMutex), until a lookup is queued or
  /// stopping_ is set; return the oldest queued lookup that was not cancelled, marked started
  /// (nullptr when stopping). Cancelled lookups met on the way are dropped from the queue and
  /// counted in counts_.lookups_skipped. Call hooks_.after_cancel_check() between finding
  /// a lookup not cancelled and marking it started.
  Ticket take(std::unique_lock<QueueMutex>& lock);

  void thread_main();

  LookupFunction lookup_;
  LookupQueueHooks hooks_;
  mutable QueueMutex mutex_;
  std::condition_variable_any queued_;
  std::deque<Ticket> queue_;  // guarded by mutex_
  QueueCounts counts_;        // guarded by mutex_
  bool stopping_ = false;     // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace exercise
