// evloop/resolver: name lookups (getaddrinfo) on the loop's own bounded pool of threads,
// each result delivered as a callback on the loop thread (chapter 04).
// Role: the bounded queue and its threads; the callbacks stay on the loop thread, so a
// worker only ever sees a request, a cancelled flag and the loop to post to.
#include "evloop/resolver.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

#include "evloop/event_loop.h"

namespace handoff::evloop {

// ---------------------------------------------------------------- the lookup and the bound

Resolution system_lookup(const LookupRequest& request) {
  addrinfo hints{};
  hints.ai_family = request.family;
  hints.ai_socktype = request.socktype;
  hints.ai_protocol = request.protocol;
  hints.ai_flags = request.flags;
  addrinfo* list = nullptr;
  errno = 0;
  Resolution out;
  out.error = ::getaddrinfo(request.host.empty() ? nullptr : request.host.c_str(),
                            request.service.empty() ? nullptr : request.service.c_str(), &hints, &list);
  if (out.error == EAI_SYSTEM) out.system_errno = errno;
  for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    ResolvedAddress a;
    a.family = ai->ai_family;
    a.socktype = ai->ai_socktype;
    a.protocol = ai->ai_protocol;
    a.length = std::min<socklen_t>(ai->ai_addrlen, sizeof a.address);
    std::memcpy(&a.address, ai->ai_addr, a.length);
    out.addresses.push_back(a);
  }
  if (list != nullptr) ::freeaddrinfo(list);
  return out;
}

std::size_t lookup_cap(std::size_t cpus) noexcept { return std::min<std::size_t>(32, cpus + 4); }

std::size_t affinity_cpus() {
  // A mask as large as the kernel's: sched_getaffinity fails with EINVAL while the set is
  // smaller than the kernel's CPU count, so grow it until it fits.
  for (int n = CPU_SETSIZE; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (set == nullptr) break;
    const std::size_t size = CPU_ALLOC_SIZE(n);
    if (::sched_getaffinity(0, size, set) == 0) {
      const int count = CPU_COUNT_S(size, set);
      CPU_FREE(set);
      return static_cast<std::size_t>(std::max(count, 1));
    }
    const int err = errno;
    CPU_FREE(set);
    if (err != EINVAL) break;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// ---------------------------------------------------------------- the shared state

/// One lookup as its thread sees it.
struct Lookup::State {
  State(std::uint64_t i, LookupRequest r) : id(i), request(std::move(r)) {}
  const std::uint64_t id;  ///< its callback's key in Shared::callbacks
  const LookupRequest request;
  /// Raised by cancel() on the loop thread, read by the thread that takes the lookup off
  /// the queue, both under Shared::mu (evloop/resolver_cancel.h says why).
  CancelFlag<> cancelled;
};

/// What a resolver's threads, handles and results share.
///
/// What the resolver, its threads, its handles and its posted results share; freed by the
/// last of them.
struct Lookup::Shared {
  Shared(EventLoop& l, ResolverOptions o) : loop(&l), options(std::move(o)) {}

  std::mutex mu;
  std::condition_variable work;  // an idle thread waits here for a lookup or for the end
  EventLoop* loop;               // under mu; null once the resolver is destroyed
  const ResolverOptions options;
  std::deque<std::shared_ptr<State>> queue;  // under mu, oldest first
  std::uint64_t idle = 0;                    // under mu: threads waiting on `work`
  ResolverCounts counts;                     // under mu

  // Loop thread only: each lookup's callback until it runs or is cancelled. A worker never
  // holds one, so a callback and its captures are created, run and destroyed on the loop.
  std::unordered_map<std::uint64_t, Resolver::Done> callbacks;
  std::uint64_t next_id = 0;  // loop thread only
};

namespace {

using Shared = Lookup::Shared;
using State = Lookup::State;

// The loop thread's half of a lookup: run its callback unless it was cancelled (or the
// resolver destroyed) since; either way the entry is gone afterwards.
void deliver(Shared& shared, std::uint64_t id, Resolution result) {
  const auto it = shared.callbacks.find(id);
  if (it == shared.callbacks.end()) return;
  Resolver::Done done = std::move(it->second);
  shared.callbacks.erase(it);
  done(std::move(result));
}

void work(const std::shared_ptr<Shared>& shared, std::uint64_t index);

// Under the lock, after a lookup was queued or taken: each idle thread will take one queued
// lookup, so start a thread if more are queued than there are idle threads, up to the bound.
// An idle thread that has been notified counts as idle until it wakes, so two quick resolves
// never both count on one idle thread. Called from resolve() and from a thread that has just
// taken a lookup (as smol's blocking pool, the seed's pool, grows): under a burst the threads
// start each other while the loop thread queues, so the pool reaches the bound as fast as
// the queue outgrows it. The thread is created under the lock. Returns false when the
// system refused a thread.
bool grow(const std::shared_ptr<Shared>& shared) {
  Shared& s = *shared;
  if (s.queue.size() <= s.idle || s.counts.threads_alive >= s.options.max_threads) return true;
  try {
    const std::uint64_t index = s.counts.threads_started;
    std::thread([shared, index] { work(shared, index); }).detach();
  } catch (const std::system_error&) {
    ++s.counts.spawn_failures;  // the lookups wait for a thread that exists
    return false;
  }
  ++s.counts.threads_started;
  s.counts.peak_threads = std::max(s.counts.peak_threads, ++s.counts.threads_alive);
  return true;
}

// [resolver.worker]
// A resolver thread: take lookups front first, skip the cancelled ones before they reach
// the lookup function, hand each result to the loop; exit after `idle_exit` with nothing to
// do, or once the resolver is gone and the queue empty.
void work(const std::shared_ptr<Shared>& shared, std::uint64_t index) {
  const std::string name = "resolver-" + std::to_string(index);
  ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
  Shared& s = *shared;
  std::unique_lock lock(s.mu);
  for (;;) {
    if (s.queue.empty()) {
      if (s.loop == nullptr) break;
      ++s.idle;
      const bool woken =
          s.work.wait_for(lock, s.options.idle_exit, [&] { return !s.queue.empty() || s.loop == nullptr; });
      --s.idle;
      if (!woken) break;  // idle for idle_exit: give the thread back
      continue;
    }
    std::shared_ptr<State> state = std::move(s.queue.front());
    s.queue.pop_front();
    if (s.options.after_take) s.options.after_take();
    if (state->cancelled.seen_by_taker()) {  // under mu, as the cancel's store
      ++s.counts.lookups_skipped;
      continue;
    }
    // [resolver.worker]
    // [resolver.run]
    grow(shared);
    ++s.counts.lookups_run;
    s.counts.peak_running = std::max(s.counts.peak_running, ++s.counts.running);
    lock.unlock();
    Resolution result = s.options.lookup(state->request);
    lock.lock();
    --s.counts.running;
    // Posted under the lock, so the resolver's destructor (which clears `loop` under it)
    // cannot finish between the check and the post.
    if (s.loop != nullptr) {
      s.loop->call_soon_threadsafe(
          [shared, id = state->id, result = std::move(result)]() mutable { deliver(*shared, id, std::move(result)); });
    }
  }
  --s.counts.threads_alive;
}
// [resolver.run]

}  // namespace

// ---------------------------------------------------------------- handles

Lookup::Lookup(std::shared_ptr<Shared> shared, std::shared_ptr<State> state)
    : shared_(std::move(shared)), state_(std::move(state)) {}

void Lookup::cancel() {
  if (!state_ || cancelled()) return;
  state_->cancelled.raise(shared_->mu, shared_->options.cancel_store);  // see State::cancelled
  shared_->callbacks.erase(state_->id);
}

bool Lookup::cancelled() const noexcept { return state_ && state_->cancelled.raised(); }

// ---------------------------------------------------------------- the resolver

Resolver::Resolver(EventLoop& loop, ResolverOptions options)
    : shared_(std::make_shared<Shared>(loop, std::move(options))) {
  if (shared_->options.max_threads == 0) throw std::invalid_argument("Resolver: max_threads must be at least 1");
}

Resolver::~Resolver() {
  {
    std::lock_guard lock(shared_->mu);
    shared_->loop = nullptr;
    shared_->queue.clear();
  }
  shared_->work.notify_all();  // idle threads exit now rather than after idle_exit
  shared_->callbacks.clear();  // results still on their way to the loop find no callback
}

Lookup Resolver::resolve(LookupRequest request, Done done) {
  Shared& s = *shared_;
  const std::uint64_t id = s.next_id++;
  auto state = std::make_shared<State>(id, std::move(request));
  s.callbacks.emplace(id, std::move(done));
  bool wake = false;
  {
    std::lock_guard lock(s.mu);
    s.queue.push_back(state);
    if (s.queue.size() <= s.idle) {
      wake = true;
    } else if (!grow(shared_) && s.counts.threads_alive == 0) {
      // No thread exists to run it, and none could be made.
      s.queue.pop_back();
      s.callbacks.erase(id);
      throw std::system_error(EAGAIN, std::generic_category(), "Resolver: cannot start a lookup thread");
    }
  }
  if (wake) s.work.notify_one();
  return Lookup(shared_, std::move(state));
}

ResolverCounts Resolver::counts() const {
  std::lock_guard lock(shared_->mu);
  ResolverCounts c = shared_->counts;
  c.queued = shared_->queue.size();
  return c;
}

std::size_t Resolver::max_threads() const noexcept { return shared_->options.max_threads; }

}  // namespace handoff::evloop
