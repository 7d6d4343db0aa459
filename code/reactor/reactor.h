// reactor/reactor: an epoll readiness reactor (chapter 01).
// Role: wait for readiness on many descriptors and call the one handler registered for
// each, in the thread that owns the loop. It is the core of every event-loop thread.
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <vector>

#include "net/fd.h"

namespace handoff::reactor {

/// Something that wants to hear about readiness on a descriptor.
class IoHandler {
 public:
  virtual void on_io(std::uint32_t events) = 0;

 protected:
  ~IoHandler() = default;
};

/// A level-triggered epoll set. Not thread-safe: every call comes from the loop thread.
/// A handler may remove itself (or others) from within on_io: removals made while
/// dispatching a batch stop later events of that batch from reaching the removed handler.
class Reactor {
 public:
  Reactor();

  void add(int fd, std::uint32_t events, IoHandler* handler);
  void modify(int fd, std::uint32_t events, IoHandler* handler);
  void remove(int fd, IoHandler* handler);

  /// Wait up to `timeout_ms` (-1: for ever, 0: just look) and dispatch what is ready.
  /// Returns the number of events dispatched. EINTR counts as zero events.
  int poll(int timeout_ms);

 private:
  net::Fd epfd_;
  std::vector<epoll_event> events_;
  std::vector<IoHandler*> removed_;  // handlers removed during the current dispatch
  bool dispatching_ = false;
};

}  // namespace handoff::reactor
