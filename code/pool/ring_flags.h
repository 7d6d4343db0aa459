// pool/ring_flags: the command-line switch between the datagram and the ring hand-off
// (chapter 02), and between the ring pools' wake policies (chapter 03).
// Changed in chapter 03: --pool-wake and --pool-age-us.
// Role: give every stage from 02 on the same `--pool-ring on|off` switch (as the seed's
// M0_POOL_RING environment switch; a stage reads every setting from the environment too,
// HANDOFF_POOL_RING here: config/command_line) and the spin knobs, so both arms of a
// measurement run from one binary in one session.
#pragma once

#include <string>


#include "pool/handler_pool.h"
#include "pool/ring_pool.h"

namespace CLI {
class App;  // CLI11's parser; the flags' .cpp includes CLI11 itself
}

namespace handoff::pool {

/// The ring pool's command-line choices (--pool-*).
struct RingChoice {
  bool ring = true;              ///< --pool-ring on (default) | off: chapter 01's datagram path
  double spin_us = 10.0;         ///< --pool-spin-us
  double yield_after_us = 2.0;   ///< --pool-yield-after-us
  double dgram_poll_us = 100.0;  ///< --pool-dgram-poll-us
  double loop_spin_us = 0.0;     ///< --loop-spin-us (0: off)
  double age_us = 200.0;         ///< --pool-age-us (elastic only; 0: rule 3 off)
  /// --pool-wake (chapter 03): "shared" is chapter 02's RingPool as it ships, "chained" the
  /// same with the chained wake, "elastic" the ElasticPool. A stage without the flag keeps
  /// "shared".
  std::string wake = "shared";
};

/// Add --pool-ring, --pool-spin-us, --pool-yield-after-us, --pool-dgram-poll-us, --loop-spin-us.
void add_ring_flags(CLI::App& app, RingChoice& choice);

/// Add --pool-wake shared|chained|elastic (chapter 03; default elastic), which the ring pool the
/// factory builds follows.
void add_wake_flag(CLI::App& app, RingChoice& choice);

/// The factory the server uses: a RingPool or an ElasticPool by the wake policy, or chapter
/// 01's DatagramPool when the ring is off.
PoolFactory ring_pool_factory(RingChoice choice);

}  // namespace handoff::pool
