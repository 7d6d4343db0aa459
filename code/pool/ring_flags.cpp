// pool/ring_flags: the command-line switch between the datagram and the ring hand-off
// (chapter 02), and between the ring pools' wake policies (chapter 03).
// Changed in chapter 03: --pool-wake and --pool-age-us.
#include "pool/ring_flags.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "config/choice.h"
#include "config/bounds.h"
#include "pool/datagram_pool.h"
#include "pool/elastic_pool.h"

namespace handoff::pool {

namespace {
// A spin longer than this is a busy core, not a wait (chapter 02 measures up to 100 µs).
constexpr double kMaxSpinUs = 100'000;
}  // namespace

void add_ring_flags(CLI::App& app, RingChoice& c) {
  const std::map<std::string, bool> on_off{{"on", true}, {"off", false}};
  config::add_choice(app, "--pool-ring", c.ring, on_off,
                     "hand-off through rings (on) or datagram socketpairs (off)");
  app.add_option("--pool-spin-us", c.spin_us,
                 "how long an idle pool thread spins before parking")
      ->check(config::number_in(0, kMaxSpinUs))
      ->capture_default_str();
  app.add_option("--pool-yield-after-us", c.yield_after_us, "spin with pause, then with sched_yield after this")
      ->check(config::number_in(0, kMaxSpinUs))
      ->capture_default_str();
  app.add_option("--pool-dgram-poll-us", c.dgram_poll_us, "a busy pool thread looks for a pill this often")
      ->check(config::number_in(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--loop-spin-us", c.loop_spin_us,
                 "the loop spins this long for an answer in flight before it parks (0: off)")
      ->check(config::number_in(0, kMaxSpinUs))
      ->capture_default_str();
}

namespace {
// The wake policies --pool-wake accepts.
const std::vector<std::string> kWakePolicies{"shared", "chained", "elastic"};
}  // namespace

void add_wake_flag(CLI::App& app, RingChoice& c) {
  c.wake = "elastic";
  app.add_option("--pool-wake", c.wake,
                 "how the ring pool wakes its threads: shared (chapter 02's lane socket), chained (the same, and "
                 "a thread that pops and leaves work passes a wake on) or elastic (the four "
                 "rules, a wake channel per thread; it has no lane socket to poll and no loop spin, so "
                 "--pool-dgram-poll-us and --loop-spin-us do not apply)")
      ->check(CLI::IsMember(kWakePolicies))
      ->capture_default_str();
  app.add_option("--pool-age-us", c.age_us,
                 "elastic only: the loop wakes a parked thread when jobs have waited in a ring whose pops stood "
                 "still this long (rule 3, the age check); 0 switches rule 3 off")
      ->check(config::number_in(0, 10'000'000))
      ->capture_default_str();
}

PoolFactory ring_pool_factory(RingChoice c) {
  if (!c.ring) {
    return [](const PoolConfig& config) { return std::make_unique<DatagramPool>(config); };
  }
  if (c.wake == "elastic") {
    ElasticPoolOptions elastic;
    elastic.spin.spin_ns = static_cast<std::int64_t>(c.spin_us * 1000.0);
    elastic.spin.yield_after_ns = static_cast<std::int64_t>(c.yield_after_us * 1000.0);
    elastic.age_ns = static_cast<std::int64_t>(c.age_us * 1000.0);
    elastic.age_check = c.age_us > 0;
    return [elastic](const PoolConfig& config) { return std::make_unique<ElasticPool>(config, elastic); };
  }
  RingPoolOptions options;
  options.spin.spin_ns = static_cast<std::int64_t>(c.spin_us * 1000.0);
  options.spin.yield_after_ns = static_cast<std::int64_t>(c.yield_after_us * 1000.0);
  options.dgram_poll_ns = static_cast<std::int64_t>(c.dgram_poll_us * 1000.0);
  options.loop_spin.spin_ns = static_cast<std::int64_t>(c.loop_spin_us * 1000.0);
  options.loop_spin.yield_after_ns = options.loop_spin.spin_ns;  // a loop never yields its core
  if (c.wake == "chained") options.wake_policy = RingPoolOptions::WakePolicy::chained;
  return [options](const PoolConfig& config) { return std::make_unique<RingPool>(config, options); };
}

}  // namespace handoff::pool
