// exercises/01-lossless-stop/tests: the recv() gate (recv_gate.h says what and why).
#include "recv_gate.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define RECV_GATE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#include <sanitizer/tsan_interface.h>
#define RECV_GATE_TSAN 1
#endif
#endif

namespace exercise::recv_gate {
namespace {

// ThreadSanitizer learns a socket's order (a message is sent before it is received) from
// its own recv() and send() interceptors, which this file's definitions take the place of;
// so the gate tells it by hand (sanitizer/tsan_interface.h): every send releases, and every
// received message acquires, one object. Coarser than a socket's own order, never finer.
#ifdef RECV_GATE_TSAN
char socket_order;
#endif

ssize_t receive(int fd, void* buf, size_t len, int flags) {
  const ssize_t got = ::recvfrom(fd, buf, len, flags, nullptr, nullptr);
#ifdef RECV_GATE_TSAN
  if (got >= 0) __tsan_acquire(&socket_order);
#endif
  return got;
}

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool armed = false;
  bool holding = false;  // a holder is known and has not yet let the others go
  std::thread::id holder;
  int sends = 0;
};

Gate& gate() {
  static Gate g;
  return g;
}

void release() {
  Gate& g = gate();
  {
    std::lock_guard lock(g.mu);
    g.holding = false;
  }
  g.cv.notify_all();
}

/// Lets the others go when the holder's thread ends (a thread_local's destructor runs then).
struct ReleaseAtExit {
  bool armed = false;
  ~ReleaseAtExit() {
    if (armed) release();
  }
};
thread_local ReleaseAtExit t_release_at_exit;

bool is_holder() {
  Gate& g = gate();
  std::lock_guard lock(g.mu);
  return g.holding && g.holder == std::this_thread::get_id();
}

bool blocking(int fd, int flags) {
  if ((flags & MSG_DONTWAIT) != 0) return false;
  const int fl = ::fcntl(fd, F_GETFL);
  return fl < 0 || (fl & O_NONBLOCK) == 0;
}

}  // namespace

void arm() {
  std::lock_guard lock(gate().mu);
  gate().armed = true;
  gate().sends = 0;
}

void disarm() {
  {
    std::lock_guard lock(gate().mu);
    gate().armed = false;
    gate().holding = false;
  }
  gate().cv.notify_all();
}

void hold_others() {
  {
    std::lock_guard lock(gate().mu);
    gate().holder = std::this_thread::get_id();
    gate().holding = true;
  }
  t_release_at_exit.armed = true;
}

int sends() {
  std::lock_guard lock(gate().mu);
  return gate().sends;
}

}  // namespace exercise::recv_gate

using exercise::recv_gate::gate;

// The pool's recv(). (The real one is recvfrom() with no address: glibc's own recv.)
extern "C" ssize_t recv(int fd, void* buf, size_t len, int flags) {
  namespace rg = exercise::recv_gate;
  auto& g = gate();
  bool armed = false;
  {
    std::lock_guard lock(g.mu);
    armed = g.armed;
  }
  if (!armed) return rg::receive(fd, buf, len, flags);
  const bool blocks = rg::blocking(fd, flags);
  if (rg::is_holder()) {
    if (blocks) {
      rg::release();  // it waits its turn in the queue: the others may go
      return rg::receive(fd, buf, len, flags);
    }
    const ssize_t got = rg::receive(fd, buf, len, flags);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const int saved = errno;
      rg::release();  // it has drained what was there
      errno = saved;
    }
    return got;
  }
  if (!blocks) return rg::receive(fd, buf, len, flags);
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, -1) < 0 && errno != EINTR) return -1;
    {
      std::unique_lock lock(g.mu);
      g.cv.wait(lock, [&] { return !g.armed || !g.holding || g.holder == std::this_thread::get_id(); });
    }
    const ssize_t got = rg::receive(fd, buf, len, flags | MSG_DONTWAIT);
    if (got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return got;
  }
}

// The pool's send(), counted. (The real one is sendto() with no address: glibc's own send.)
extern "C" ssize_t send(int fd, const void* buf, size_t len, int flags) {
  {
    std::lock_guard lock(gate().mu);
    ++gate().sends;
  }
#ifdef RECV_GATE_TSAN
  __tsan_release(&exercise::recv_gate::socket_order);
#endif
  return ::sendto(fd, buf, len, flags, nullptr, 0);
}
