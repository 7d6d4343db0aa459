// server/out_queue: the bytes a connection has ready to send, in order (chapter 01).
#include "server/out_queue.h"

#include <utility>

namespace handoff::server {

void OutQueue::push(std::string&& piece) {
  // An empty piece is never queued: no send could take it, so it would stay at the front.
  if (piece.empty()) return;
  bytes_ += piece.size();
  pieces_.push_back(std::move(piece));
}

OutQueue::Gathered OutQueue::gather(std::span<iovec> iov, std::size_t max_bytes) {
  Gathered g;
  for (auto it = pieces_.begin(); it != pieces_.end() && g.count < iov.size(); ++it) {
    const std::size_t skip = g.count == 0 ? offset_ : 0;
    const std::size_t piece = it->size() - skip;
    if (g.count > 0 && g.bytes + piece > max_bytes) break;
    iov[g.count++] = iovec{it->data() + skip, piece};
    g.bytes += piece;
  }
  return g;
}

void OutQueue::consume(std::size_t n) noexcept {
  bytes_ -= n;
  while (n > 0) {
    const std::size_t rest = pieces_.front().size() - offset_;
    if (n < rest) {
      offset_ += n;
      return;
    }
    n -= rest;
    pieces_.pop_front();
    offset_ = 0;
  }
}

}  // namespace handoff::server
