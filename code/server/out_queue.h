// server/out_queue: the bytes a connection has ready to send, in order (chapter 01).
// Role: hold an answer's pieces (a head, a body, a chunk) as they were produced, lend the
// ones at the front to one send as an iovec array, and drop what that send took, the first
// piece perhaps only partly.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <deque>
#include <limits>
#include <span>
#include <string>

namespace handoff::server {

/// A queue of byte pieces, sent from the front; loop thread of its connection only.
class OutQueue {
 public:
  /// The front pieces lent to one send.
  struct Gathered {
    std::size_t count = 0;  ///< iovecs filled
    std::size_t bytes = 0;  ///< bytes they cover
  };

  bool empty() const noexcept { return pieces_.empty(); }
  /// Bytes queued and not yet sent.
  std::size_t bytes() const noexcept { return bytes_; }
  /// Queue `piece` behind the others (an empty one is dropped).
  void push(std::string&& piece);
  /// Point `iov` at the front pieces, as many as fit in it and, after the first, in
  /// `max_bytes` (a piece larger than that goes alone). The pieces stay queued until consume().
  Gathered gather(std::span<iovec> iov, std::size_t max_bytes = std::numeric_limits<std::size_t>::max());
  /// A send took `n` bytes from the front.
  void consume(std::size_t n) noexcept;

 private:
  std::deque<std::string> pieces_;
  std::size_t offset_ = 0;  // bytes of pieces_.front() already sent
  std::size_t bytes_ = 0;   // bytes in pieces_ not yet sent
};

}  // namespace handoff::server
