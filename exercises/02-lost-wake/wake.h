// exercises/02-lost-wake: the lane's wake, an eventfd (chapter 02).
// Role: the system calls of a park and a poke, behind two functions, so that the lane's
// protocol (lane.cpp and your park.cpp) compiles unchanged in the grader's model, where the
// wake is a counter (model/lane_model.cpp).
#pragma once

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

#include "net/fd.h"

namespace exercise {

/// An eventfd: poke() adds one, wait() sleeps until it is non-zero and takes everything.
class EventfdWake {
 public:
  EventfdWake() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  /// Wake a taker blocked in wait(), or the next one to call it.
  void poke() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_.get(), &one, sizeof one);
  }
  /// Block until a poke comes, for at most `limit`. True when poked (the pokes are taken);
  /// false when the limit passed with none.
  bool wait(std::chrono::milliseconds limit) {
    pollfd p{fd_.get(), POLLIN, 0};
    const bool poked = ::poll(&p, 1, static_cast<int>(limit.count())) > 0;
    std::uint64_t n;
    [[maybe_unused]] auto r = ::read(fd_.get(), &n, sizeof n);
    return poked;
  }

 private:
  handoff::net::Fd fd_;
};

}  // namespace exercise
