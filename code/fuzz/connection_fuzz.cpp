// fuzz/connection_fuzz: one whole server connection, its bytes, cuts, clock and client from the input (chapter 01).
// Changed in chapters 02, 04: the ring pool (02), the callback loop (04).
// Role: a libFuzzer target for the connection state machine (pipelining, bodies, limits,
// timeouts, half-close, a client that stops reading, drain), inline (on the plain loop and
// on stage 04's callback loop) and over both pools, that checks what the client receives against what it sent.
// This file plays the input's script; the application is fuzz/connection_app, the pool's
// tally fuzz/tallied_pool, and the oracle that checks the answers fuzz/connection_oracle.
//
// A Worker is driven turn by turn through its seam (start_loop, adopt, run_turn with a
// fake clock) with one end of a socketpair; the other end is the client. Every handler
// answers with a body that names its request (method, target, version, body), so the
// answers can be matched to the requests: the requests are what an independent
// RequestParser makes of every byte the client got into the socket, in one piece (the
// request-parser target checks that cutting the bytes cannot change that). The invariants:
//   - the bytes received are a valid response stream (http/response_reader), one final answer
//     per request, in request order, each the answer of its request (status, version,
//     body, framing), a HEAD's without a body; a 100 Continue only before the answer of
//     a request that asked for one (or of the request still being read);
//   - nothing follows an answer that says Connection: close (checked to the byte), and
//     only an error (4xx of the parser's set, or 408 after the clock moved) or the
//     answer to a request that closes (or the last one under drain) says it;
//   - the connection ends once the client goes quiet and the clock passes every timeout;
//     if it ends without an answer that said close, every request sent was answered,
//     unless the client had stopped reading while the clock moved, or the server was
//     told to drain (then it may cut answers short);
//   - every turn settles: a loop that keeps making system calls with nothing to do, or a
//     job handed to the pool that never answers, is a failure; and ASan/UBSan/LSan hold.
//
// Input: three bytes of configuration, then the client's script: bytes to send, with
// 0xff introducing a step: T a cut (send what is waiting, run the loop until it
// settles), C n a cut, then the clock moves by kAdvanceMs[n % 8], then a cut; R the
// client stops or resumes reading, H it shuts its sending side, D the server is told to
// drain, 0xff a literal 0xff. The third byte's high bits may also ask for a cut after
// every few bytes.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "fuzz/connection_app.h"
#include "fuzz/connection_oracle.h"
#include "fuzz/connection_require.h"
#include "fuzz/tallied_pool.h"
#include "net/fd.h"
#include "net/listener.h"
#include "pool/datagram_pool.h"
#include "pool/ring_pool.h"
#include "server/options.h"
#include "server/worker.h"
#include "stats/thread_cpu.h"
#include "stats/thread_stats.h"

namespace {

using namespace handoff;
using fuzz::fail;
using fuzz::require;
using fuzz::routes;
using fuzz::TalliedPool;

constexpr std::int64_t kMsToNs = 1'000'000;
constexpr std::uint8_t kStep = 0xff;
constexpr int kAdvanceMs[8] = {1, 10, 40, 100, 250, 600, 1500, 3000};

/// The first three bytes of an input: where handlers run, the limits, the timeouts.
struct Config {
  server::ServerOptions options;
  int pool_kind = 0;          // 0 inline, 1 RingPool, 2 DatagramPool (one thread)
                              // inline with (a & 3) == 1: on an evloop::EventLoop (stage 04)
  bool small_sndbuf = false;  // the server's socket buffer at its minimum: writes back up
  std::size_t stride = 0;     // > 0: a cut after every `stride` bytes of the script

  Config(std::uint8_t a, std::uint8_t b, std::uint8_t c) {
    pool_kind = std::max(0, (a & 3) - 1);
    if ((a & 3) == 1) options.event_loop = evloop::EventLoopOptions{};
    options.dispatch = pool_kind == 0 ? server::Dispatch::inline_on_loop : server::Dispatch::pool;
    options.blocking_threads = 1;
    options.pool_all_routes = (a & 4) != 0;
    small_sndbuf = (a & 8) != 0;
    stride = a >> 4;
    http::Limits& l = options.limits;
    if ((b & 1) != 0) {  // tiny: every limit within a few bytes' reach
      l.max_request_line = 16 + (b >> 1) % 48;
      l.max_header_bytes = 24 + (b >> 2) % 96;
      l.max_header_fields = 1 + (b >> 3) % 6;
      l.max_body_bytes = (b >> 4) % 32;
    } else {
      l.max_body_bytes = 64 * (1 + ((b >> 1) & 7));
    }
    options.max_pipeline = 1 + (c & 7);
    options.header_timeout_ms = 50 << ((c >> 3) & 3);
    options.idle_timeout_ms = 100 * (1 + ((c >> 5) & 7));
    options.drain_timeout_ms = 300;
  }
};

/// One run: a Worker on a fake clock, the client's end, and what went each way.
class Run {
 public:
  explicit Run(const Config& config) : config_(config), fake_now_(stats::monotonic_ns()) {
    std::unique_ptr<pool::HandlerPool> handlers;
    if (config_.pool_kind != 0) {
      const pool::PoolConfig pc{0, 1};
      std::unique_ptr<pool::HandlerPool> inner;
      if (config_.pool_kind == 1) {
        inner = std::make_unique<pool::RingPool>(pc);
      } else {
        inner = std::make_unique<pool::DatagramPool>(pc);
      }
      auto tallied = std::make_unique<TalliedPool>(std::move(inner));
      tally_ = tallied.get();
      handlers = std::move(tallied);
    }
    worker_ =
        std::make_unique<server::Worker>(config_.options, 0, routes(), registry_, std::move(handlers), net::Listener{});
    // The fake clock starts at the real one and only moves forward, so a deadline handed
    // to the pool (which reads the real clock) is never in the past.
    worker_->set_clock([this] { return fake_now_; });
    worker_->start_loop();
    int sv[2];
    require(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
    if (config_.small_sndbuf) {
      const int one = 1;  // the kernel raises it to its minimum, a few KiB
      ::setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &one, sizeof one);
    }
    worker_->adopt(net::Fd(sv[0]));
    client_ = net::Fd(sv[1]);
  }

  void play(const std::uint8_t* data, std::size_t size);
  /// Hold what the client received against what it sent (fuzz/connection_oracle).
  void check() const {
    fuzz::check_answers(
        fuzz::Transcript{config_.options.limits, sent_, got_, eof_, before_clock_, cut_excused_, drain_requested_});
  }
  void tear_down();

 private:
  void settle();
  void advance(int ms);
  void send_pending();
  bool receive();
  std::uint64_t syscalls() const { return worker_->loop_stats().get(stats::Counter::syscalls); }

  const Config& config_;
  std::int64_t fake_now_;
  stats::Registry registry_;
  TalliedPool* tally_ = nullptr;
  std::unique_ptr<server::Worker> worker_;
  bool running_ = true;  // run_turn has not yet said the drain is over
  net::Fd client_;

  std::string pending_;  // script bytes the socket has not taken yet
  std::string sent_;     // every byte the socket took, in order: all the server can read
  std::string got_;      // every byte received
  bool eof_ = false;
  bool reading_ = true;
  bool shut_ = false;
  bool cut_excused_ = false;  // answers may be cut short (see the invariants)
  bool drain_requested_ = false;
  std::size_t before_clock_ = fuzz::kClockNeverMoved;  // bytes received before the clock first moved
};

void Run::send_pending() {
  while (!pending_.empty() && !shut_) {
    const ssize_t n = ::send(client_.get(), pending_.data(), pending_.size(), MSG_NOSIGNAL);
    if (n > 0) {
      sent_.append(pending_, 0, static_cast<std::size_t>(n));
      pending_.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;  // the server is not reading: the rest waits
    } else {
      pending_.clear();  // the server has closed: nobody will read these
    }
  }
}

bool Run::receive() {
  bool moved = false;
  char buf[16 * 1024];
  while (reading_ && !eof_) {
    const ssize_t n = ::recv(client_.get(), buf, sizeof buf, 0);
    if (n > 0) {
      got_.append(buf, static_cast<std::size_t>(n));
      moved = true;
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      eof_ = true;  // a reset ends the stream too: what arrived before it is all there is
      moved = true;
    } else if (errno != EINTR) {
      break;
    }
  }
  return moved;
}

// Turn the loop until a turn finds nothing to do (one system call: its epoll_wait) and
// receives nothing, with no job out in the pool.
void Run::settle() {
  const auto started = std::chrono::steady_clock::now();
  for (int turn = 0;; ++turn) {
    send_pending();
    const std::uint64_t before = syscalls();
    if (running_) running_ = worker_->run_turn(tally_ != nullptr && tally_->busy() ? 1 : 0);
    const bool moved = syscalls() - before > 1;
    const bool received = receive();
    const bool waiting = tally_ != nullptr && tally_->busy();
    if (!moved && !received && !waiting) return;
    if (!waiting && turn > 2000) fail("the loop never settles: it keeps making system calls with nothing to do");
    if (waiting && std::chrono::steady_clock::now() - started > std::chrono::seconds(5)) {
      fail("a job handed to the pool never answered");
    }
  }
}

// The bytes before the step arrive first; then the time passes.
void Run::advance(int ms) {
  settle();
  if (before_clock_ == fuzz::kClockNeverMoved) before_clock_ = got_.size();
  if (!reading_ || drain_requested_) cut_excused_ = true;
  fake_now_ += ms * kMsToNs;
  settle();
}

void Run::play(const std::uint8_t* data, std::size_t size) {
  std::size_t since_cut = 0;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != kStep || i + 1 == size) {
      if (!shut_) pending_.push_back(static_cast<char>(data[i]));
      if (config_.stride != 0 && ++since_cut == config_.stride) {
        since_cut = 0;
        settle();
      }
      continue;
    }
    switch (data[++i]) {
      case 'T':
        settle();
        break;
      case 'C':
        if (i + 1 < size) advance(kAdvanceMs[data[++i] % 8]);
        break;
      case 'R':
        reading_ = !reading_;
        settle();
        break;
      case 'H':
        send_pending();
        pending_.clear();
        if (!shut_) ::shutdown(client_.get(), SHUT_WR);
        shut_ = true;
        settle();
        break;
      case 'D':
        drain_requested_ = true;
        cut_excused_ = true;  // a drain stops reading: requests not yet read go unanswered
        worker_->request_stop();
        settle();
        break;
      case kStep:
        if (!shut_) pending_.push_back(static_cast<char>(kStep));
        break;
      default:
        break;
    }
  }
  // The client goes quiet and reads everything; the clock passes every timeout (header,
  // idle, and the two seconds of a lingering close) until the server ends the connection.
  reading_ = true;
  settle();
  const int beyond = config_.options.header_timeout_ms + config_.options.idle_timeout_ms + 2100;
  for (int i = 0; i < 4 && !eof_; ++i) advance(beyond);
  require(eof_, "the connection outlived every timeout");
}

// The client closes, the server drains (the clock passing its deadline), the loop ends.
void Run::tear_down() {
  client_.reset();
  pending_.clear();
  shut_ = true;
  eof_ = true;
  worker_->request_stop();
  for (int i = 0; i < 8 && running_; ++i) advance(config_.options.drain_timeout_ms + 100);
  require(!running_, "the drain never ended");
  worker_->finish_loop();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const Config config(data[0], data[1], data[2]);
  Run run(config);
  run.play(data + 3, size - 3);
  run.check();
  run.tear_down();
  return 0;
}
