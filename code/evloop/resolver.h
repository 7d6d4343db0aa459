// evloop/resolver: name lookups (getaddrinfo) on the loop's own bounded pool of threads,
// each result delivered as a callback on the loop thread (chapter 04).
// Role: what asyncio's loop.getaddrinfo and seed 003's native resolver do for a client that
// connects by name: at most min(32, CPUs + 4) lookups run at once (the size of asyncio's
// default executor, CPUs from the affinity mask), further lookups wait in the order they were
// asked for, and a lookup cancelled while it waits never reaches libc. The threads are the
// resolver's own, so a job handed to the loop's executor never waits for a lookup slot, nor a
// lookup for a job. The seed's "before" (a pool that grows a thread for every lookup that
// finds none idle) stays selectable as ResolverOptions::kUnbounded.
#pragma once

#include <netdb.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "evloop/resolver_cancel.h"

namespace handoff::evloop {

class EventLoop;

/// getaddrinfo(3)'s arguments: `host` and `service` (empty: none, as a null pointer) and
/// the hints.
struct LookupRequest {
  std::string host;
  std::string service;
  int family = AF_UNSPEC;
  int socktype = 0;
  int protocol = 0;
  int flags = 0;  ///< AI_* flags
};

/// One address of a lookup's answer: an addrinfo row, copied out of libc's list.
struct ResolvedAddress {
  int family = 0;
  int socktype = 0;
  int protocol = 0;
  sockaddr_storage address{};
  socklen_t length = 0;
};

/// A lookup's outcome: the addresses in getaddrinfo's order, or an error.
struct Resolution {
  int error = 0;         ///< 0, or getaddrinfo's EAI_* code (gai_strerror names it)
  int system_errno = 0;  ///< errno as the lookup left it, when error is EAI_SYSTEM
  std::vector<ResolvedAddress> addresses;
};

/// What runs on a resolver thread for each lookup. Blocking; called with no lock held.
using LookupFunction = std::function<Resolution(const LookupRequest&)>;

/// getaddrinfo(3), its list copied into a Resolution and freed.
Resolution system_lookup(const LookupRequest& request);

/// The bound on lookups at once for `cpus` CPUs: min(32, cpus + 4), as asyncio sizes its
/// default executor (concurrent.futures.ThreadPoolExecutor).
std::size_t lookup_cap(std::size_t cpus) noexcept;

/// The CPUs in the calling thread's affinity mask (sched_getaffinity, as Python's
/// os.process_cpu_count counts them), or std::thread::hardware_concurrency() (at least 1)
/// if the kernel will not say.
std::size_t affinity_cpus();

/// A resolver's bound, idle exit, lookup function, cancel store and test hook.
struct ResolverOptions {
  /// The seed's "before": a new thread for every lookup that finds no idle one.
  static constexpr std::size_t kUnbounded = SIZE_MAX;

  /// Lookups running at once, one thread each: min(32, CPUs + 4) by default, CPUs from
  /// the constructing thread's affinity mask.
  std::size_t max_threads = lookup_cap(affinity_cpus());
  /// How long a thread with nothing to do waits for a lookup before it exits.
  std::chrono::milliseconds idle_exit{1000};
  /// The lookup each thread runs: getaddrinfo, or a test's or a probe's stand-in.
  LookupFunction lookup = system_lookup;

  /// Where Lookup::cancel() raises the lookup's flag (evloop/resolver_cancel.h). Only
  /// under_lock is correct; outside_lock (a relaxed store with no lock, as before the
  /// weak-memory review) is kept as the negative control of the resolver's cancel tests.
  using CancelStore = evloop::CancelStore;
  CancelStore cancel_store = CancelStore::under_lock;
  /// A test hook run by a resolver thread, under the resolver's lock, after it has taken a
  /// lookup off the queue and before it reads the lookup's cancelled flag. Empty in production.
  std::function<void()> after_take;
};

/// What a resolver did (a snapshot, read under its lock; any thread).
struct ResolverCounts {
  std::uint64_t threads_started = 0;  ///< threads created, over the resolver's life
  std::uint64_t threads_alive = 0;    ///< threads that have not exited
  std::uint64_t peak_threads = 0;     ///< most threads alive at once
  std::uint64_t running = 0;          ///< lookups inside the lookup function now
  std::uint64_t peak_running = 0;     ///< most lookups inside the lookup function at once
  std::uint64_t queued = 0;           ///< lookups waiting for a thread (cancelled ones included)
  std::uint64_t lookups_run = 0;      ///< lookups that reached the lookup function
  std::uint64_t lookups_skipped = 0;  ///< lookups a thread dropped because they were cancelled
  std::uint64_t spawn_failures = 0;   ///< threads the system refused to create
};

/// A lookup the caller may still cancel. Copies refer to the same lookup. Loop thread only
/// (as asyncio's Future.cancel()).
class Lookup {
 public:
  struct State;
  struct Shared;
  Lookup() = default;
  Lookup(std::shared_ptr<Shared> shared, std::shared_ptr<State> state);

  /// Its callback will not run (a no-op once it has run), and is released at once. A lookup
  /// still waiting for a thread never reaches the lookup function; one already running
  /// finishes there, and its result is dropped.
  void cancel();
  bool cancelled() const noexcept;

 private:
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<State> state_;
};

/// A bounded set of lookup threads of its own for one loop.
///
/// Lookups on at most `max_threads` threads of the resolver's own, queued in order, each
/// result handed to the loop with call_soon_threadsafe and its callback run there.
///
/// Threads start lazily, whenever more lookups are queued than threads are idle (checked as
/// the loop thread queues one and as a thread takes one), up to the bound; a thread that
/// finishes a lookup takes the next queued one, and exits once it has waited `idle_exit`
/// with nothing to do. So a burst costs `max_threads` thread creations, a steady
/// trickle of lookups keeps one or a few threads alive, and an idle server keeps none.
///
/// Guarantees: lookups start in the order resolve() was called (one queue, taken front
/// first); never more than `max_threads` run at once; a callback runs on the loop thread,
/// at most once, and never after cancel() or after the resolver is destroyed. Destruction
/// does not wait for lookups in flight (getaddrinfo cannot be interrupted): queued lookups
/// are dropped, idle threads told to exit, and a thread still inside a lookup exits when it
/// returns, dropping its result; the threads share the resolver's state, freed by the last.
/// The loop must outlive the resolver. Cost: one lock to queue and one to take a lookup, a
/// call_soon_threadsafe per result, and a thread creation per thread the burst needs.
class Resolver {
 public:
  using Done = std::function<void(Resolution)>;

  explicit Resolver(EventLoop& loop, ResolverOptions options = {});
  ~Resolver();
  Resolver(const Resolver&) = delete;
  Resolver& operator=(const Resolver&) = delete;

  /// Loop thread: queue a lookup; `done` runs on the loop thread with its outcome.
  Lookup resolve(LookupRequest request, Done done);

  ResolverCounts counts() const;
  std::size_t max_threads() const noexcept;

 private:
  std::shared_ptr<Lookup::Shared> shared_;
};

}  // namespace handoff::evloop
