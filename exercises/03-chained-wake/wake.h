// exercises/03-chained-wake: the lane's shared wake, an eventfd in semaphore mode (chapter 03).
// Role: the system calls of a park, a poke and an awake taker's look at the socket, behind
// three functions, so that the lane's protocol (lane.cpp and your pass_wake_on.cpp) compiles
// unchanged in the grader's model, where the wake is a counted semaphore
// (model/lane_model.cpp).
#pragma once

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

#include "net/fd.h"

namespace exercise {

/// An eventfd in semaphore mode: one read takes one poke, as one recv takes one datagram.
class SemaphoreWake {
 public:
  SemaphoreWake() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE)) {}
  /// One poke into the socket.
  void poke() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_.get(), &one, sizeof one);
  }
  /// Without blocking: take one poke if one is there.
  bool try_take() {
    std::uint64_t n;
    return ::read(fd_.get(), &n, sizeof n) == static_cast<ssize_t>(sizeof n);
  }
  /// Block until a poke is there, for at most `limit`, and take one. False when the limit
  /// passed, or a sibling took the poke first.
  bool wait(std::chrono::milliseconds limit) {
    pollfd p{fd_.get(), POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(limit.count())) > 0 && try_take();
  }

 private:
  handoff::net::Fd fd_;
};

}  // namespace exercise
