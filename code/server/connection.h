// server/connection: one client connection on an event loop (chapter 01).
// Changed in chapters 05, 06: the send side chosen per connection (05), read-ahead, drain and
// the body's clock (06).
// Role: read bytes into the request parser, hand each request to the worker, and write
// the answers back in request order (pipelining), however many threads produced them and
// in whatever order they finished; bound what one client can make the server hold;
// enforce the limits and timeouts; close cleanly.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "http/request_parser.h"
#include "http/response.h"
#include "net/fd.h"
#include "pool/job.h"
#include "reactor/reactor.h"
#include "server/out_queue.h"
#include "server/send_side.h"

namespace handoff::server {

class Worker;

/// The state of one connection. Lives on its worker's loop thread only.
///
/// Every request gets an Exchange with a sequence number. Bytes for the exchange at the
/// front go straight to the output queue; bytes for a later one wait in that exchange
/// until every earlier exchange has finished, so responses leave in request order.
/// A connection never writes bytes produced for another: frames are routed by connection
/// id (never reused) and sequence number, and dropped if the connection has gone.
///
/// The socket is registered once, edge-triggered, for input and output. The connection
/// keeps its own "readable" and "writable" flags: a short read means the input was drained
/// (new data brings a new edge), and EAGAIN on send waits for the output edge. So a
/// connection never calls epoll_ctl after it is added, and epoll never re-polls a socket
/// that has nothing new, which level-triggered readiness would do on every wait. Because
/// no edge comes for input that arrived while reading was paused, every change that can
/// lift a pause (an answer written, an exchange finished, a job back from the pool) calls
/// pump(), which dispatches what was parsed and reads on while the connection wants to.
///
/// Flow control: requests are dispatched one at a time, each only while the connection
/// has fewer than --max-pipeline exchanges open, holds at most --max-unsent-bytes
/// (JobTicket::unsent_budget) bytes of answers it has not written, and has no more than its fair share of jobs in the
/// pool; otherwise parsed requests wait in the parser and reading stops. So one client
/// holds at most the budget plus one handler's answer per exchange in flight.
///
/// Read-ahead (chapter 06): the parser is handed input only while it holds no parsed
/// request, and stops at the end of the first one it completes; the bytes after it wait
/// here, unparsed, and the socket is read again only once they are all taken. So input
/// read ahead of the requests dispatched is at most one read (--read-ahead-bytes) and
/// one parsed request, however many requests a read brings.
///
/// Drain (chapter 06): at the stop, every byte the client has sent so far (in the parser,
/// held here, or in the socket's receive queue: FIONREAD) is read and its requests are
/// answered, the last one with Connection: close; nothing after those bytes is read.
class Connection final : public reactor::IoHandler {
 public:
  Connection(Worker& worker, net::Fd fd, std::uint64_t id, std::int64_t now_ns);
  /// Closes the socket (through its send side: a stack closes it under its lock).
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  std::uint64_t id() const noexcept { return id_; }
  int fd() const noexcept { return fd_.get(); }
  /// Shared with every job this connection hands to a pool (cancelled, unsent bytes).
  const std::shared_ptr<pool::JobTicket>& ticket() const noexcept { return ticket_; }
  /// Jobs handed to the pool whose last frame has not come back.
  int jobs_in_pool() const noexcept { return jobs_in_pool_; }
  void on_io(std::uint32_t events) override;

  /// Apply one piece of exchange `seq`'s answer (from an inline handler or a pool frame).
  void apply(std::uint64_t seq, pool::Frame::Kind kind, http::Response&& response);
  /// A job of this connection went to the pool.
  void job_submitted() noexcept { ++jobs_in_pool_; }
  /// Apply a frame from the pool: settle the bytes it carried in transit, and count the
  /// job finished on its last frame.
  void apply_pooled(pool::Frame& frame);
  /// Timeouts: header, idle, lingering close. Called by the worker's periodic sweep.
  void sweep(std::int64_t now_ns);
  /// The server is stopping: finish what was read, take nothing new, then close.
  void begin_drain();
  /// Close at once, answered or not (a write failed, or the drain deadline passed).
  void close_now();
  /// Run `step` (work for this connection); an allocation that fails inside it closes
  /// this connection instead of ending the process (chapter 06).
  template <class Step>
  void guarded(Step&& step) {
    try {
      step();
    } catch (const std::bad_alloc&) {
      pumping_ = false;
      close_now();
    }
  }

 private:
  /// One request in flight on the connection: its sequence and how to answer it.
  struct Exchange {
    std::uint64_t seq;
    bool head_only;   // HEAD: write the head, never the body
    bool keep_alive;  // what the request allows
    int version_minor;
    bool chunked = false;  // a stream framed in chunks (HTTP/1.1)
    bool done = false;
    std::vector<std::string> held;  // bytes waiting for earlier exchanges to finish
  };

  void pump();
  bool feed_held();
  std::size_t feed(std::string_view bytes);
  void feed_read(std::string_view bytes);
  bool drain_input_taken() const;
  void dispatch_ready();
  void start_clocks();
  void reject(int status, std::string_view reason);
  void emit(Exchange& ex, std::string&& bytes);
  void queue_out(std::string&& bytes);
  void publish_front() noexcept;
  void count_unsent(std::int64_t delta) noexcept;
  void advance();
  void flush();
  void after_flush(bool wrote);
  bool all_out();
  void start_lingering_close();
  bool may_dispatch() const;
  bool wants_to_read();
  bool idle();

  Worker& worker_;
  net::Fd fd_;
  // Where answers go, chosen when the connection is made: the kernel, or (chapter 05) the
  // worker's user-level stack model.
  std::unique_ptr<SendSide> send_;
  std::uint64_t id_;
  http::RequestParser parser_;
  std::deque<Exchange> exchanges_;
  std::uint64_t next_seq_ = 0;
  OutQueue out_;                  // bytes ready to write, in order
  std::size_t held_bytes_ = 0;    // bytes in every exchange's `held`
  std::shared_ptr<pool::JobTicket> ticket_;
  int jobs_in_pool_ = 0;
  bool readable_ = false;          // unread input may be waiting (edge-triggered: we track it)
  bool writable_ = true;           // the last send did not hit EAGAIN
  bool pumping_ = false;           // pump() is on the stack: do not re-enter it
  bool peer_shut_write_ = false;   // EPOLLRDHUP seen: an EOF waits behind the data
  std::int64_t last_activity_ns_;  // last byte read or written
  std::int64_t head_started_ns_ = 0;
  std::int64_t body_started_ns_ = 0;  // chapter 06: the body's clock (0: no body arriving)
  std::uint64_t body_from_ = 0;       // fed_ when that clock last started
  std::string in_;                    // chapter 06: bytes read and not yet taken by the parser
  std::size_t in_at_ = 0;             // of in_, the bytes already taken
  std::uint64_t fed_ = 0;             // bytes of the stream the parser has taken
  std::uint64_t drain_end_ = 0;       // under drain: the stream's length when the stop began
  std::int64_t linger_deadline_ns_ = 0;
  bool continue_pending_ = false;   // a 100 Continue is owed once earlier answers are out
  bool peer_closed_ = false;        // the client shut its side
  bool close_after_flush_ = false;  // an answer said Connection: close: nothing follows it
  bool rejected_ = false;           // an error answer is queued; read no further
  bool lingering_ = false;          // our side is shut; discarding input until EOF
  bool draining_ = false;
  bool closed_ = false;
};

}  // namespace handoff::server
