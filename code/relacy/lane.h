// relacy/lane: the models' stand-in for a wake socket (a lane's socketpair) (chapter 03).
// Role: count the pokes sitting in the kernel's buffer. The kernel takes a lock around a
// datagram's send and its recv, so a send happens before the recv that takes it: each is an
// acq_rel read-modify-write here, which orders no more than that lock does (a lock's
// acquire and release are not a full fence, so the model does not hide a missing one).
#pragma once

#include "relacy/relacy_atomics.h"

namespace handoff::models {

/// A wake socket's buffered pokes, as one counter.
class Lane {
 public:
  /// A poke into the lane (send_word).
  void send() { pokes_.fetch_add(1, std::memory_order_acq_rel); }
  /// A non-blocking recv (MSG_DONTWAIT): takes a poke if one is there.
  bool try_recv() {
    int n = pokes_.load(std::memory_order_relaxed);
    while (n > 0) {
      if (pokes_.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
    }
    return false;
  }
  /// Pokes still in the buffer (for a model's final check, after every thread has ended).
  int left() const { return pokes_.load(std::memory_order_relaxed); }

 private:
  RelacyAtomics::atomic<int> pokes_{0};
};

}  // namespace handoff::models
