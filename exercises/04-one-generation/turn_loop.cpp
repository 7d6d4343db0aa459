// exercises/04-one-generation: the loop around the turn, given. Read it first.
#include <poll.h>

#include <cerrno>
#include <system_error>
#include <utility>
#include <vector>

#include "turn_loop.h"

namespace exercise {

TurnLoop::TurnLoop(std::chrono::milliseconds park_limit) : park_limit_(park_limit) {}

void TurnLoop::call_soon(Callback cb) { ready_.push_back(std::move(cb)); }

void TurnLoop::add_reader(int fd, Callback cb) { readers_[fd] = std::move(cb); }

bool TurnLoop::remove_reader(int fd) { return readers_.erase(fd) > 0; }

void TurnLoop::run_forever() {
  // asyncio's run_forever: a turn, then end if a stop is pending; the stop is used up.
  for (;;) {
    run_once();
    if (stopping_) break;
  }
  stopping_ = false;
}

void TurnLoop::poll_step(bool block) {
  if (block) ++blocking_polls_;
  std::vector<pollfd> fds;
  for (const auto& [fd, cb] : readers_) fds.push_back(pollfd{fd, POLLIN, 0});
  const int timeout = block ? static_cast<int>(park_limit_.count()) : 0;
  if (::poll(fds.data(), fds.size(), timeout) < 0) throw std::system_error(errno, std::generic_category(), "poll");
  for (const pollfd& p : fds) {
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    // Queued as a look-up, not a copy: a reader removed before its readiness runs is skipped.
    ready_.push_back([this, fd = p.fd] {
      const auto it = readers_.find(fd);
      if (it == readers_.end()) return;
      const Callback cb = it->second;  // a copy: the reader may remove itself
      cb();
    });
  }
}

void TurnLoop::run_front() {
  const Callback cb = std::move(ready_.front());
  ready_.pop_front();
  cb();
}

}  // namespace exercise
