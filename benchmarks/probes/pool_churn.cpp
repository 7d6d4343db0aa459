// probes/pool_churn: seed 003's pool churn, reproduced against a real PostgreSQL: how a loop's
// turn shape and wake spin, with and without a model of the GIL, decide how many connections
// a small pool closes and opens again (chapter 04, seed 003).
// Role: the chapter's pool-churn record. Seed 003's own repro (its perf/bench/pool_churn.py):
// a SQLAlchemy async engine (QueuePool, pool_size 4, max_overflow 2) on one loop, 8 driver
// threads posting requests through call_soon_threadsafe as Granian does, 2 queries per
// request; it counted new Postgres sessions per 1k requests. This probe is that shape on our
// parts: one evloop::EventLoop, one upstream::QueuePool<PgConnection> (4 + 2), libpq's
// asynchronous API, a throwaway cluster from pg_virtualenv whose every new session is a SCRAM
// login over TCP.
//
// The shape. Each of --drivers threads runs a closed loop: interpreted work (--work-us, in
// 1 µs units with a checkpoint after each, as gil_spin's handlers do), then, STILL HOLDING the
// lock model (sync::InterpreterLock), a post: EventLoop::call_soon_threadsafe of a request,
// which pushes it and flips the loop's wake flag (a poke if the loop announced its wait) while
// the driver holds the lock; then more interpreted work (--after-post-us), and only then the
// lock released around a blocking wait for the request's reply (release_for_io). On the loop,
// a request runs as db_route's two_queries does: check out a connection from the pool, run
// `SELECT 1` twice on it, check it in, reply to its driver (each of those three steps with
// --callback-us of interpreted work). The loop thread holds the lock while it runs callbacks
// and drops it around every poll of the reactor (before_poll / after_poll hooks: the wake spin
// runs inside that window too, so a spinning loop has dropped the lock, as seed 003's did),
// taking it back after the poll: that take is the "loop lock wait" below.
//
// Arms: the turn shape (drain: seed 003's before, run to quiescence, poll after; generation:
// asyncio's _run_once), the wake spin (0 or 50 µs; the spin never yields the core) and the
// lock model (on, or a no-op), 8 arms by default (--turn, --spin-us, --lock select a subset).
// Per round every arm runs once, the order reversed every other round; each run is a fresh
// loop, pool and lock, a warm-up (--warmup-ms, which also fills the pool), then --seconds
// measured. Per arm, over rounds (median, min, max): requests per second; the loop thread's
// CPU µs per request (its own thread CPU clock: the loop's share of each login's SCRAM work
// is in it); new PostgreSQL sessions per 1k requests, read from pg_stat_database.sessions of
// the pool's own database before and after the measured window through a separate blocking
// libpq connection (the monitor), which is connected to a different database (PGDATABASE),
// so its own session is never in the count and nothing needs subtracting; the pool's own
// counts per 1k (opened, closed on check-in because the idle queue was full, waits, check-ins
// past pool_size in their turn). Pooled over rounds: completions per turn (requests that
// finished in a turn, over the turns that finished any: mean, p50, p99, max) and the loop's
// waits for the lock (every take after a poll and every re-take at a checkpoint: p50, p99,
// max; all 0 in the no-lock arms).
//
// Where this model and seed 003 differ (the report's list; say it with the figures):
//  - The seed's loop is rsloop behind Granian, its pool SQLAlchemy's AsyncAdaptedQueuePool
//    over asyncpg, its "GIL" CPython's. Here the loop is evloop::EventLoop, the pool
//    upstream::QueuePool (SQLAlchemy's rules, with the differences queue_pool.h lists: a
//    woken waiter's connection is reserved for it), the driver libpq, the GIL a model
//    (sync/interpreter_lock.h) and Python's work busy-waiting on the monotonic clock, so a
//    preempted thread's wall time counts as work.
//  - The seed's drivers are Granian's I/O threads, which also read and write HTTP; here they
//    only post and wait. There is no HTTP, no ORM and no result decoding on the loop.
//  - Seed 003's drain refilled every 64 callbacks up to 1024 per turn, as this loop's drain
//    shape does (kDrainBatch, kDrainCap). The seed's fix also made the turn's poll run with
//    the GIL released "as uvloop's does", which suggests its before did not always; here
//    every poll drops the lock model in both shapes (the hooks cannot tell them apart), so if
//    the seed's drain paid for back-to-back turns holding the GIL, the drain arms here do not.
//  - The seed's rsloop spin and its park: rsloop's wake path (a waiting flag, an interrupt)
//    is not ours (reactor::WakeFlag over an eventfd, epoll); the spin's exact form (pause, yield,
//    clock checks) is not in the seed; ours pauses for the whole budget without yielding.
//  - The database: the seed's Postgres ran in Docker beside the service and counted logins of
//    a real application user; here a throwaway cluster on this machine, on the same CPUs as
//    the probe (on a 2-core machine the backends, the drivers and the loop share two cores),
//    threads unpinned. The seed measured in Docker with --cpus 1 or 2 (a CPU quota).
//  - Boundaries: sessions are read just outside the loop's own snapshot of the window, and a
//    login that straddles a boundary can land on either side; pool_opened_per_1k (the pool's
//    count, taken inside the loop's window) and new_sessions_per_1k (the server's) can differ
//    by a session or two per window for that reason.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config/command_line.h"

#include "evloop/event_loop.h"
#include "interpreter_model.h"
#include "probe_main.h"
#include "probe_report.h"
#include "stats/thread_cpu.h"
#include "sync/interpreter_lock.h"
#include "sync/spin_wait.h"
#include "testkit/pg_monitor.h"
#include "upstream/pg_connection.h"
#include "upstream/queue_pool.h"

namespace handoff::bench {
namespace {

using Json = handoff::probes::Json;
using handoff::probes::interpreted;
using handoff::probes::per;
using handoff::probes::Reply;
using Pool = upstream::QueuePool<upstream::PgConnection>;

constexpr const char* kTool = "pool-churn";

struct Settings {
  unsigned drivers = 8;  // seed 003's repro: 8 driver threads
  std::size_t pool_size = 4;
  std::size_t max_overflow = 2;
  double seconds = 1.0;
  unsigned warmup_ms = 300;
  unsigned rounds = 3;
  handoff::probes::InterpretedWork work{10, 10, 5};  // --work-us, --after-post-us, --callback-us
  handoff::probes::LockArms lock_arms;               // --spin-us, --lock, --switch-interval-us
  std::string pg = "hostaddr=127.0.0.1";
  std::string database = "handoff_churn";
};

struct Arm {
  evloop::TurnShape turn;
  unsigned spin_us;
  bool lock;
  std::string turn_name() const { return turn == evloop::TurnShape::drain ? "drain" : "generation"; }
  std::string name() const { return turn_name() + "/spin" + std::to_string(spin_us) + (lock ? "/lock" : "/no-lock"); }
};

/// What the loop thread read at one edge of the measured window (loop thread's values).
struct Snapshot {
  std::int64_t mono_ns = 0;
  std::int64_t cpu_ns = 0;
  std::uint64_t requests = 0, errors = 0;
  upstream::QueuePoolCounts pool;
  evloop::EventLoopCounts loop;
};

/// One run of one arm: what was measured in its window.
struct RunResult {
  double wall_s = 0;
  std::uint64_t requests = 0, errors = 0;
  std::int64_t loop_cpu_ns = 0;
  long sessions = 0;  // pg_stat_database.sessions, after - before
  std::uint64_t opened = 0, closed_on_checkin = 0, waits = 0, burst_checkins = 0, burst_max = 0;
  std::uint64_t spin_catches = 0, blocking_waits = 0, turns = 0;
  std::vector<std::uint32_t> per_turn;   // requests finished per turn (turns that finished any)
  std::vector<std::int64_t> loop_waits;  // ns, every take of the lock the loop made
  std::string first_error;
};

/// One arm's loop, pool, lock and drivers for one run. Members marked "loop" are touched by
/// the loop thread only.
class ChurnRun final : public evloop::PollHooks {
 public:
  ChurnRun(const Settings& s, const Arm& arm)
      : s_(s),
        arm_(arm),
        lock_(handoff::probes::lock_options(s.lock_arms, arm.lock)),
        loop_(loop_options(arm)),
        pool_(
            loop_, [this](Pool::Served done) { upstream::PgConnection::connect(loop_, conninfo_, std::move(done)); },
            pool_options(s)),
        conninfo_(s.pg + " application_name=handoff-churn dbname=" + s.database),
        replies_(s.drivers),
        drivers_left_(s.drivers) {}

  ~ChurnRun() = default;

  RunResult run(testkit::PgMonitor& monitor) {
    std::thread loop_thread([this] { loop_main(); });
    std::vector<std::thread> drivers;
    for (std::uint32_t i = 0; i < s_.drivers; ++i) drivers.emplace_back([this, i] { driver(i); });

    RunResult r;
    std::exception_ptr failed;
    try {
      std::this_thread::sleep_for(std::chrono::milliseconds(s_.warmup_ms));
      const long sessions0 = sessions(monitor);
      const Snapshot a = snapshot(true);
      std::this_thread::sleep_for(std::chrono::duration<double>(s_.seconds));
      const Snapshot b = snapshot(false);
      const long sessions1 = sessions(monitor);
      r.wall_s = static_cast<double>(b.mono_ns - a.mono_ns) / 1e9;
      r.requests = b.requests - a.requests;
      r.errors = b.errors - a.errors;
      r.loop_cpu_ns = b.cpu_ns - a.cpu_ns;
      r.sessions = sessions1 - sessions0;
      r.opened = b.pool.opened - a.pool.opened;
      r.closed_on_checkin = b.pool.closed_on_checkin - a.pool.closed_on_checkin;
      r.waits = b.pool.waits - a.pool.waits;
      r.burst_checkins = b.pool.burst_checkins - a.pool.burst_checkins;
      r.burst_max = b.pool.burst_max;  // the longest burst of the run, warm-up included
      r.spin_catches = b.loop.spin_catches - a.loop.spin_catches;
      r.blocking_waits = b.loop.blocking_waits - a.loop.blocking_waits;
      r.turns = b.loop.turns - a.loop.turns;
    } catch (...) {
      failed = std::current_exception();
    }
    stop_.store(true, std::memory_order_relaxed);  // relaxed: each driver reads it after its next reply
    for (auto& d : drivers) d.join();
    loop_thread.join();
    if (loop_error_) std::rethrow_exception(loop_error_);
    if (failed) std::rethrow_exception(failed);
    r.per_turn = std::move(per_turn_);
    r.loop_waits = std::move(loop_waits_);
    r.first_error = first_error_;
    return r;
  }

 private:
  static evloop::EventLoopOptions loop_options(const Arm& arm) {
    evloop::EventLoopOptions o;
    o.turn = arm.turn;
    const std::int64_t ns = std::int64_t{arm.spin_us} * 1000;
    o.wake_spin = sync::SpinPolicy{ns, ns};  // never yields: the spin pauses the whole budget
    return o;
  }
  static upstream::QueuePoolOptions pool_options(const Settings& s) {
    upstream::QueuePoolOptions o;
    o.pool_size = s.pool_size;
    o.max_overflow = s.max_overflow;
    return o;
  }

  // The loop drops the lock around every poll (and the wake spin inside it) and takes it
  // back after: asyncio on uvloop polls with the GIL released.
  int before_poll() override {
    lock_.release();
    return -1;
  }
  void after_poll(int) override {
    const std::int64_t waited = lock_.acquire();
    if (measuring_) loop_waits_.push_back(waited);
  }

  void loop_main() {
    stats::name_this_thread("loop");
    lock_.acquire();
    loop_.set_poll_hooks(this);
    try {
      loop_.run_forever();  // until the last driver's goodbye calls stop()
    } catch (...) {
      loop_error_ = std::current_exception();
      // Release every driver: each sees stop_ after a bump and leaves. A driver may still post
      // one request nobody will run, so the bumps go on until every driver has left.
      stop_.store(true, std::memory_order_relaxed);  // relaxed: read after a bump below
      // acquire: pairs with the driver's release decrement as it leaves (nothing is read after
      // it but the count; acquire keeps the loop from passing it early).
      while (drivers_left_.load(std::memory_order_acquire) > 0) {
        for (Reply& reply : replies_) {
          reply.seq.fetch_add(1, std::memory_order_release);  // release: pairs with the driver's acquire load
          reply.seq.notify_one();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    loop_.set_poll_hooks(nullptr);
    lock_.release();
  }

  void driver(std::uint32_t me) {
    stats::name_this_thread(("driver-" + std::to_string(me)).c_str());
    lock_.acquire();
    // acquire (here and below): pairs with the loop's release bump after it answered us.
    std::uint32_t seen = replies_[me].seq.load(std::memory_order_acquire);
    while (!stop_.load(std::memory_order_relaxed)) {  // relaxed: a stale false costs one more request
      interpreted(lock_, std::int64_t{s_.work.work_us} * 1000, nullptr);
      // The post, lock held: the push and the wake flag's poke (EventLoop's fences) happen
      // while this thread still holds the lock the loop needs to run the request.
      loop_.call_soon_threadsafe([this, me] { start(me); });
      interpreted(lock_, std::int64_t{s_.work.after_post_us} * 1000, nullptr);
      lock_.release_for_io([&] {
        while (replies_[me].seq.load(std::memory_order_acquire) == seen) {
          replies_[me].seq.wait(seen, std::memory_order_acquire);
        }
      });
      seen = replies_[me].seq.load(std::memory_order_acquire);
    }
    lock_.release();
    // The loop counts this on its own thread and stops when every driver has left: each left
    // only after its last request was answered, so no request is still in flight. stop(), not
    // a run_until test: a drain turn polls after its callbacks, and that poll would block.
    loop_.call_soon_threadsafe([this] {
      if (++exited_ == s_.drivers) loop_.stop();
    });
    drivers_left_.fetch_sub(1, std::memory_order_release);  // release: pairs with loop_main's acquire load (error path)
  }

  void work_on_loop() {
    interpreted(lock_, std::int64_t{s_.work.callback_us} * 1000, measuring_ ? &loop_waits_ : nullptr);
  }

  // db_route's two_queries as callbacks: check out, SELECT 1 twice on one connection, check
  // in, answer. A request holds its connection in a shared state its callbacks share.
  struct Request {
    std::uint32_t who = 0;
    Pool::ConnPtr conn;
  };

  void start(std::uint32_t who) {
    work_on_loop();
    auto req = std::make_shared<Request>();
    req->who = who;
    pool_.checkout([this, req](Pool::ConnPtr c, const std::string& error) {
      if (!c) {
        finish(*req, "checkout: " + error);
        return;
      }
      req->conn = std::move(c);
      req->conn->query("SELECT 1", {}, [this, req](const upstream::PgResult& one) {
        work_on_loop();
        if (!one.ok()) {
          pool_.checkin(std::move(req->conn));
          finish(*req, "first query: " + one.error);
          return;
        }
        req->conn->query("SELECT 1", {}, [this, req](const upstream::PgResult& two) {
          work_on_loop();
          pool_.checkin(std::move(req->conn));
          finish(*req, two.ok() ? std::string() : "second query: " + two.error);
        });
      });
    });
  }

  void finish(const Request& req, const std::string& error) {
    ++requests_;
    if (!error.empty()) {
      ++errors_;
      if (first_error_.empty()) first_error_ = error;
    }
    if (measuring_) {
      const std::uint64_t turn = loop_.counts().turns;
      if (turn != turn_) {
        if (turn_count_ > 0) per_turn_.push_back(turn_count_);
        turn_ = turn;
        turn_count_ = 0;
      }
      ++turn_count_;
    }
    replies_[req.who].seq.fetch_add(1, std::memory_order_release);  // release: pairs with the driver's acquire load
    replies_[req.who].seq.notify_one();
  }

  /// The loop's values at one edge of the window, read on the loop thread (a callback posted
  /// from here); `begin` starts the window's per-turn and lock-wait records, !begin ends them.
  Snapshot snapshot(bool begin) {
    // Shared: a callback that runs after a timed-out wait below still has its promise.
    auto taken = std::make_shared<std::promise<Snapshot>>();
    std::future<Snapshot> got = taken->get_future();
    loop_.call_soon_threadsafe([this, begin, taken] {
      Snapshot s;
      s.mono_ns = stats::monotonic_ns();
      s.cpu_ns = stats::thread_cpu_ns();
      s.requests = requests_;
      s.errors = errors_;
      s.pool = pool_.counts();
      s.loop = loop_.counts();
      if (begin) {
        per_turn_.clear();
        loop_waits_.clear();
        turn_ = 0;
        turn_count_ = 0;
      } else if (turn_count_ > 0) {
        per_turn_.push_back(turn_count_);
      }
      measuring_ = begin;
      taken->set_value(s);
    });
    if (got.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      throw std::runtime_error("pool-churn: the loop did not answer a snapshot within 30 s (" + arm_.name() + ")");
    }
    return got.get();
  }

  long sessions(testkit::PgMonitor& monitor) const {
    return monitor.number("SELECT sessions FROM pg_stat_database WHERE datname = '" + s_.database + "'");
  }

  const Settings& s_;
  const Arm arm_;
  sync::InterpreterLock lock_;
  evloop::EventLoop loop_;
  Pool pool_;  // after loop_: destroyed first, its idle connections close while the loop lives
  std::string conninfo_;
  std::vector<Reply> replies_;
  std::atomic<bool> stop_{false};
  std::atomic<unsigned> drivers_left_;  // drivers still running; the loop waits on it only after an error
  std::exception_ptr loop_error_;       // loop thread; read after it is joined
  // loop thread:
  unsigned exited_ = 0;
  bool measuring_ = false;
  std::uint64_t requests_ = 0, errors_ = 0;
  std::uint64_t turn_ = 0, turn_count_ = 0;
  std::vector<std::uint32_t> per_turn_;
  std::vector<std::int64_t> loop_waits_;
  std::string first_error_;
};

struct Tally {
  handoff::probes::LoopTally loop;  // requests/s, loop CPU, lock waits, completions per turn
  std::vector<double> sessions_1k, opened_1k, closed_1k, waits_1k, burst_1k, catches, blocking;
  std::uint64_t requests = 0, errors = 0, turns = 0, burst_max = 0;
  long sessions = 0;
  std::uint64_t opened = 0, closed_on_checkin = 0;
  std::string first_error;
};

void add(Tally& t, const RunResult& r) {
  t.requests += r.requests;
  t.errors += r.errors;
  t.turns += r.turns;
  t.sessions += r.sessions;
  t.opened += r.opened;
  t.closed_on_checkin += r.closed_on_checkin;
  t.burst_max = std::max(t.burst_max, r.burst_max);
  if (t.first_error.empty()) t.first_error = r.first_error;
  t.loop.add(r.requests, r.wall_s, r.loop_cpu_ns, r.loop_waits, r.per_turn);
  t.sessions_1k.push_back(per(1000.0 * static_cast<double>(r.sessions), r.requests));
  t.opened_1k.push_back(per(1000.0 * static_cast<double>(r.opened), r.requests));
  t.closed_1k.push_back(per(1000.0 * static_cast<double>(r.closed_on_checkin), r.requests));
  t.waits_1k.push_back(per(1000.0 * static_cast<double>(r.waits), r.requests));
  t.burst_1k.push_back(per(1000.0 * static_cast<double>(r.burst_checkins), r.requests));
  t.catches.push_back(per(static_cast<double>(r.spin_catches), r.requests));
  t.blocking.push_back(per(static_cast<double>(r.blocking_waits), r.requests));
}

Json result_of(const Arm& arm, const Tally& t, unsigned rounds) {
  using handoff::probes::median_min_max;
  return Json{{"arm", arm.name()},
              {"turn", arm.turn_name()},
              {"spin_us", arm.spin_us},
              {"lock", arm.lock ? "on" : "off"},
              {"rounds", rounds},
              {"requests", t.requests},
              {"errors", t.errors},
              {"first_error", t.first_error},
              {"requests_per_s", median_min_max(t.loop.per_s)},
              {"loop_cpu_us_per_request", median_min_max(t.loop.cpu_us)},
              {"new_sessions_per_1k", median_min_max(t.sessions_1k)},
              {"pool_opened_per_1k", median_min_max(t.opened_1k)},
              {"pool_closed_on_checkin_per_1k", median_min_max(t.closed_1k)},
              {"pool_waits_per_1k", median_min_max(t.waits_1k)},
              {"burst_checkins_per_1k", median_min_max(t.burst_1k)},
              {"sessions", t.sessions},
              {"pool_opened", t.opened},
              {"pool_closed_on_checkin", t.closed_on_checkin},
              {"burst_max", t.burst_max},
              {"completions_per_turn", handoff::probes::per_turn(t.loop.per_turn)},
              {"loop_lock_wait_us", handoff::probes::lock_waits(t.loop.loop_wait_us)},
              {"spin_catches_per_request", median_min_max(t.catches)},
              {"blocking_waits_per_request", median_min_max(t.blocking)},
              {"per_round", t.loop.per_round}};
}

std::vector<Arm> all_arms(const std::vector<std::string>& turns, const std::vector<unsigned>& spins,
                          const std::vector<std::string>& locks) {
  std::vector<Arm> arms;
  for (const std::string& t : turns) {
    for (const unsigned spin : spins) {
      for (const std::string& l : locks) {
        arms.push_back(Arm{t == "drain" ? evloop::TurnShape::drain : evloop::TurnShape::generation, spin, l == "on"});
      }
    }
  }
  return arms;
}

// -------------------------------------------------------------------------------------
// --check FILE: the smoke test's judge. The shape (each of the eight arms once), every arm
// served requests without an error at a positive rate and loop CPU, every per-1k count is a
// number >= 0, and what a no-lock arm cannot have: a wait for the lock. Which arm churns
// more is reported, never asserted.
// -------------------------------------------------------------------------------------

void judge(const Json& doc, std::vector<std::string>& problems) {
  for (const Arm& arm : all_arms({"drain", "generation"}, {0, 50}, {"on", "off"})) {
    const std::string where = arm.name();
    const Json* one = handoff::probes::the_one(doc["results"], where, handoff::probes::named("arm", where), problems);
    if (one == nullptr) continue;
    const Json& r = *one;
    if (!r.contains("requests") || !r["requests"].is_number_unsigned() || r["requests"].get<std::uint64_t>() == 0) {
      problems.push_back(where + ": no requests");
    }
    if (!r.contains("errors") || !r["errors"].is_number_unsigned() || r["errors"].get<std::uint64_t>() != 0) {
      problems.push_back(where + ": requests failed (" + r.value("first_error", std::string("?")) + ")");
    }
    handoff::probes::positive_medians(r, where, {"requests_per_s", "loop_cpu_us_per_request"}, problems);
    for (const char* k : {"new_sessions_per_1k", "pool_opened_per_1k", "pool_closed_on_checkin_per_1k"}) {
      if (!r.contains(k) || !r[k].is_object() || !r[k].contains("min") || !r[k]["min"].is_number() ||
          r[k]["min"].get<double>() < 0) {
        problems.push_back(where + ": " + k + " is not a count >= 0 in every round");
      }
    }
    handoff::probes::judge_loop_distributions(r, where, arm.lock, problems);
    if (r.contains("completions_per_turn") && r["completions_per_turn"].is_object() &&
        !(r["completions_per_turn"].value("mean", 0.0) > 0)) {
      problems.push_back(where + ": completions_per_turn.mean is not a positive number");
    }
  }
}

void print_table(const Json& doc) {
  handoff::probes::print_columns(doc, 24,
                                 {{"req/s", 8, 0, "requests_per_s", "median"},
                                  {"loopCPUus", 9, 2, "loop_cpu_us_per_request", "median"},
                                  {"sess/1k", 9, 2, "new_sessions_per_1k", "median"},
                                  {"open/1k", 9, 2, "pool_opened_per_1k", "median"},
                                  {"close/1k", 9, 2, "pool_closed_on_checkin_per_1k", "median"},
                                  {"per turn", 9, 2, "completions_per_turn", "mean"},
                                  {"p99", 7, 0, "completions_per_turn", "p99"},
                                  {"wait p99", 9, 1, "loop_lock_wait_us", "p99"},
                                  {"wait max", 9, 1, "loop_lock_wait_us", "max"}});
}

int run(int argc, char** argv) {
  handoff::probes::ProbeMain probe{
      kTool, "pool-churn: seed 003's pool churn (4 + 2 connections, 8 drivers) against a real PostgreSQL"};
  handoff::config::CommandLine& cli = probe.cli();
  Settings s;
  std::vector<std::string> turns{"drain", "generation"};
  cli.add_option("--drivers", s.drivers, "Driver threads (requests in flight)")->range(1u, 64u);
  cli.add_option("--pool-size", s.pool_size, "The pool's idle queue (SQLAlchemy pool_size)")->range(1, 64);
  cli.add_option("--max-overflow", s.max_overflow, "Connections beyond --pool-size (SQLAlchemy max_overflow)")
      ->range(0, 64);
  cli.add_option("--seconds", s.seconds, "Measured seconds per arm per round (after the warm-up)")->range(0.05, 600.0);
  cli.add_option("--warmup-ms", s.warmup_ms, "Warm-up per run before the measured window (fills the pool)")
      ->range(10u, 60'000u);
  cli.add_option("--rounds", s.rounds, "Rounds; arms alternate within each, reversed every other round")
      ->range(1u, 1000u);
  handoff::probes::add_interpreted_work_flags(cli, s.work, "driver", 0,
                                              "at each of a request's three steps (start, after each query)");
  handoff::probes::add_lock_arm_flags(cli, s.lock_arms);
  cli.add_option("--turn", turns, "Turn shapes to run (default drain,generation)")
      ->one_of({"drain", "generation"})
      ->delimiter(',');
  cli.add_option("--pg", s.pg,
                 "libpq conninfo of the server, by address (the rest from the PG* variables pg_virtualenv sets)")
      ->show_default();
  cli.add_option("--database", s.database,
                 "The pool's database, created afresh (must not be the monitor's, PGDATABASE)")
      ->show_default();
  probe.add_report_flags("the eight arms once, each with requests and no errors");
  if (const auto status =
          probe.parse(argc, argv, true, "lists the eight arms, each served requests without an error", judge))
    return *status;

  const std::vector<Arm> arms = all_arms(turns, s.lock_arms.spins, s.lock_arms.locks);
  std::vector<Tally> tallies(arms.size());
  std::string server_version;
  try {
    testkit::PgMonitor monitor(s.pg + " application_name=handoff-churn-monitor");
    if (monitor.value("SELECT current_database()") == s.database) {
      std::fprintf(stderr, "pool-churn: --database %s is the monitor's own database (PGDATABASE); pick another\n",
                   s.database.c_str());
      return 2;
    }
    server_version = monitor.value("SHOW server_version");
    monitor.fresh_database(s.database);
    handoff::probes::alternate_arms(s.rounds, arms.size(), [&](unsigned round, std::size_t k) {
      RunResult r;
      {
        ChurnRun churn(s, arms[k]);
        r = churn.run(monitor);
      }
      add(tallies[k], r);
      char churn[96];
      std::snprintf(churn, sizeof churn, ", %6.2f new sessions/1k (pool opened %6.2f)", tallies[k].sessions_1k.back(),
                    tallies[k].opened_1k.back());
      handoff::probes::say_round(round, s.rounds, arms[k].name(), "req", tallies[k].loop,
                                 churn + (r.errors > 0 ? ", ERRORS: " + r.first_error : std::string()));
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pool-churn: %s\n", e.what());
    return 1;
  }
  Json results = Json::array();
  for (std::size_t k = 0; k < arms.size(); ++k) results.push_back(result_of(arms[k], tallies[k], s.rounds));
  Json settings{{"drivers", s.drivers}, {"pool_size", s.pool_size}, {"max_overflow", s.max_overflow},
                {"seconds", s.seconds}, {"warmup_ms", s.warmup_ms}, {"rounds", s.rounds}};
  settings.update(handoff::probes::interpreted_work_settings(s.work));
  settings.update(handoff::probes::lock_arms_settings(s.lock_arms));
  settings.update(Json{{"turn", turns}, {"queries", "SELECT 1, twice per request"}, {"postgres", server_version}});
  return probe.report(Json{{"settings", std::move(settings)}, {"results", std::move(results)}}, print_table);
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
