// server/socket_inbox: the sockets other threads hand a worker, until its loop takes them (chapter 05).
// Role: the receiving end of the pool topology's hand-off (server/acceptor deals the sockets):
// any thread puts a socket in under a mutex, and the worker's loop takes the lot in one
// callback posted with call_soon_threadsafe; once the loop has finished, a socket handed in
// is closed at once, so a socket in flight to a stopping worker is closed, never leaked.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "evloop/event_loop.h"
#include "net/fd.h"
#include "stats/thread_stats.h"

namespace handoff::server {

/// A mutex-guarded inbox of accepted sockets, taken by one event loop.
///
/// Guarantee: every socket put in is either given to `take_one` on the loop thread or closed
/// (and counted as handins_closed), exactly once. Cost per socket: one lock; per batch that
/// finds the inbox empty, one call_soon_threadsafe (a take already posted takes the later
/// sockets too).
class SocketInbox {
 public:
  /// `loop` may be null (no event loop: every socket handed in is closed). `take_one` runs
  /// on the loop thread, once per socket taken. `stats` is the loop's; any thread bumps its
  /// handins_closed (a relaxed counter).
  SocketInbox(evloop::EventLoop* loop, stats::ThreadStats& stats, std::function<void(net::Fd)> take_one);
  SocketInbox(const SocketInbox&) = delete;
  SocketInbox& operator=(const SocketInbox&) = delete;

  /// Any thread: put `fd` in, or close it if the inbox is closed or there is no loop. The
  /// loop outlives every caller (the Server joins the acceptor's thread before it destroys
  /// any worker), and a post the loop never runs is destroyed with it.
  void hand_in(net::Fd fd);
  /// The loop thread, after its last turn: close what no turn will take, and every socket
  /// handed in from now on.
  void close();

 private:
  void take();

  evloop::EventLoop* loop_;
  stats::ThreadStats& stats_;
  std::function<void(net::Fd)> take_one_;
  std::mutex mu_;
  std::vector<net::Fd> fds_;  // guarded by mu_
  bool closed_ = false;       // guarded by mu_
};

}  // namespace handoff::server
