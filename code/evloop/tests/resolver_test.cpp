// evloop/tests/resolver_test: the bounded resolver's cap, order, cancellation, delivery and
// shutdown (chapter 04).
// Role: each guarantee of evloop/resolver.h as a test, with an injected lookup function that
// counts the lookups inside it and holds them at a gate; the unbounded arm (the seed's
// "before") as the negative control that the cap test can fail.
#include "evloop/resolver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "evloop/event_loop.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using handoff::evloop::affinity_cpus;
using handoff::evloop::EventLoop;
using handoff::evloop::Lookup;
using handoff::evloop::lookup_cap;
using handoff::evloop::LookupRequest;
using handoff::evloop::Resolution;
using handoff::evloop::Resolver;
using handoff::evloop::ResolverOptions;
using handoff::testkit::Watchdog;

namespace {

/// Run the loop's turns (each waiting at most 10 ms) until `pred`; false at the deadline.
template <class Pred>
bool run_until(EventLoop& loop, Pred pred, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    loop.run_once(10);
  }
  return true;
}

/// Wait (bounded) until `pred` holds, without running the loop.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

/// What an injected lookup function saw: who entered, in what order, how many at once; and
/// the gate that holds them.
struct Rig {
  std::mutex mu;
  std::condition_variable cv;
  int inside = 0;
  int peak = 0;
  std::vector<std::string> entered;
  std::set<std::string> released;  // hosts allowed to return
  bool open = false;               // every host may return
  bool held_too_long = false;      // a held lookup gave up waiting (the test failed)

  std::size_t entered_count() {
    std::lock_guard lock(mu);
    return entered.size();
  }
  void release(const std::string& host) {
    {
      std::lock_guard lock(mu);
      released.insert(host);
    }
    cv.notify_all();
  }
  void open_gate() {
    {
      std::lock_guard lock(mu);
      open = true;
    }
    cv.notify_all();
  }

  /// Count the lookup in and record it, then hold it until its host is released or the
  /// gate opens (at most 10 s).
  Resolution held(const LookupRequest& r) {
    std::unique_lock lock(mu);
    peak = std::max(peak, ++inside);
    entered.push_back(r.host);
    cv.notify_all();
    if (!cv.wait_for(lock, 10s, [&] { return open || released.count(r.host) != 0; })) held_too_long = true;
    --inside;
    return Resolution{};
  }

  /// Count the lookup in; hold it until `gate_at` lookups are inside at once (then open the
  /// gate for good) or 1 s has passed (then open it too): a resolver that lets `gate_at`
  /// lookups run at once is caught while the first ones are held.
  Resolution burst(const LookupRequest& r, int gate_at) {
    std::unique_lock lock(mu);
    peak = std::max(peak, ++inside);
    entered.push_back(r.host);
    cv.notify_all();
    cv.wait_for(lock, 1s, [&] { return open || inside >= gate_at; });
    open = true;
    cv.notify_all();
    --inside;
    return Resolution{};
  }
};

ResolverOptions held_by(const std::shared_ptr<Rig>& rig, std::size_t max_threads) {
  ResolverOptions o;
  o.max_threads = max_threads;
  o.lookup = [rig](const LookupRequest& r) { return rig->held(r); };
  return o;
}

LookupRequest host(std::string name) {
  LookupRequest r;
  r.host = std::move(name);
  return r;
}

/// What a burst saw: the most lookups inside the lookup function at once (counted there),
/// and the resolver's own counts.
struct BurstSeen {
  int peak = 0;
  handoff::evloop::ResolverCounts counts;
};

/// A burst of `n` lookups through a resolver with `options`, gated at `gate_at`, run until
/// every callback has run.
BurstSeen burst(ResolverOptions options, int n, int gate_at) {
  EventLoop loop;
  auto rig = std::make_shared<Rig>();
  options.lookup = [rig, gate_at](const LookupRequest& r) { return rig->burst(r, gate_at); };
  Resolver resolver(loop, std::move(options));
  int delivered = 0;
  for (int i = 0; i < n; ++i) resolver.resolve(host("h" + std::to_string(i)), [&](Resolution) { ++delivered; });
  REQUIRE(run_until(
      loop, [&] { return delivered == n; }, 30s));
  const BurstSeen seen{rig->peak, resolver.counts()};
  CHECK(seen.counts.lookups_run == static_cast<std::uint64_t>(n));
  CHECK(seen.counts.peak_running >= static_cast<std::uint64_t>(seen.peak));
  return seen;
}

}  // namespace

TEST_CASE("resolver: the bound is min(32, CPUs + 4) with CPUs from the affinity mask", "[resolver][ch04]") {
  CHECK(lookup_cap(1) == 5);
  CHECK(lookup_cap(2) == 6);
  CHECK(lookup_cap(28) == 32);
  CHECK(lookup_cap(64) == 32);
  // Narrow this thread's mask to one CPU: the count follows the mask, not the machine.
  cpu_set_t before;
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(::sched_setaffinity(0, sizeof one, &one) == 0);
  const std::size_t cpus = affinity_cpus();
  const std::size_t bound = ResolverOptions{}.max_threads;
  REQUIRE(::sched_setaffinity(0, sizeof before, &before) == 0);
  CHECK(cpus == 1);
  CHECK(bound == 5);
  CHECK(affinity_cpus() == static_cast<std::size_t>(CPU_COUNT(&before)));
}

TEST_CASE("resolver: a burst of 1,000 lookups never has more than the bound inside the lookup at once",
          "[resolver][ch04]") {
  Watchdog dog(60s, "capped burst");
  const ResolverOptions options;
  const int cap = static_cast<int>(options.max_threads);
  // Gated at cap + 1: the first `cap` lookups are held for 1 s, time for a resolver without
  // the bound to start one more, which would open the gate and show in the peak.
  const BurstSeen seen = burst(options, 1000, cap + 1);
  CHECK(seen.peak == cap);
  CHECK(seen.counts.peak_running == static_cast<std::uint64_t>(cap));
  CHECK(seen.counts.threads_started == static_cast<std::uint64_t>(cap));
}

TEST_CASE("resolver: the unbounded arm runs more lookups at once than the bound (negative control)",
          "[resolver][ch04]") {
  Watchdog dog(60s, "unbounded burst");
  const int cap = static_cast<int>(ResolverOptions{}.max_threads);
  ResolverOptions options;
  options.max_threads = ResolverOptions::kUnbounded;
  const BurstSeen seen = burst(options, 1000, cap + 1);
  CHECK(seen.peak > cap);
  CHECK(seen.counts.threads_started > static_cast<std::uint64_t>(cap));
}

TEST_CASE("resolver: lookups start in the order they were asked for", "[resolver][ch04]") {
  Watchdog dog(30s, "resolver FIFO");
  EventLoop loop;
  auto rig = std::make_shared<Rig>();
  Resolver resolver(loop, held_by(rig, 3));
  constexpr int kLookups = 20;
  int delivered = 0;
  for (int i = 0; i < kLookups; ++i) resolver.resolve(host("h" + std::to_string(i)), [&](Resolution) { ++delivered; });
  REQUIRE(eventually([&] { return rig->entered_count() == 3; }));
  {
    std::lock_guard lock(rig->mu);
    CHECK(std::set<std::string>(rig->entered.begin(), rig->entered.end()) == std::set<std::string>{"h0", "h1", "h2"});
  }
  // One slot frees at a time, so exactly one queued lookup starts after each release.
  for (int i = 0; i + 3 < kLookups; ++i) {
    rig->release("h" + std::to_string(i));
    REQUIRE(eventually([&] { return rig->entered_count() == static_cast<std::size_t>(i + 4); }));
    std::lock_guard lock(rig->mu);
    CHECK(rig->entered.back() == "h" + std::to_string(i + 3));
  }
  rig->open_gate();
  REQUIRE(run_until(loop, [&] { return delivered == kLookups; }));
  CHECK_FALSE(rig->held_too_long);
}

TEST_CASE("resolver: a cancelled lookup never reaches the lookup function and its callback never runs",
          "[resolver][ch04]") {
  Watchdog dog(30s, "resolver cancel");
  EventLoop loop;
  auto rig = std::make_shared<Rig>();
  Resolver resolver(loop, held_by(rig, 2));
  std::set<std::string> delivered;
  auto done = [&](const std::string& name) { return [&delivered, name](Resolution) { delivered.insert(name); }; };
  // h0 and h1 take both threads; q0..q9 queue behind them.
  resolver.resolve(host("h0"), done("h0"));
  Lookup running = resolver.resolve(host("h1"), done("h1"));
  REQUIRE(eventually([&] { return rig->entered_count() == 2; }));
  auto token = std::make_shared<int>(0);
  std::vector<Lookup> queued;
  for (int i = 0; i < 10; ++i) {
    const std::string name = "q" + std::to_string(i);
    queued.push_back(resolver.resolve(host(name), [&delivered, name, token](Resolution) { delivered.insert(name); }));
  }
  for (int i = 1; i < 10; i += 2) queued[static_cast<std::size_t>(i)].cancel();
  CHECK(token.use_count() == 6);  // the cancelled callbacks' captures are released at once
  running.cancel();               // in flight: it finishes, its result is dropped
  CHECK(running.cancelled());
  rig->open_gate();

  // Every result posted (a thread lowers `running` and posts under one hold of the lock),
  // then every post taken.
  REQUIRE(eventually([&] {
    const auto c = resolver.counts();
    return c.queued == 0 && c.running == 0 && c.lookups_run + c.lookups_skipped == 12;
  }));
  REQUIRE(run_until(loop, [&] { return delivered.size() == 6; }));
  for (int i = 0; i < 5; ++i) loop.run_once(0);
  CHECK(delivered == std::set<std::string>{"h0", "q0", "q2", "q4", "q6", "q8"});
  const auto c = resolver.counts();
  CHECK(c.lookups_skipped == 5);
  CHECK(c.lookups_run == 7);
  std::lock_guard lock(rig->mu);
  CHECK(std::set<std::string>(rig->entered.begin(), rig->entered.end()) ==
        std::set<std::string>{"h0", "h1", "q0", "q2", "q4", "q6", "q8"});
  CHECK_FALSE(rig->held_too_long);
}

namespace {

/// What one forced race of a cancel against a take came to.
struct CancelRace {
  bool cancel_returned_while_held;  ///< cancel() returned while the thread was between take and read
  bool callback_ran;
  std::uint64_t run, skipped;
};

/// A cancel raced against the take, forced: the resolver's one thread is held by the
/// after_take hook (under the resolver's lock, between taking the lookup off the queue and
/// reading its cancelled flag) for up to 300 ms while this thread, the loop's, cancels. A
/// cancel that returns while the thread is held there has no order with the thread's read
/// of the flag: the memory model lets the read miss it, and a lookup cancelled while it
/// waited could then reach libc. Under the lock, the cancel waits for the take to finish.
CancelRace race_cancel_against_take(ResolverOptions::CancelStore store) {
  EventLoop loop;
  std::mutex mu;
  std::condition_variable cv;
  bool taken = false, cancel_returned = false, seen_returned = false;  // under mu
  bool ran = false;                                                    // loop thread only
  ResolverOptions options;
  options.max_threads = 1;
  options.cancel_store = store;
  options.lookup = [](const LookupRequest&) { return Resolution{}; };
  options.after_take = [&] {
    std::unique_lock lock(mu);
    taken = true;
    cv.notify_all();
    seen_returned = cv.wait_for(lock, 300ms, [&] { return cancel_returned; });
  };
  Resolver resolver(loop, std::move(options));
  Lookup lookup = resolver.resolve(host("x"), [&](Resolution) { ran = true; });
  {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, 5s, [&] { return taken; }));
  }
  lookup.cancel();  // under the lock: waits until the thread has read the flag
  {
    std::lock_guard lock(mu);
    cancel_returned = true;
  }
  cv.notify_all();
  REQUIRE(eventually([&] {
    const auto c = resolver.counts();
    return c.running == 0 && c.lookups_run + c.lookups_skipped == 1;
  }));
  for (int i = 0; i < 5; ++i) loop.run_once(0);
  const auto c = resolver.counts();
  std::lock_guard lock(mu);
  return {seen_returned, ran, c.lookups_run, c.lookups_skipped};
}

}  // namespace

TEST_CASE("resolver: a cancel is ordered with the take of its lookup by the resolver's lock", "[resolver][ch04]") {
  Watchdog dog(20s, "resolver cancel against take");
  const CancelRace r = race_cancel_against_take(ResolverOptions::CancelStore::under_lock);
  CHECK_FALSE(r.cancel_returned_while_held);  // it waited for the take: taken first, so it runs
  CHECK(r.run == 1);
  CHECK_FALSE(r.callback_ran);  // and its result is dropped
}

TEST_CASE("resolver: a cancel outside the lock returns mid-take, unordered with the read (negative control)",
          "[resolver][ch04]") {
  Watchdog dog(20s, "resolver cancel against take, outside the lock");
  const CancelRace r = race_cancel_against_take(ResolverOptions::CancelStore::outside_lock);
  CHECK(r.cancel_returned_while_held);  // the race the memory model leaves open
  CHECK_FALSE(r.callback_ran);
}

TEST_CASE("resolver: a lookup cancelled after its result was posted does not run its callback", "[resolver][ch04]") {
  Watchdog dog(30s, "resolver cancel after post");
  EventLoop loop;
  ResolverOptions options;
  options.lookup = [](const LookupRequest&) { return Resolution{}; };
  Resolver resolver(loop, std::move(options));
  bool ran = false;
  Lookup lookup = resolver.resolve(host("x"), [&](Resolution) { ran = true; });
  REQUIRE(eventually([&] {
    const auto c = resolver.counts();
    return c.lookups_run == 1 && c.running == 0;  // its result is in the loop's post queue
  }));
  lookup.cancel();
  for (int i = 0; i < 5; ++i) loop.run_once(0);
  CHECK_FALSE(ran);
}

TEST_CASE("resolver: getaddrinfo's addresses and its EAI errors arrive on the loop thread", "[resolver][ch04]") {
  Watchdog dog(30s, "resolver delivery");
  EventLoop loop;
  Resolver resolver(loop);  // the real getaddrinfo
  const auto loop_thread = std::this_thread::get_id();

  LookupRequest localhost = host("localhost");
  localhost.family = AF_INET;
  localhost.socktype = SOCK_STREAM;
  localhost.service = "5432";
  LookupRequest bad = host("not-a-number");
  bad.flags = AI_NUMERICHOST;  // refused by getaddrinfo itself, without a name service

  int delivered = 0;
  Resolution found, refused;
  std::thread::id found_on, refused_on;
  resolver.resolve(localhost, [&](Resolution r) {
    found = std::move(r);
    found_on = std::this_thread::get_id();
    ++delivered;
  });
  resolver.resolve(bad, [&](Resolution r) {
    refused = std::move(r);
    refused_on = std::this_thread::get_id();
    ++delivered;
  });
  REQUIRE(run_until(loop, [&] { return delivered == 2; }));

  CHECK(found_on == loop_thread);
  CHECK(refused_on == loop_thread);
  REQUIRE(found.error == 0);
  REQUIRE_FALSE(found.addresses.empty());
  const auto& a = found.addresses.front();
  CHECK(a.family == AF_INET);
  CHECK(a.socktype == SOCK_STREAM);
  REQUIRE(a.length == sizeof(sockaddr_in));
  sockaddr_in in{};
  std::memcpy(&in, &a.address, sizeof in);
  CHECK(ntohs(in.sin_port) == 5432);
  CHECK(ntohl(in.sin_addr.s_addr) >> 24 == 127);  // a loopback address
  CHECK(refused.error == EAI_NONAME);
  CHECK(refused.addresses.empty());
}

TEST_CASE("resolver: threads are reused, and exit once idle", "[resolver][ch04]") {
  Watchdog dog(30s, "resolver reuse and idle exit");
  EventLoop loop;
  ResolverOptions options;
  options.lookup = [](const LookupRequest&) { return Resolution{}; };
  options.idle_exit = 200ms;
  Resolver resolver(loop, std::move(options));
  for (int i = 0; i < 10; ++i) {  // one after another: each finds the last one's thread idle
    bool done = false;
    resolver.resolve(host("h"), [&](Resolution) { done = true; });
    REQUIRE(run_until(loop, [&] { return done; }));
  }
  CHECK(resolver.counts().threads_started == 1);
  REQUIRE(eventually([&] { return resolver.counts().threads_alive == 0; }, 5s));
}

TEST_CASE(
    "resolver: destruction with lookups queued and in flight returns at once, runs no callback and "
    "leaves no thread",
    "[resolver][ch04]") {
  Watchdog dog(30s, "resolver destruction");
  EventLoop loop;
  auto rig = std::make_shared<Rig>();
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> alive = token;
  int delivered = 0;
  {
    ResolverOptions options;
    options.max_threads = 2;
    options.lookup = [rig, token](const LookupRequest& r) { return rig->held(r); };
    token.reset();  // the lookup function (inside the resolver's shared state) holds it now
    auto resolver = std::make_unique<Resolver>(loop, std::move(options));
    for (int i = 0; i < 12; ++i) resolver->resolve(host("h" + std::to_string(i)), [&](Resolution) { ++delivered; });
    REQUIRE(eventually([&] { return rig->entered_count() == 2; }));
    // Two lookups are held inside the lookup function (for up to 10 s), ten are queued: a
    // destructor that waited for them would take that long.
    const auto t0 = std::chrono::steady_clock::now();
    resolver.reset();
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  }
  rig->open_gate();
  // The shared state (and the token in it) is freed by the last thread to exit.
  REQUIRE(eventually([&] { return alive.expired(); }, 5s));
  for (int i = 0; i < 5; ++i) loop.run_once(0);
  CHECK(delivered == 0);
  CHECK(rig->entered_count() == 2);  // the queued ones never started
}

TEST_CASE("resolver: destruction ends idle threads at once, not after their idle wait", "[resolver][ch04]") {
  Watchdog dog(30s, "resolver idle destruction");
  EventLoop loop;
  auto token = std::make_shared<int>(0);
  std::weak_ptr<int> alive = token;
  {
    ResolverOptions options;
    options.idle_exit = 60s;
    options.lookup = [token](const LookupRequest&) { return Resolution{}; };
    token.reset();
    Resolver resolver(loop, std::move(options));
    int delivered = 0;
    for (int i = 0; i < 4; ++i) resolver.resolve(host("h"), [&](Resolution) { ++delivered; });
    REQUIRE(run_until(loop, [&] { return delivered == 4; }));
  }
  REQUIRE(eventually([&] { return alive.expired(); }, 5s));
}
