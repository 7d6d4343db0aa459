// server/socket_inbox: the sockets other threads hand a worker, until its loop takes them (chapter 05).
#include "server/socket_inbox.h"

#include <utility>

namespace handoff::server {

SocketInbox::SocketInbox(evloop::EventLoop* loop, stats::ThreadStats& stats, std::function<void(net::Fd)> take_one)
    : loop_(loop), stats_(stats), take_one_(std::move(take_one)) {}

void SocketInbox::hand_in(net::Fd fd) {
  net::Fd refused;  // closed on return, outside the lock
  bool post = false;
  {
    std::lock_guard lock(mu_);
    if (closed_ || loop_ == nullptr) {
      refused = std::move(fd);
    } else {
      post = fds_.empty();  // else a take already posted will take this one too
      fds_.push_back(std::move(fd));
    }
  }
  if (refused) {
    stats_.add(stats::Counter::handins_closed);  // a relaxed counter: any thread may bump it
    return;
  }
  if (post) loop_->call_soon_threadsafe([this] { take(); });
}

void SocketInbox::take() {
  std::vector<net::Fd> taken;
  {
    std::lock_guard lock(mu_);
    taken.swap(fds_);
  }
  for (net::Fd& fd : taken) take_one_(std::move(fd));
}

void SocketInbox::close() {
  std::vector<net::Fd> left;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    left.swap(fds_);
  }
  stats_.add(stats::Counter::handins_closed, left.size());
}

}  // namespace handoff::server
