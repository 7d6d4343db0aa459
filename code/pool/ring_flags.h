// pool/ring_flags: the command-line switch between the datagram and the ring hand-off
// (chapter 02).
// Role: give every stage from 02 on the same `--pool-ring on|off` switch (environment
// override HANDOFF_POOL_RING, as the seed's M0_POOL_RING) and the spin knobs, so both arms
// of a measurement run from one binary in one session.
#pragma once

#include <CLI/CLI.hpp>

#include "pool/handler_pool.h"
#include "pool/ring_pool.h"

namespace handoff::pool {

struct RingChoice {
  bool ring = true;              ///< --pool-ring on (default) | off: chapter 01's datagram path
  double spin_us = 10.0;         ///< --pool-spin-us, env HANDOFF_POOL_SPIN_US
  double yield_after_us = 2.0;   ///< --pool-yield-after-us
  double dgram_poll_us = 100.0;  ///< --pool-dgram-poll-us
  double loop_spin_us = 0.0;     ///< --loop-spin-us, env HANDOFF_LOOP_SPIN_US (0: off)
};

/// Add --pool-ring, --pool-spin-us, --pool-yield-after-us, --pool-dgram-poll-us, --loop-spin-us.
void add_ring_flags(CLI::App& app, RingChoice& choice);

/// Apply the environment overrides (HANDOFF_POOL_RING, HANDOFF_POOL_SPIN_US,
/// HANDOFF_LOOP_SPIN_US) and return the
/// factory the server uses: a RingPool, or chapter 01's DatagramPool when the ring is off.
PoolFactory ring_pool_factory(RingChoice choice);

}  // namespace handoff::pool
