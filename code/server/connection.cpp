// server/connection: one client connection on an event loop (chapter 01).
// Changed in chapters 05, 06: the send side chosen per connection and a stack's queue pushed
// (05), read-ahead, drain and the body's clock (06).
#include "server/connection.h"

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "server/kernel_send.h"
#include "server/stack_send.h"
#include "server/worker.h"
#include "stats/thread_cpu.h"

namespace handoff::server {

namespace {
constexpr std::int64_t kLingerNs = 2'000'000'000;     // how long a closing socket drains input
constexpr std::int64_t kDrainLingerNs = 100'000'000;  // the same while the server stops
constexpr std::int64_t kMsToNs = 1'000'000;
}  // namespace

Connection::Connection(Worker& worker, net::Fd fd, std::uint64_t id, std::int64_t now_ns)
    : worker_(worker),
      fd_(std::move(fd)),
      id_(id),
      parser_(worker.options().limits),
      ticket_(std::make_shared<pool::JobTicket>(worker.options().max_unsent_bytes)),
      last_activity_ns_(now_ns) {
  if (stack::NetworkStack* stack = worker.stack()) {
    send_ = std::make_unique<StackSend>(*stack, fd_.get());  // chapter 05
  } else {
    send_ = std::make_unique<KernelSend>(fd_.get());
  }
  worker_.reactor().add(fd_.get(), EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, this);
}

Connection::~Connection() { send_->close(fd_); }

void Connection::on_io(std::uint32_t events) {
  if (closed_) return;
  // An error (a reset) or both directions shut: no answer can reach the client any more,
  // so nothing it sent is parsed or answered; what the connection holds is freed now.
  if (events & (EPOLLERR | EPOLLHUP)) {
    close_now();
    return;
  }
  guarded([&] {
    if (events & EPOLLOUT) {
      writable_ = true;
      if (send_->queued() > 0) {  // chapter 05: the stack took some: send what it holds
        send_->push(worker_.loop_stats());
        last_activity_ns_ = worker_.now_ns();
      }
    }
    if (events & EPOLLRDHUP) peer_shut_write_ = true;
    if (events & (EPOLLIN | EPOLLRDHUP)) readable_ = true;
    pump();
    if (!closed_ && writable_ && (!out_.empty() || send_->queued() > 0)) flush();
  });
}

// Dispatching one more request is allowed while the pipeline has room, the answers held
// here are within budget, and the pool holds no more than this connection's share.
bool Connection::may_dispatch() const {
  return exchanges_.size() < static_cast<std::size_t>(worker_.options().max_pipeline) &&
         out_.bytes() + held_bytes_ <= static_cast<std::size_t>(ticket_->unsent_budget) &&
         worker_.may_submit(jobs_in_pool_);
}

bool Connection::wants_to_read() {
  if (lingering_) return true;
  if (peer_closed_ || close_after_flush_ || rejected_ || parser_.stopped()) return false;
  if (in_at_ < in_.size() || drain_input_taken()) return false;
  return parser_.ready().empty() && may_dispatch();
}

// Under drain: every byte sent before the stop has been parsed, and no request is half
// received (one that began before the stop is read to its end).
bool Connection::drain_input_taken() const {
  return draining_ && fed_ >= drain_end_ && !parser_.request_in_progress();
}

bool Connection::idle() {
  return exchanges_.empty() && out_.empty() && send_->queued() == 0 && parser_.ready().empty() &&
         !parser_.request_in_progress() && (draining_ ? drain_input_taken() : in_at_ == in_.size());
}

// [connection.read]
void Connection::pump() {
  if (pumping_ || closed_) return;  // an inline handler's answer got here from inside this loop
  pumping_ = true;
  auto buffer = worker_.read_buffer().first(
      std::min(worker_.read_buffer().size(), static_cast<std::size_t>(worker_.options().read_ahead_bytes)));
  for (;;) {
    dispatch_ready();
    if (closed_) break;
    if (feed_held()) continue;
    if (!readable_ || !wants_to_read()) break;
    const ssize_t n = ::recv(fd_.get(), buffer.data(), buffer.size(), 0);
    worker_.loop_stats().add(stats::Counter::syscalls);
    if (n > 0) {
      // A short read drained the socket: the next arrival raises a new edge. Not so once
      // the peer has shut its side: its EOF raised the edge already, so read on to it.
      if (static_cast<std::size_t>(n) < buffer.size() && !peer_shut_write_) readable_ = false;
      last_activity_ns_ = worker_.now_ns();
      if (!lingering_) feed_read({buffer.data(), static_cast<std::size_t>(n)});  // else discard
      continue;
    }
    readable_ = false;
    if (n == 0) {
      if (lingering_ || (exchanges_.empty() && parser_.ready().empty() && all_out())) {
        close_now();
      } else {
        peer_closed_ = true;  // half-closed: answer what was read, then close
      }
    } else if (errno == EINTR) {
      readable_ = true;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      close_now();
    }
  }
  pumping_ = false;
}
// [connection.read]

// [connection.read_ahead]
// Hand the parser what it may take of `bytes` (it stops after the first request it
// completes); returns how many it took. Under drain, bytes past the stop's end are not
// parsed unless a request that began before it is still arriving.
std::size_t Connection::feed(std::string_view bytes) {
  std::size_t offer = bytes.size();
  if (draining_ && !parser_.request_in_progress()) {
    offer = fed_ < drain_end_ ? static_cast<std::size_t>(std::min<std::uint64_t>(offer, drain_end_ - fed_)) : 0;
  }
  const std::size_t taken = offer == 0 ? 0 : parser_.feed_some(bytes.substr(0, offer), 1);
  fed_ += taken;
  return taken;
}

// A fresh read: what the parser leaves is held (copied only when a read brought more
// than one request: pipelining). Reads happen only once in_ is all taken.
void Connection::feed_read(std::string_view bytes) {
  const std::size_t taken = feed(bytes);
  if (taken < bytes.size()) {
    in_.assign(bytes.substr(taken));
    in_at_ = 0;
  }
}

// Feed the held bytes while the parser holds no request; true if it took any.
bool Connection::feed_held() {
  if (in_at_ == in_.size() || lingering_ || !parser_.ready().empty() || parser_.stopped()) return false;
  const std::size_t taken = feed(std::string_view(in_).substr(in_at_));
  in_at_ += taken;
  if (in_at_ == in_.size()) {
    std::string().swap(in_);  // all taken: hold no buffer between reads
    in_at_ = 0;
  }
  return taken > 0;
}
// [connection.read_ahead]

// [connection.dispatch]
// One request at a time, each only while may_dispatch() allows: so a single read of many
// small pipelined requests cannot start more work than the limits say.
void Connection::dispatch_ready() {
  auto& ready = parser_.ready();
  while (!ready.empty() && !closed_ && !close_after_flush_ && !lingering_ && may_dispatch()) {
    worker_.take_up_stop();  // a stop asked for makes this request the drain's (chapter 06)
    if (closed_ || lingering_) break;
    http::Request request = std::move(ready.front());
    ready.pop_front();
    const std::uint64_t seq = next_seq_++;
    exchanges_.push_back(Exchange{seq, request.is_head(), request.keep_alive, request.version_minor, false, false, {}});
    continue_pending_ = false;  // the body it was for has arrived
    worker_.dispatch(*this, seq, std::move(request));
  }
  // What follows concerns the bytes after the last complete request: only once every
  // request before them has been dispatched.
  if (closed_ || close_after_flush_ || lingering_ || !ready.empty()) return;
  if (parser_.error_status() != 0) {
    reject(parser_.error_status(), parser_.error_reason());
    return;
  }
  if (parser_.take_expect_continue()) {
    if (exchanges_.empty()) {
      queue_out(std::string(http::k100Continue));
      flush();
    } else {
      continue_pending_ = true;
    }
  }
  start_clocks();
}
// [connection.dispatch]

// The head's clock runs from its first byte, the body's (chapter 06) from the head's end;
// each stops when its part is complete. sweep() reads them.
void Connection::start_clocks() {
  if (parser_.head_in_progress()) {
    if (head_started_ns_ == 0) head_started_ns_ = worker_.now_ns();
  } else {
    head_started_ns_ = 0;
  }
  if (parser_.request_in_progress() && !parser_.head_in_progress()) {  // a body is arriving
    if (body_started_ns_ == 0) {
      body_started_ns_ = worker_.now_ns();
      body_from_ = fed_;
    }
  } else {
    body_started_ns_ = 0;
  }
}

void Connection::reject(int status, std::string_view reason) {
  if (rejected_) return;  // one error answer per connection
  rejected_ = true;       // nothing after this is read: the answer ends the connection
  const std::uint64_t seq = next_seq_++;
  exchanges_.push_back(Exchange{seq, false, false, 1, false, false, {}});
  http::Response r;
  r.status = status;
  r.body = std::string(http::reason_phrase(status)) + ": " + std::string(reason) + "\n";
  apply(seq, pool::Frame::Kind::whole, std::move(r));
}

// [connection.apply]
void Connection::apply(std::uint64_t seq, pool::Frame::Kind kind, http::Response&& r) {
  if (closed_ || exchanges_.empty() || seq < exchanges_.front().seq) return;
  const std::size_t index = seq - exchanges_.front().seq;
  if (index >= exchanges_.size()) return;
  Exchange& ex = exchanges_[index];
  if (ex.done) return;
  // Under drain the last exchange says Connection: close once no request sent before the
  // stop is left unread; earlier ones may keep alive.
  const bool last = index + 1 == exchanges_.size() && parser_.ready().empty() && drain_input_taken();
  const bool keep_alive = ex.keep_alive && !(draining_ && last);
  const std::string_view date = worker_.date();
  std::string bytes;
  switch (kind) {
    case pool::Frame::Kind::whole:
      http::write_head(bytes, r.status, r.content_type, r.headers, http::Framing::content_length, r.body.size(), date,
                       keep_alive, ex.version_minor);
      ex.keep_alive = keep_alive;
      ex.done = true;
      emit(ex, std::move(bytes));
      if (!ex.head_only && !r.body.empty()) emit(ex, std::move(r.body));
      break;
      // [connection.apply]
      // [connection.apply_stream]
    case pool::Frame::Kind::stream_head:
      // HTTP/1.0 cannot read chunks: its stream ends when the connection does.
      ex.chunked = ex.version_minor >= 1;
      ex.keep_alive = keep_alive && ex.chunked;
      http::write_head(bytes, r.status, r.content_type, r.headers,
                       ex.chunked ? http::Framing::chunked : http::Framing::until_close, 0, date, ex.keep_alive,
                       ex.version_minor);
      emit(ex, std::move(bytes));
      break;
    case pool::Frame::Kind::chunk:
      if (ex.head_only || r.body.empty()) break;
      if (ex.chunked) {
        http::write_chunk(bytes, r.body);
        emit(ex, std::move(bytes));
      } else {
        emit(ex, std::move(r.body));
      }
      break;
    case pool::Frame::Kind::end:
      if (ex.chunked && !ex.head_only) {
        http::write_last_chunk(bytes);
        emit(ex, std::move(bytes));
      }
      ex.done = true;
      break;
    case pool::Frame::Kind::abort:
      // No last chunk: the client must not mistake a failed stream for a complete one.
      ex.keep_alive = false;
      ex.done = true;
      break;
  }
  if (index == 0) {
    advance();
    flush();
  }
  pump();  // an exchange finished, or the answers held shrank: dispatch and reading may resume
}
// [connection.apply_stream]

void Connection::apply_pooled(pool::Frame& frame) {
  // The pool thread counted this body in the ticket before it sent the frame; from here
  // on emit() counts the bytes the connection holds instead.
  count_unsent(-static_cast<std::int64_t>(frame.response.body.size()));
  const bool last = frame.kind == pool::Frame::Kind::whole || frame.kind == pool::Frame::Kind::end ||
                    frame.kind == pool::Frame::Kind::abort;
  if (last) {
    --jobs_in_pool_;
    worker_.job_finished(jobs_in_pool_ == 0);
  }
  apply(frame.seq, frame.kind, std::move(frame.response));
}

// [connection.emit]
void Connection::emit(Exchange& ex, std::string&& bytes) {
  if (ex.seq == exchanges_.front().seq) {
    queue_out(std::move(bytes));
  } else {
    held_bytes_ += bytes.size();
    count_unsent(static_cast<std::int64_t>(bytes.size()));
    ex.held.push_back(std::move(bytes));
    publish_front();
  }
}

void Connection::publish_front() noexcept {
  // relaxed: budget figures a streaming handler looks at every millisecond (JobTicket);
  // they order no data. The front is the exchange written now, or the next one to come.
  ticket_->front_seq.store(exchanges_.empty() ? next_seq_ : exchanges_.front().seq, std::memory_order_relaxed);
  ticket_->held_bytes.store(static_cast<std::int64_t>(held_bytes_), std::memory_order_relaxed);
}

void Connection::queue_out(std::string&& bytes) {
  count_unsent(static_cast<std::int64_t>(bytes.size()));
  out_.push(std::move(bytes));
}

void Connection::count_unsent(std::int64_t delta) noexcept {
  // relaxed: a budget figure; a pool thread that reads it late only waits (or writes) a
  // little longer. It orders no other data: the bytes themselves travel in frames.
  ticket_->unsent_bytes.fetch_add(delta, std::memory_order_relaxed);
}
// [connection.emit]

// [connection.advance]
void Connection::advance() {
  while (!exchanges_.empty() && exchanges_.front().done) {
    const bool keep_alive = exchanges_.front().keep_alive;
    exchanges_.pop_front();
    worker_.loop_stats().add(stats::Counter::requests);
    if (!keep_alive) {
      // That answer said Connection: close, so no byte may follow it: drop the exchanges
      // behind it unanswered, and tell the pool not to start their jobs.
      close_after_flush_ = true;
      for (Exchange& ex : exchanges_) {
        for (const std::string& bytes : ex.held) count_unsent(-static_cast<std::int64_t>(bytes.size()));
      }
      held_bytes_ = 0;
      exchanges_.clear();
      ticket_->cancelled.store(true, std::memory_order_relaxed);  // relaxed: see JobTicket
      return;
    }
    if (exchanges_.empty()) break;
    for (std::string& bytes : exchanges_.front().held) {
      held_bytes_ -= bytes.size();
      out_.push(std::move(bytes));  // already counted in the ticket when it was held
    }
    exchanges_.front().held.clear();
  }
  publish_front();
  if (exchanges_.empty() && continue_pending_) {
    continue_pending_ = false;
    queue_out(std::string(http::k100Continue));
  }
}
// [connection.advance]

// [connection.flush]
// The send side (server/send_side) was chosen when the connection was made: sendmsg(2) to
// the kernel, or chapter 05's stack. Each send takes what it can from the queue's front.
void Connection::flush() {
  bool wrote = false;
  while (!out_.empty() && writable_) {
    const SendSide::Sent sent = send_->send(out_, worker_.loop_stats());
    if (sent.failed) {
      close_now();
      return;
    }
    if (sent.bytes > 0) {
      wrote = true;
      count_unsent(-static_cast<std::int64_t>(sent.bytes));
    }
    if (sent.blocked) writable_ = false;  // the output edge resumes us
  }
  if (send_->failed()) {  // a send the stack took failed later: the peer is gone
    close_now();
    return;
  }
  if (wrote) last_activity_ns_ = worker_.now_ns();
  after_flush(wrote);
}
// [connection.flush]

// What follows a flush: close or shut down once every answer is out, or read on.
void Connection::after_flush(bool wrote) {
  if (close_after_flush_ && all_out()) {
    start_lingering_close();
  } else if (peer_closed_ && exchanges_.empty() && parser_.ready().empty() && all_out()) {
    close_now();  // the client has shut its side and every answer is out
  } else if (draining_ && idle()) {
    start_lingering_close();  // input may still be arriving: a plain close would reset
  } else if (wrote) {
    pump();  // the backlog shrank: resume dispatch and reading (no new edge will say so)
  }
}

// Every answer queued is in the kernel's hands. Through a stack (chapter 05), bytes it
// accepted may still wait for a holder's deferred send or in the socket's queue: push()
// takes the lock (so the holder has run our sends) and sends the queue; what the kernel
// still refuses then raises the output edge, which calls flush() and so this again.
bool Connection::all_out() {
  if (!out_.empty()) return false;
  if (send_->queued() == 0) return true;
  return send_->push(worker_.loop_stats()) == 0;
}

// A plain close() with unread input makes the kernel send a reset, which can destroy
// the error response still in flight. So: shut our side, read and discard until the
// peer's EOF or a short deadline, then close.
void Connection::start_lingering_close() {
  if (lingering_ || closed_) return;
  ::shutdown(fd_.get(), SHUT_WR);
  worker_.loop_stats().add(stats::Counter::syscalls);
  lingering_ = true;
  linger_deadline_ns_ = worker_.now_ns() + (draining_ ? kDrainLingerNs : kLingerNs);
  pump();  // discard what was left unread; the peer's EOF closes us
}

void Connection::close_now() {
  if (closed_) return;
  closed_ = true;
  // Jobs of this connection not yet started need not run: nobody will read their answers.
  ticket_->cancelled.store(true, std::memory_order_relaxed);  // relaxed: see JobTicket
  worker_.close(*this);  // removes us from the reactor; we are destroyed after this turn
}

void Connection::begin_drain() {
  // Everything the client sent before now: what the parser took, what waits here, and
  // what waits in the socket's receive queue.
  int queued = 0;
  if (::ioctl(fd_.get(), FIONREAD, &queued) != 0) queued = 0;
  worker_.loop_stats().add(stats::Counter::syscalls);
  drain_end_ = fed_ + (in_.size() - in_at_) + static_cast<std::uint64_t>(std::max(queued, 0));
  draining_ = true;
  if (lingering_) linger_deadline_ns_ = std::min(linger_deadline_ns_, worker_.now_ns() + kDrainLingerNs);
  if (idle()) start_lingering_close();
}

// [connection.sweep]
void Connection::sweep(std::int64_t now) {
  if (closed_) return;
  const auto& o = worker_.options();
  if (lingering_) {
    if (now >= linger_deadline_ns_) close_now();
    return;
  }
  // A head is timed only while the server is willing to read it: while reading is paused
  // (answers backed up, pipeline full, pool share used) its clock restarts.
  if (head_started_ns_ != 0 && !wants_to_read()) head_started_ns_ = now;
  if (head_started_ns_ != 0 && now - head_started_ns_ > o.header_timeout_ms * kMsToNs) {
    reject(408, "the request head did not arrive in time");  // then close
    return;
  }
  // Chapter 06: a body has --body-timeout-ms, plus a second for every --body-min-rate
  // bytes it brings (mod_reqtimeout's MinRate); timed, like the head, only while read.
  if (body_started_ns_ != 0 && !wants_to_read()) {
    body_started_ns_ = now;
    body_from_ = fed_;
  }
  if (body_started_ns_ != 0) {
    const auto received = static_cast<std::int64_t>(fed_ - body_from_);
    const std::int64_t allowed = o.body_timeout_ms * kMsToNs +
                                 (o.body_min_rate > 0 ? received * 1'000'000'000 / o.body_min_rate : 0);
    if (now - body_started_ns_ > allowed) {
      reject(408, "the request body arrived too slowly");
      return;
    }
  }
  if (now - last_activity_ns_ > o.idle_timeout_ms * kMsToNs) {
    if (exchanges_.empty() && parser_.request_in_progress() && wants_to_read()) {
      reject(408, "the request body stopped arriving");
    } else if (idle() || !out_.empty() || send_->queued() > 0) {
      close_now();  // an idle keep-alive connection, or a client that stopped reading
    }
  }
}
// [connection.sweep]

}  // namespace handoff::server
