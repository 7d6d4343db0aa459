// exercises/01-predict-syscalls: what you predict one request costs each arm of stage 01.
#pragma once

#include <optional>

namespace exercise {

/// Counts per request, for `GET /` on one keep-alive connection, each request sent only
/// after the previous response arrived. The names are the counters of `/stats`; leave a
/// field empty (`{}`) until you have a number for it.
struct ArmPrediction {
  std::optional<double> loop_handoff_sends;  ///< loop thread: sends into a hand-off channel
  std::optional<double> loop_handoff_recvs;  ///< loop thread: receives from one (one that finds nothing counts)
  std::optional<double> pool_handoff_sends;  ///< every pool thread together: sends
  std::optional<double> pool_handoff_recvs;  ///< every pool thread together: receives
  std::optional<double> loop_waits;          ///< loop thread: epoll_wait calls allowed to block
};

struct Predictions {
  ArmPrediction inline_dispatch;  ///< `--dispatch inline`
  ArmPrediction pool_dispatch;    ///< `--dispatch pool --blocking-threads 2`
};

/// Your predictions (starter/predictions.cpp).
Predictions predictions();

}  // namespace exercise
