// sync/tests/interpreter_lock_test: the interpreter-lock model, each behaviour of CPython's GIL
// it claims: exclusion, a waiter let in within about a switch interval by a holder that
// reaches checkpoints, forced switching (and, as a negative control, the re-take it stops),
// starvation by a holder that never checks, and the release around blocking calls (chapter 04). Every
// test is bounded by a watchdog; the time bounds are liveness bounds, generous on purpose.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "stats/thread_cpu.h"
#include "sync/interpreter_lock.h"
#include "testkit/watchdog.h"

using handoff::sync::InterpreterLock;
using handoff::sync::InterpreterLockOptions;
using namespace std::chrono_literals;

namespace {

std::int64_t now_ns() { return handoff::stats::monotonic_ns(); }

/// Interpreted work: spin for `ns` of wall time, reaching a checkpoint every microsecond.
void work_with_checkpoints(InterpreterLock& lock, std::int64_t ns) {
  const std::int64_t end = now_ns() + ns;
  while (now_ns() < end) {
    const std::int64_t unit = now_ns() + 1'000;
    while (now_ns() < unit) {
    }
    lock.checkpoint();
  }
}

InterpreterLockOptions with_interval(std::chrono::nanoseconds interval, bool forced = true) {
  InterpreterLockOptions o;
  o.switch_interval = interval;
  o.forced_switching = forced;
  return o;
}

}  // namespace

TEST_CASE("interpreter lock: at most one thread holds it, across checkpoints and blocking calls",
          "[interpreter_lock][ch04]") {
  handoff::testkit::Watchdog dog(30s, "four threads taking turns on the lock");
  InterpreterLock lock(with_interval(50us));  // short: many drop requests in a short run
  constexpr int kThreads = 4;
  constexpr int kIterations = 5'000;
  std::atomic<bool> go{false};
  std::atomic<int> inside{0};
  std::atomic<int> most_inside{0};
  long long shared = 0;  // plain: only the lock orders the threads' increments
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();  // all start at once
      lock.acquire();
      for (int i = 0; i < kIterations; ++i) {
        // relaxed (all three): a count of threads inside, read for its value only.
        const int now = inside.fetch_add(1, std::memory_order_relaxed) + 1;
        int seen = most_inside.load(std::memory_order_relaxed);
        while (now > seen && !most_inside.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
        }
        const std::int64_t unit = now_ns() + 2'000;  // a little work inside, so overlaps would show
        while (now_ns() < unit) {
        }
        ++shared;
        inside.fetch_sub(1, std::memory_order_relaxed);
        lock.checkpoint();
        if ((i + t) % 50 == 0) lock.release_for_io([] { std::this_thread::yield(); });
      }
      lock.release();
    });
  }
  go.store(true, std::memory_order_release);  // release: pairs with the threads' acquire loads
  for (auto& th : threads) th.join();
  CHECK(most_inside.load() == 1);
  CHECK(shared == static_cast<long long>(kThreads) * kIterations);
  // The threads did take turns (a drop request every 50 µs of holding), so exclusion was
  // tested with all four contending, not one after another.
  CHECK(lock.counters().switches > 2 * kThreads);
}

TEST_CASE("interpreter lock: disabled, it lets a second thread in beside the holder", "[interpreter_lock][ch04]") {
  // The "no lock" arm of the gil-spin probe: every call returns at once.
  handoff::testkit::Watchdog dog(10s, "a second thread taking a disabled lock");
  InterpreterLockOptions o;
  o.enabled = false;
  InterpreterLock lock(o);
  CHECK(lock.acquire() == 0);
  std::int64_t other_waited = -1;
  std::thread other([&] {
    other_waited = lock.acquire();
    lock.release();
  });
  other.join();
  CHECK(other_waited == 0);
  lock.release();
  CHECK(lock.counters().acquisitions == 0);
}

TEST_CASE("interpreter lock: a waiter gets it within about one switch interval from a holder that reaches checkpoints",
          "[interpreter_lock][ch04]") {
  handoff::testkit::Watchdog dog(20s, "a waiter asking a busy holder to drop");
  constexpr auto kInterval = 5ms;
  InterpreterLock lock(with_interval(kInterval));
  std::atomic<bool> holding{false}, stop{false};
  std::thread holder([&] {
    lock.acquire();
    holding.store(true, std::memory_order_release);         // release: pairs with the waiter's acquire load
    const std::int64_t give_up = now_ns() + 2'000'000'000;  // without drop requests: 2 s
    while (!stop.load(std::memory_order_acquire) && now_ns() < give_up) work_with_checkpoints(lock, 10'000);
    lock.release();
  });
  while (!holding.load(std::memory_order_acquire)) std::this_thread::yield();
  const std::int64_t start = now_ns();
  const std::int64_t waited = lock.acquire();
  const std::int64_t took = now_ns() - start;
  stop.store(true, std::memory_order_release);  // release: pairs with the holder's acquire load
  lock.release();
  holder.join();
  INFO("waited " << waited / 1000 << " us for the lock");
  // It cannot come sooner than one interval: the holder never lets go unasked.
  CHECK(waited >= std::chrono::nanoseconds(kInterval).count());
  // Liveness, not performance: three intervals and a loaded machine's slack.
  CHECK(took < std::chrono::nanoseconds(3 * kInterval + 200ms).count());
  const auto c = lock.counters();
  CHECK(c.drop_requests >= 1);
  CHECK(c.forced_switches >= 1);
}

namespace {

/// A holder that reaches checkpoints and a waiter that takes the lock `takes` times, pausing
/// between takes. For each drop the holder made at a checkpoint: did the waiter take the lock
/// before the holder had it back? Ends when `enough` says so or after `max_drops` drops.
struct DropRecord {
  int drops = 0;
  int retaken_first = 0;  // drops after which the holder had the lock back before the waiter took it
};

template <class Enough>
DropRecord drops_and_switches(InterpreterLock& lock, int max_drops, Enough enough) {
  std::atomic<std::uint64_t> waiter_takes{0};
  std::atomic<bool> stop{false}, holding{false};
  std::thread waiter([&] {
    while (!holding.load(std::memory_order_acquire)) std::this_thread::yield();  // pairs with the store below
    while (!stop.load(std::memory_order_acquire)) {  // acquire: pairs with the holder's release store
      lock.acquire();
      // relaxed: the lock's mutex orders it before the holder's read after its re-take.
      waiter_takes.fetch_add(1, std::memory_order_relaxed);
      lock.release();
      std::this_thread::sleep_for(200us);
    }
  });
  DropRecord r;
  lock.acquire();
  holding.store(true, std::memory_order_release);  // release: the waiter starts once we hold it
  std::uint64_t before = waiter_takes.load(std::memory_order_relaxed);
  while (r.drops < max_drops && !enough(r)) {
    if (lock.checkpoint()) {
      ++r.drops;
      const std::uint64_t after = waiter_takes.load(std::memory_order_relaxed);  // relaxed: see above
      if (after == before) ++r.retaken_first;
      before = after;
    }
  }
  stop.store(true, std::memory_order_release);  // release: pairs with the waiter's acquire load
  lock.release();
  waiter.join();
  return r;
}

}  // namespace

TEST_CASE("interpreter lock: after a requested drop the dropping thread never takes it back before the waiter",
          "[interpreter_lock][ch04]") {
  // 300 drops: without forced switching about one in 40 is re-taken first here (see the
  // negative control below), so this many would show it with near certainty.
  handoff::testkit::Watchdog dog(30s, "300 forced switches");
  InterpreterLock lock(with_interval(1ms));
  const DropRecord r = drops_and_switches(lock, 300, [](const DropRecord&) { return false; });
  CHECK(r.drops == 300);
  CHECK(r.retaken_first == 0);
  CHECK(lock.counters().forced_switches >= 300);
}

TEST_CASE("interpreter lock: without forced switching the dropping thread takes it straight back",
          "[interpreter_lock][ch04]") {
  // Negative control. Whether the dropper's immediate re-take beats the waiter it signalled
  // is the kernel's choice (the waiter must be woken from its futex; the dropper is already
  // running; here the waiter usually wins the race for the lock's mutex), so this cannot be
  // forced from inside the lock: the test asks for one re-take in up to 2,000 drops. On the
  // book's two-core machine about one drop in 40 showed it (the first re-take came after 1
  // to 171 drops in 20 runs), each drop costing an interval of 1 ms and a little more.
  handoff::testkit::Watchdog dog(30s, "a re-take without forced switching");
  InterpreterLock lock(with_interval(1ms, /*forced=*/false));
  const DropRecord r = drops_and_switches(lock, 2000, [](const DropRecord& d) { return d.retaken_first > 0; });
  INFO(r.drops << " drops, " << r.retaken_first << " re-taken first");
  CHECK(r.retaken_first >= 1);
  CHECK(lock.counters().forced_switches == 0);
}

TEST_CASE("interpreter lock: a holder that never reaches a checkpoint keeps it however often it is asked",
          "[interpreter_lock][ch04]") {
  // CPython's documented behaviour: the switch interval is a request, honoured only at the
  // eval breaker; a long C call (here, a sleep without a checkpoint) keeps the GIL.
  handoff::testkit::Watchdog dog(20s, "a waiter behind a holder that never checks");
  InterpreterLock lock(with_interval(5ms));
  std::atomic<bool> holding{false};
  std::atomic<std::int64_t> released_at{0};
  std::atomic<bool> asked{false};
  std::thread holder([&] {
    lock.acquire();
    holding.store(true, std::memory_order_release);  // release: pairs with the waiter's acquire load
    const std::int64_t end = now_ns() + 100'000'000;
    while (now_ns() < end) {
      if (lock.drop_requested()) asked.store(true, std::memory_order_relaxed);  // relaxed: read after join
      std::this_thread::sleep_for(1ms);
    }
    released_at.store(now_ns(), std::memory_order_relaxed);  // relaxed: the lock's mutex orders it
    lock.release();
  });
  while (!holding.load(std::memory_order_acquire)) std::this_thread::yield();
  lock.acquire();
  const std::int64_t got_at = now_ns();
  lock.release();
  holder.join();
  CHECK(got_at >= released_at.load());
  CHECK(asked.load());
  CHECK(lock.counters().drop_requests >= 5);  // asked again every interval, ~19 times in 100 ms
}

TEST_CASE("interpreter lock: a thread in a blocking call lets another take it", "[interpreter_lock][ch04]") {
  handoff::testkit::Watchdog dog(20s, "a take beside a blocking call");
  InterpreterLock lock(with_interval(5ms));
  std::atomic<bool> other_done{false};
  lock.acquire();
  std::thread other;
  const bool seen = lock.release_for_io([&] {
    other = std::thread([&] {
      lock.acquire();
      other_done.store(true, std::memory_order_release);  // release: pairs with the blocked thread's load
      lock.release();
    });
    const std::int64_t give_up = now_ns() + 2'000'000'000;
    while (!other_done.load(std::memory_order_acquire) && now_ns() < give_up) std::this_thread::sleep_for(100us);
    return other_done.load(std::memory_order_acquire);
  });
  CHECK(lock.held_by_me());
  lock.release();
  other.join();
  CHECK(seen);
}

TEST_CASE("interpreter lock: a release by a thread that does not hold it is refused", "[interpreter_lock][ch04]") {
  handoff::testkit::Watchdog dog(10s, "a wrongful release");
  InterpreterLock lock;
  CHECK_THROWS_AS(lock.release(), std::logic_error);
  lock.acquire();
  bool refused = false;
  std::thread other([&] {
    try {
      lock.release();
    } catch (const std::logic_error&) {
      refused = true;
    }
  });
  other.join();
  CHECK(refused);
  lock.release();
}
