// peers/loops/loop_peer: what the C++ loop peers share: the five workloads' names and counts,
// the measured span, the JSON report and its judge (chapter 04).
// Role: one definition of the workloads' shape (README.md beside this file says it in words;
// loop_peer.py is its Python twin), so that the libuv and Boost.Asio programs differ only in
// how each workload is written for their loop.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "config/command_line.h"

namespace CLI {
class App;
}

namespace handoff::peers {

/// The five workloads, in the order every program runs them.
enum class Workload { call_soon_chain, threadsafe_ping_pong, cancelled_timer, executor_round_trip, tcp_echo };

/// Operations per round of a workload, from --ops N: N for the chain and the timers, N / 10
/// (at least 1) for the three that cross a thread or a socket.
int ops_for(Workload w, int ops);

/// CPU and wall seconds of one measured section, and how often a thread slept in it. CPU is
/// the whole process's (CLOCK_PROCESS_CPUTIME_ID: every thread, the loop's, the poster's,
/// the pool's); sleeps are the process's voluntary context switches (RUSAGE_SELF ru_nvcsw,
/// every thread).
struct Span {
  double cpu_s = 0;
  double wall_s = 0;
  long sleeps = 0;
};

/// Starts at construction; stop() returns the span since.
class Stopwatch {
 public:
  Stopwatch();
  Span stop() const;

 private:
  double cpu0_, wall0_;
  long sleeps0_;
};

/// Voluntary context switches of the calling thread so far (RUSAGE_THREAD ru_nvcsw): each
/// time it slept in the kernel.
long thread_sleeps();

/// The ping-pong's poster thread (workload 2), as --pin asked: call first thing on that
/// thread. It pins the thread to the second CPU of --pin (the loop's thread is on the first
/// for the ping-pong's span, and only then); without --pin it does nothing.
void pin_poster();

/// The ping-pong's round trips, timed one by one on the poster's thread: start() before a
/// post, stop() once the semaphore is back. The report gives their wall-time percentiles.
class TripClock {
 public:
  void start() noexcept;
  void stop();
};
/// The clock of the round running now (the programs' ping_pong functions time their trips
/// on it; peer_main reads it after each measured round).
TripClock& trips();

/// One program: its tool name, its loop's name, one round of a workload with `ops`
/// operations (the measured span), and the wake check (README.md): the loop thread's sleeps
/// over a run with 100 cancelled timers 20 ms out and one live timer 60 ms out.
/// `not_supported` lists the workloads it does not run, each with the reason its report
/// gives in their place (a result with "not_supported" and no figures).
struct Peer {
  const char* tool;
  const char* loop;
  std::function<Span(Workload, int ops)> run;
  std::function<long()> wake_check;
  std::vector<std::pair<Workload, const char*>> not_supported = {};
};

/// The program's main: --ops N --rounds R [--json PATH], or --check PATH. `own_flags`, when
/// given, adds the program's own flags to the parser; their callbacks may change `peer`
/// (its loop's name, say) before anything runs.
int peer_main(int argc, char** argv, Peer peer,
              const std::function<void(handoff::config::CommandLine&, Peer&)>& own_flags = {});

}  // namespace handoff::peers
