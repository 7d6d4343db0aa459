// loadgen/worker: one generator thread, an epoll loop over its share of the connections (chapter 01).
// Role: the hot path (read, parse, record, send) and the connection life cycle.
#include "loadgen/worker.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <functional>

namespace handoff::loadgen::detail {
namespace {

constexpr std::int64_t kConnectBackoffNs = 10'000'000;  // between failed connects
constexpr std::int64_t kProgressPublishNs = 250'000'000;
constexpr std::size_t kReadBufferBytes = 64 * 1024;
constexpr int kMaxEvents = 256;
constexpr int kReadsPerEvent = 4;  // then let the other connections have a turn

}  // namespace

std::int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Worker::Worker(RunPlan& plan, int index)
    : plan_(plan),
      config_(*plan.config),
      pipeline_(static_cast<std::uint32_t>(plan.config->pipeline)),
      request_size_(plan.request.size()),
      measure_from_due_(plan.config->model == Model::open),
      read_buffer_(kReadBufferBytes),
      progress_(static_cast<bool>(plan.config->on_progress)) {
  const bool head = config_.method == "HEAD";
  const auto total = static_cast<std::uint32_t>(config_.connections);
  const auto step = static_cast<std::uint32_t>(config_.threads);
  conns_.reserve((total + step - 1) / step);
  std::uint32_t base = 0;
  for (auto id = static_cast<std::uint32_t>(index); id < total; id += step) {
    conns_.emplace_back(id, base, ResponseParser(&Worker::on_response_thunk, this, head));
    base += pipeline_;
  }
  entries_.resize(base);
  timers_.reserve(2 * conns_.size() + 16);
  if (config_.model == Model::paced) slot_interval_ns_ = config_.interval_us * 1e3;
  if (config_.model == Model::open) slot_interval_ns_ = config_.connections * 1e9 / config_.rate;
  if (config_.keep_samples) samples.reserve(1 << 16);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) setup_error = std::string("epoll_create1: ") + std::strerror(errno);
}

Worker::~Worker() {
  for (Conn& c : conns_) close_connection(c);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void Worker::run(std::latch& ready, std::latch& go) {
  // Wake within a microsecond of a schedule slot rather than the default 50 us slack.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
  if (epoll_fd_ >= 0) {
    const std::int64_t now = now_ns();
    for (Conn& c : conns_) open_connection(c, now);
  }
  ready.count_down();
  go.wait();  // run_load has written the plan's times; stop is set if we must not run
  if (epoll_fd_ < 0 || plan_.stop.load(std::memory_order_relaxed)) return;

  started_ = true;
  std::int64_t now = now_ns();
  for (Conn& c : conns_) {
    if (config_.model != Model::closed) schedule_slot(c);
    fill(c, now);
  }
  const std::int64_t scan_ns = std::clamp<std::int64_t>(plan_.timeout_ns / 10, 1'000'000, 10'000'000);
  std::int64_t next_scan = now + scan_ns;
  std::int64_t next_publish = progress_ ? now + kProgressPublishNs : INT64_MAX;
  epoll_event events[kMaxEvents];

  for (;;) {
    now = now_ns();
    if (now >= plan_.end_ns || plan_.stop.load(std::memory_order_relaxed)) break;
    run_timers(now);
    if (now >= next_scan) {
      check_timeouts(now);
      next_scan = now + scan_ns;
    }
    if (now >= next_publish) {
      publish_progress();
      next_publish = now + kProgressPublishNs;
    }
    std::int64_t deadline = std::min({plan_.end_ns, next_scan, next_publish});
    if (!timers_.empty()) deadline = std::min(deadline, timers_.front().at_ns);
    const std::int64_t wait = std::max<std::int64_t>(0, deadline - now_ns());
    const timespec timeout{static_cast<time_t>(wait / 1'000'000'000), static_cast<long>(wait % 1'000'000'000)};
    const int n = epoll_pwait2(epoll_fd_, events, kMaxEvents, &timeout, nullptr);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // the epoll fd itself failed; what was recorded so far stands
    }
    for (int i = 0; i < n; ++i) {
      const std::uint64_t tag = events[i].data.u64;
      Conn& c = conns_[static_cast<std::uint32_t>(tag)];
      // An event for a socket this connection has since replaced is stale.
      if (c.fd < 0 || c.generation != static_cast<std::uint32_t>(tag >> 32)) continue;
      const std::uint32_t what = events[i].events;
      if (c.state == State::connecting) {
        finish_connect(c, now_ns());
        continue;
      }
      if ((what & (EPOLLIN | EPOLLERR | EPOLLHUP)) && !readable(c)) continue;
      if ((what & EPOLLOUT) && c.state == State::open && c.out_left > 0) flush(c);
    }
  }
  // Every slot sent so far fell due at or before `now`, the last clock read, so the
  // schedule's window closes just after it (or at end_ns, when that came first).
  if (config_.model != Model::closed) count_schedule(std::min(plan_.end_ns, now + 1));
  if (progress_) publish_progress();
  for (Conn& c : conns_) close_connection(c);
}

bool Worker::on_response_thunk(void* self, int status) { return static_cast<Worker*>(self)->on_response(status); }

bool Worker::on_response(int status) {
  Conn& c = *current_;
  if (c.size == 0) {
    unsolicited_ = true;  // nothing was asked: the stream is not a response stream of ours
    return false;
  }
  const Entry e = at(c, c.head);
  c.head = ring_index(c, 1);
  --c.size;
  record(c, e, status, now_);
  return true;
}

void Worker::record(Conn& c, const Entry& e, int status, std::int64_t now) {
  // The open model charges the wait behind a busy connection or a stalled server to
  // the request: its clock started when it fell due, whether or not it could be sent.
  const std::int64_t ns = now - (measure_from_due_ ? e.due_ns : e.sent_ns);
  if (progress_) {
    progress_local_.record(ns);
    ++progress_local_count_;
  }
  if (!started_ || now < plan_.measure_from_ns || now >= plan_.end_ns || !claim_outcome(now)) return;
  latency.record(ns);
  ++requests;
  if (status >= 500 && status < 600) {
    ++errors.status_5xx;
  } else if (status >= 400 && status < 500) {
    ++errors.status_4xx;
  }
  c.worst_ns = std::max(c.worst_ns, ns);
  worst_ns = std::max(worst_ns, c.worst_ns);
  if (config_.keep_samples) {
    samples.push_back(
        Sample{e.sent_ns - plan_.start_ns, e.due_ns - plan_.start_ns, ns, c.id, static_cast<std::uint16_t>(status)});
  }
}

bool Worker::claim_outcome(std::int64_t now) {
  if (!plan_.counted) return true;
  std::uint64_t left = plan_.outcomes_left.load(std::memory_order_relaxed);
  while (left > 0 && !plan_.outcomes_left.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
  }
  if (left == 0) {
    plan_.stop.store(true, std::memory_order_relaxed);
    return false;
  }
  if (left == 1) {  // this was the last one
    plan_.stopped_at_ns.store(now, std::memory_order_relaxed);
    plan_.stop.store(true, std::memory_order_relaxed);
  }
  return true;
}

void Worker::fail_front(Conn& c, Fail kind, std::int64_t now) {
  if (c.size > 0) {
    c.head = ring_index(c, 1);
    --c.size;
  }
  if (!started_ || now < plan_.measure_from_ns || now >= plan_.end_ns || !claim_outcome(now)) return;
  switch (kind) {
    case Fail::read:
      ++errors.read;
      break;
    case Fail::timeout:
      ++errors.timeout;
      break;
    case Fail::parse:
      ++errors.parse;
      break;
  }
}

bool Worker::readable(Conn& c) {
  std::int64_t now = 0;
  for (int round = 0; round < kReadsPerEvent; ++round) {
    const ssize_t n = ::recv(c.fd, read_buffer_.data(), read_buffer_.size(), 0);
    if (n > 0) {
      now = now_ns();  // one clock read stamps every response these bytes complete
      if (started_ && now >= plan_.measure_from_ns && now < plan_.end_ns) {
        bytes_read += static_cast<std::uint64_t>(n);
      }
      current_ = &c;
      now_ = now;
      unsolicited_ = false;
      const auto outcome = c.parser.feed(read_buffer_.data(), static_cast<std::size_t>(n));
      if (outcome == ResponseParser::Outcome::error) {
        fail_front(c, Fail::parse, now);
        reconnect(c, now);
        return false;
      }
      if (outcome == ResponseParser::Outcome::closed) {
        reconnect(c, now);  // a graceful close: what is still outstanding is sent again
        return false;
      }
      if (static_cast<std::size_t>(n) < read_buffer_.size()) break;
      continue;
    }
    if (n == 0) {
      now = now_ns();
      current_ = &c;
      now_ = now;
      unsolicited_ = false;
      const auto outcome = c.parser.finish();
      if (outcome == ResponseParser::Outcome::error) {
        fail_front(c, unsolicited_ ? Fail::parse : Fail::read, now);  // cut short, or not ours
      } else if (outcome == ResponseParser::Outcome::ok && c.size > 0) {
        fail_front(c, Fail::read, now);  // closed with a request unanswered
      }
      reconnect(c, now);
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    now = now_ns();
    fail_front(c, Fail::read, now);
    reconnect(c, now);
    return false;
  }
  fill(c, now != 0 ? now : now_ns());
  return true;
}

void Worker::fill(Conn& c, std::int64_t now) {
  if (!started_ || c.state != State::open || c.write_failed) return;
  std::uint32_t added = 0;
  if (config_.model == Model::closed) {
    while (c.size < pipeline_) {
      at(c, ring_index(c, c.size)) = Entry{now, now};
      ++c.size;
      ++added;
    }
  } else {
    // Every slot is sent, none skipped: a late slot goes at once, and with the open
    // model its latency still counts from the slot's due time.
    while (c.size < pipeline_ && c.next_due_ns <= now) {
      at(c, ring_index(c, c.size)) = Entry{c.next_due_ns, now};
      ++c.size;
      ++added;
      if (c.next_due_ns >= plan_.measure_from_ns && c.next_due_ns < plan_.end_ns) ++schedule.sent;
      ++c.slot;
      schedule_slot(c);
    }
    if (c.size < pipeline_ && (!c.timer_armed || c.timer_at_ns != c.next_due_ns)) {
      c.timer_armed = true;
      c.timer_at_ns = c.next_due_ns;
      arm(c, c.next_due_ns, false);
    }
  }
  c.out_left += added * request_size_;
  if (c.out_left > 0) flush(c);
}

void Worker::flush(Conn& c) {
  const char* train = plan_.request_train.data();
  const std::uint64_t train_size = plan_.request_train.size();
  while (c.out_left > 0) {
    // The train repeats the request, so from any offset within the first copy the
    // queued requests are contiguous bytes: one send() per batch.
    const std::uint64_t chunk = std::min<std::uint64_t>(c.out_left, train_size - c.out_pos);
    const ssize_t n = ::send(c.fd, train + c.out_pos, chunk, MSG_NOSIGNAL);
    if (n > 0) {
      const auto sent = static_cast<std::uint64_t>(n);
      c.out_left -= sent;
      c.out_pos = static_cast<std::uint32_t>((c.out_pos + sent) % request_size_);
      if (sent < chunk) break;  // the socket buffer is full; EPOLLOUT resumes
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // Broken connection: the read side sees the reset or EOF and decides what it costs.
    c.write_failed = true;
    c.out_left = 0;
    break;
  }
  set_interest(c, c.out_left > 0);
}

void Worker::set_interest(Conn& c, bool want_out) {
  if (c.want_out == want_out) return;
  epoll_event ev{};
  ev.events = EPOLLIN | (want_out ? EPOLLOUT : 0u);
  ev.data.u64 = (static_cast<std::uint64_t>(c.generation) << 32) | static_cast<std::uint64_t>(&c - conns_.data());
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.want_out = want_out;
}

void Worker::schedule_slot(Conn& c) { c.next_due_ns = due_of(c, c.slot); }

std::int64_t Worker::due_of(const Conn& c, std::uint64_t slot) const {
  // Connection i of N starts i/N of an interval in, so that the N schedules interleave
  // evenly; slot k is computed from k rather than summed, so it never drifts.
  const double offset = static_cast<double>(c.id) / config_.connections;
  return plan_.start_ns + std::llround((offset + static_cast<double>(slot)) * slot_interval_ns_);
}

std::uint64_t Worker::first_slot_from(const Conn& c, std::int64_t t) const {
  // Slot k falls due k + i/N intervals in, so the first at or after t is about t's count
  // of intervals; the loops step from there past the offset and the rounding.
  const double intervals = std::ceil(static_cast<double>(t - plan_.start_ns) / slot_interval_ns_);
  auto slot = intervals > 0 ? static_cast<std::uint64_t>(intervals) : std::uint64_t{0};
  while (slot > 0 && due_of(c, slot - 1) >= t) --slot;
  while (due_of(c, slot) < t) ++slot;
  return slot;
}

void Worker::count_schedule(std::int64_t until) {
  // The schedule alone says which slots fell due in [measure_from, until); fill() counted
  // those it sent, and c.slot is the next one it will send, so the slots from c.slot to
  // the window's last are the ones still waiting. A skipped slot would be in neither.
  for (const Conn& c : conns_) {
    const std::uint64_t first = first_slot_from(c, plan_.measure_from_ns);
    const std::uint64_t past = std::max(first, first_slot_from(c, until));
    schedule.due += past - first;
    schedule.waiting += past - std::clamp(c.slot, first, past);
  }
}

void Worker::arm(Conn& c, std::int64_t at_ns, bool retry) {
  timers_.push_back(Timer{at_ns, static_cast<std::uint32_t>(&c - conns_.data()), retry});
  std::push_heap(timers_.begin(), timers_.end(), std::greater<>{});
}

void Worker::run_timers(std::int64_t now) {
  while (!timers_.empty() && timers_.front().at_ns <= now) {
    std::pop_heap(timers_.begin(), timers_.end(), std::greater<>{});
    const Timer t = timers_.back();
    timers_.pop_back();
    Conn& c = conns_[t.conn];
    if (t.retry) {
      if (c.state == State::backoff) open_connection(c, now);
      continue;
    }
    if (!c.timer_armed || c.timer_at_ns != t.at_ns) continue;  // superseded
    c.timer_armed = false;
    fill(c, now);
  }
}

void Worker::check_timeouts(std::int64_t now) {
  for (Conn& c : conns_) {
    if (c.state == State::open && c.size > 0 && now - at(c, c.head).sent_ns >= plan_.timeout_ns) {
      fail_front(c, Fail::timeout, now);
      reconnect(c, now);
    } else if (c.state == State::connecting && now - c.connect_started_ns >= plan_.timeout_ns) {
      connect_failed(c, now);
    }
  }
}

void Worker::open_connection(Conn& c, std::int64_t now) {
  const Target& target = config_.target;
  ++c.generation;
  c.connect_started_ns = now;
  c.fd = ::socket(target.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) {
    connect_failed(c, now);
    return;
  }
  const int one = 1;
  setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const int rc = ::connect(c.fd, reinterpret_cast<const sockaddr*>(&target.address), target.address_length);
  if (rc != 0 && errno != EINPROGRESS) {
    connect_failed(c, now);
    return;
  }
  c.state = rc == 0 ? State::open : State::connecting;
  c.want_out = rc != 0;
  epoll_event ev{};
  ev.events = rc == 0 ? EPOLLIN : EPOLLOUT;
  ev.data.u64 = (static_cast<std::uint64_t>(c.generation) << 32) | static_cast<std::uint64_t>(&c - conns_.data());
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) {
    connect_failed(c, now);
    return;
  }
  if (rc == 0) connected(c, now);
}

void Worker::finish_connect(Conn& c, std::int64_t now) {
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err != 0) {
    connect_failed(c, now);
    return;
  }
  connected(c, now);
}

void Worker::connected(Conn& c, std::int64_t now) {
  c.state = State::open;
  c.write_failed = false;
  ++connects;
  c.parser.reset();
  set_interest(c, false);
  // What the previous connection left unanswered goes again, first and in order. Its
  // send time restarts; the open model's due times stand, so the wait stays charged.
  for (std::uint32_t k = 0; k < c.size; ++k) {
    Entry& e = at(c, ring_index(c, k));
    e.sent_ns = now;
    if (config_.model == Model::closed) e.due_ns = now;
  }
  c.out_pos = 0;
  c.out_left = static_cast<std::uint64_t>(c.size) * request_size_;
  fill(c, now);  // sends the re-queued requests and any new ones in one batch
}

void Worker::connect_failed(Conn& c, std::int64_t now) {
  if (started_ && now >= plan_.measure_from_ns && now < plan_.end_ns) ++errors.connect;
  close_connection(c);
  arm(c, now + kConnectBackoffNs, true);
}

void Worker::close_connection(Conn& c) {
  if (c.fd >= 0) ::close(c.fd);  // closing also removes it from the epoll set
  c.fd = -1;
  c.state = State::backoff;
  c.want_out = false;
  c.write_failed = false;
  c.out_left = 0;
  c.out_pos = 0;
}

void Worker::reconnect(Conn& c, std::int64_t now) {
  close_connection(c);
  open_connection(c, now);
}

void Worker::publish_progress() {
  {
    std::lock_guard lock(progress_mutex_);
    progress_shared_.merge(progress_local_);
    progress_shared_count_ += progress_local_count_;
  }
  progress_local_.reset();
  progress_local_count_ = 0;
}

void Worker::take_progress(LatencyHistogram& into, std::uint64_t& responses) {
  std::lock_guard lock(progress_mutex_);
  into.merge(progress_shared_);
  responses += progress_shared_count_;
  progress_shared_.reset();
  progress_shared_count_ = 0;
}

}  // namespace handoff::loadgen::detail
