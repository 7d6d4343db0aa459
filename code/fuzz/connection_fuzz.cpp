// fuzz/connection_fuzz: one whole server connection, its bytes, cuts, clock and client from the input (chapter 01).
// Role: a libFuzzer target for the connection state machine (pipelining, bodies, limits,
// timeouts, half-close, a client that stops reading, drain), inline (on the plain loop and
// on stage 04's callback loop) and over both pools, that checks what the client receives against what it sent.
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
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "app/router.h"
#include "http/request_parser.h"
#include "http/response.h"
#include "http/response_reader.h"
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

constexpr std::int64_t kMsToNs = 1'000'000;
constexpr std::uint8_t kStep = 0xff;
constexpr int kAdvanceMs[8] = {1, 10, 40, 100, 250, 600, 1500, 3000};
constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "connection fuzz: %s\n", what);
  std::abort();
}

void require(bool ok, const char* what) {
  if (!ok) fail(what);
}

// The application: every answer names the request it answers.

std::string echo(const http::Request& r) {
  return r.method + " " + r.target + " 1." + std::to_string(r.version_minor) + " " + std::to_string(r.body.size()) +
         "\n" + r.body;
}

/// GET /b?n=N pads its answer with N bytes (at most 16 KiB): enough to fill a small
/// socket buffer, so the server meets a client that does not keep up.
std::size_t padding(const http::Request& r) {
  const std::string_view text = r.query("n");
  std::size_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return std::min<std::size_t>(n, 16 * 1024);
}

/// The body of the answer to `r`, whose route exists.
std::string answer(const http::Request& r) {
  if (r.path() == "/s") return echo(r) + "end\n";
  if (r.path() == "/b") return echo(r) + std::string(padding(r), 'x');
  return echo(r);
}

/// /e, /b (never block: inline even in pool mode), /p (to the pool in pool mode), and /s,
/// a stream of three chunks (one empty) sent to the pool too.
const app::Router& routes() {
  static const app::Router router = [] {
    app::Router r;
    const http::Handler whole = [](const http::Request& req, http::Responder& out) {
      http::Response a;
      a.body = answer(req);
      out.send(std::move(a));
    };
    const http::Handler stream = [](const http::Request& req, http::Responder& out) {
      out.start_stream(200, "text/plain");
      out.send_chunk(echo(req));
      out.send_chunk("");
      out.send_chunk("end\n");
      out.end_stream();
    };
    constexpr bool kNeverBlocks = true;
    r.add("GET", "/e", whole, kNeverBlocks);
    r.add("POST", "/e", whole, kNeverBlocks);
    r.add("GET", "/b", whole, kNeverBlocks);
    r.add("GET", "/p", whole);
    r.add("POST", "/p", whole);
    r.add("GET", "/s", stream);
    return r;
  }();
  return router;
}

/// A real pool behind a tally of its jobs, so the driver can run the loop until every job
/// it handed over has answered: each cut then ends in the same state whatever the pool
/// thread's timing, and an input replays the same exchange of events.
class TalliedPool final : public pool::HandlerPool, public pool::FrameSink {
 public:
  explicit TalliedPool(std::unique_ptr<pool::HandlerPool> inner) : inner_(std::move(inner)) {}
  void bind(reactor::Reactor& reactor, pool::FrameSink& sink, stats::Registry& registry,
            stats::ThreadStats& loop_stats) override {
    sink_ = &sink;
    inner_->bind(reactor, *this, registry, loop_stats);
  }
  void submit(pool::Job* job) override {
    ++submitted_;
    ticket_ = job->ticket;
    inner_->submit(job);
  }
  bool ready_to_wait() override { return inner_->ready_to_wait(); }
  void before_nonblocking_poll() override { inner_->before_nonblocking_poll(); }
  void after_wait() override { inner_->after_wait(); }
  std::size_t stop(std::int64_t deadline_ns) override { return inner_->stop(deadline_ns); }
  void on_frame(pool::Frame& frame) override {
    if (frame.kind != pool::Frame::Kind::stream_head && frame.kind != pool::Frame::Kind::chunk) ++answered_;
    sink_->on_frame(frame);
  }
  /// Jobs out whose answer the connection still waits for. Once its ticket is cancelled a
  /// job may be dropped unrun and never answer, and nobody waits for it any more.
  bool busy() const {
    // relaxed: the loop thread raised the flag itself (the connection closing); this
    // thread reads its own store.
    return answered_ < submitted_ && !(ticket_ && ticket_->cancelled.load(std::memory_order_relaxed));
  }

 private:
  std::unique_ptr<pool::HandlerPool> inner_;
  pool::FrameSink* sink_ = nullptr;
  std::shared_ptr<pool::JobTicket> ticket_;
  std::uint64_t submitted_ = 0;
  std::uint64_t answered_ = 0;
};

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
  void check() const;
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
  std::size_t before_clock_ = kNever;  // bytes received before the clock first moved
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
  if (before_clock_ == kNever) before_clock_ = got_.size();
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

bool parser_error(int status) {
  return status == 400 || status == 413 || status == 414 || status == 431 || status == 501 || status == 505;
}

/// What the oracle knows while it reads the answers: the requests, and how many final
/// answers it has read so far.
struct Answered {
  const std::deque<http::Request>* requests = nullptr;
  std::size_t finals = 0;  // final (non-1xx) answers completed so far
};

// The reader must be told which answers are to HEAD: they carry a length and no body.
bool answers_head(const void* context, int status) {
  const Answered& a = *static_cast<const Answered*>(context);
  // An error answer (408, or the parser's) always carries its body: it may stand where a
  // HEAD was still arriving when the server gave up on it.
  if (status / 100 == 1 || status == 408 || parser_error(status)) return false;
  return a.finals < a.requests->size() && (*a.requests)[a.finals].is_head();
}

void Run::check() const {
  http::RequestParser parsed(config_.options.limits);
  parsed.feed(sent_);
  const std::deque<http::Request>& requests = parsed.ready();

  Answered answered;
  answered.requests = &requests;
  http::ResponseReader reader({.keep_body = true, .bodiless = &answers_head, .context = &answered});

  std::size_t at = 0;
  std::size_t continued = kNever;  // the final answer a 100 Continue came before
  bool closed = false;             // an answer said Connection: close
  bool truncated = false;
  const auto judge = [&](std::size_t begin, std::size_t end) {
    require(!closed, "bytes after an answer that said Connection: close");
    const http::ParsedResponse& s = reader.response();
    const std::size_t i = answered.finals;
    if (s.status == 100) {
      require(continued != i, "two 100 Continue before one answer");
      require(i >= requests.size() || requests[i].header("Expect") != nullptr,
              "a 100 Continue for a request that did not ask for one");
      continued = i;
      return;
    }
    ++answered.finals;
    if (s.status == 408) {
      require(begin >= before_clock_, "a 408 before the clock moved");
      require(i <= requests.size(), "a 408 after a request that was never sent");
      require(!s.keep_alive, "a 408 that keeps the connection open");
    } else if (parser_error(s.status)) {
      require(i == requests.size() && parsed.error_status() != 0, "an error answer where the bytes sent hold no error");
      require(!s.keep_alive, "an error answer that keeps the connection open");
    } else {
      require(i < requests.size(), "an answer to a request that was never sent");
      const http::Request& r = requests[i];
      const app::Router::Match match = routes().find(r.method, r.path());
      require(s.status == (match.handler ? 200 : match.status), "an answer with another request's status");
      require(s.version_minor == std::min(r.version_minor, 1), "an answer in another HTTP version than its request");
      const std::string body = match.handler ? answer(r) : std::string(http::reason_phrase(match.status)) + "\n";
      require(s.body == (r.is_head() ? std::string() : body), "an answer with another request's body, or mixed bytes");
      // An HTTP/1.0 stream ends with the connection: it cannot keep it alive.
      const bool until_close = match.handler && r.path() == "/s" && r.version_minor == 0;
      const bool keep_alive = r.keep_alive && !until_close;
      require(s.keep_alive == keep_alive || (drain_requested_ && !s.keep_alive),
              "an answer whose Connection is not what its request asked for");
    }
    if (!s.keep_alive) {
      closed = true;
      require(end == got_.size(), "bytes after an answer that said Connection: close");
    }
  };
  // The reader stops at the end of each answer, so each is judged with its bytes' place.
  for (;;) {
    std::size_t used = 0;
    const http::ResponseReader::Step step = reader.feed(std::string_view(got_).substr(at), used);
    if (step == http::ResponseReader::Step::more) break;
    require(step == http::ResponseReader::Step::response,
            "the bytes received are not a valid HTTP/1.1 response stream");
    judge(at, at + used);
    at += used;
  }
  require(eof_, "checked before the connection ended");
  switch (reader.finish()) {
    case http::ResponseReader::Step::response:
      judge(at, got_.size());  // an answer framed by the end of the connection
      break;
    case http::ResponseReader::Step::error:
      truncated = true;
      break;
    case http::ResponseReader::Step::more:
      break;
  }
  require(!truncated || cut_excused_, "an answer cut short");
  require(closed || cut_excused_ || (answered.finals == requests.size() && parsed.error_status() == 0),
          "the connection ended with requests unanswered");
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
