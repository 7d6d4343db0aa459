// reactor/reactor: an epoll readiness reactor (chapter 01).
#include "reactor/reactor.h"

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace handoff::reactor {

namespace {
void check(int rc, const char* what) {
  if (rc != 0) throw std::system_error(errno, std::generic_category(), what);
}
}  // namespace

Reactor::Reactor() : epfd_(::epoll_create1(EPOLL_CLOEXEC)), events_(256) {
  if (!epfd_) throw std::system_error(errno, std::generic_category(), "epoll_create1");
}

void Reactor::add(int fd, std::uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  check(::epoll_ctl(epfd_.get(), EPOLL_CTL_ADD, fd, &ev), "epoll_ctl(ADD)");
}

void Reactor::modify(int fd, std::uint32_t events, IoHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  check(::epoll_ctl(epfd_.get(), EPOLL_CTL_MOD, fd, &ev), "epoll_ctl(MOD)");
}

void Reactor::remove(int fd, IoHandler* handler) {
  ::epoll_ctl(epfd_.get(), EPOLL_CTL_DEL, fd, nullptr);
  if (dispatching_) removed_.push_back(handler);
}

int Reactor::poll(int timeout_ms) {
  const int n = ::epoll_wait(epfd_.get(), events_.data(), static_cast<int>(events_.size()), timeout_ms);
  if (n <= 0) return 0;
  dispatching_ = true;
  removed_.clear();
  for (int i = 0; i < n; ++i) {
    auto* h = static_cast<IoHandler*>(events_[static_cast<std::size_t>(i)].data.ptr);
    // A handler removed earlier in this batch may already be destroyed: skip it.
    if (!removed_.empty() && std::find(removed_.begin(), removed_.end(), h) != removed_.end()) continue;
    h->on_io(events_[static_cast<std::size_t>(i)].events);
  }
  dispatching_ = false;
  return n;
}

}  // namespace handoff::reactor
