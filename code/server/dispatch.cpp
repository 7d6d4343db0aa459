// server/dispatch: where a worker runs each request's handler, and how the answer gets back (chapter 01).
// Changed in chapter 04: the coroutine route, on the worker's callback loop.
// Role: the worker's three dispatch routes: inline on the loop thread, on the handler pool
// (chapter 01, whose frames come back through on_frame), or from chapter 04 as a coroutine
// on the worker's event loop; and the pool's fair share per connection. Members of Worker,
// whose loop turn is server/worker.cpp.
#include <algorithm>
#include <exception>
#include <string>
#include <utility>

#include "server/loop_responder.h"
#include "server/worker.h"

namespace handoff::server {

namespace {
/// Applies an inline handler's answer to its connection at once.
struct ApplyInline {
  Connection& conn;
  std::uint64_t seq;
  void operator()(pool::Frame::Kind kind, http::Response&& r) const { conn.apply(seq, kind, std::move(r)); }
};
}  // namespace

// [dispatch.routes]
void Worker::dispatch(Connection& conn, std::uint64_t seq, http::Request&& request) {
  const app::Router::Match match = router_.find(request.method, request.path());
  if (match.handler == nullptr && match.coroutine == nullptr) {
    http::Response r;
    r.status = match.status;
    r.body = std::string(http::reason_phrase(match.status)) + "\n";
    conn.apply(seq, pool::Frame::Kind::whole, std::move(r));
    return;
  }
  if (match.coroutine != nullptr) {  // chapter 04: on this loop, as a coroutine
    coroutines_->spawn(run_coroutine(conn.id(), seq, std::move(request), *match.coroutine));
    return;
  }
  // A route that never blocks runs here even in pool mode: queued behind slow jobs it
  // would wait for them, and it costs less than the hand-off would.
  if (options_.dispatch == Dispatch::inline_on_loop || !pool_ || (match.never_blocks && !options_.pool_all_routes)) {
    run_inline(conn, seq, request, *match.handler);
    return;
  }
  if (conn.jobs_in_pool() == 0) ++busy_connections_;
  conn.job_submitted();
  pool_->submit(new pool::Job{conn.id(), seq, std::move(request), match.handler, conn.ticket()});
}

bool Worker::may_submit(int jobs_in_pool) const noexcept {
  if (!pool_ || options_.dispatch == Dispatch::inline_on_loop || jobs_in_pool == 0) return true;
  const int share = 2 * options_.blocking_threads / std::max(1, busy_connections_);
  return jobs_in_pool < std::max(1, share);
}

void Worker::job_finished(bool conn_idle) noexcept {
  if (conn_idle) --busy_connections_;
}

void Worker::on_frame(pool::Frame& frame) {
  const auto it = connections_.find(frame.conn_id);
  if (it == connections_.end()) return;  // the connection has gone: drop its answer
  Connection& conn = *it->second;
  conn.guarded([&] { conn.apply_pooled(frame); });
}
// [dispatch.routes]

// A handler that fails is answered by LoopResponder::finish (server/loop_responder.h).
void Worker::run_inline(Connection& conn, std::uint64_t seq, const http::Request& request,
                        const http::Handler& handler) {
  LoopResponder responder(ApplyInline{conn, seq});
  std::exception_ptr error;
  try {
    handler(request, responder);
  } catch (...) {
    error = std::current_exception();
  }
  responder.finish(std::move(error), request, loop_stats_);
}

// [dispatch.coroutine]
// The coroutine's frame holds the request and the responder for as long as the handler
// runs. Its answer is routed by connection id and exchange sequence, as a pool's frames
// are: the connection may have closed while it waited, and then the answer goes nowhere.
evloop::Task<void> Worker::run_coroutine(std::uint64_t conn_id, std::uint64_t seq, http::Request request,
                                         const app::CoroutineHandler& handler) {
  LoopResponder responder(
      [this, conn_id, seq](pool::Frame::Kind kind, http::Response&& r) { apply_to(conn_id, seq, kind, std::move(r)); });
  std::exception_ptr error;
  try {
    co_await handler(request, responder, *coroutine_context_);
  } catch (...) {
    error = std::current_exception();
  }
  responder.finish(std::move(error), request, loop_stats_);
}

void Worker::apply_to(std::uint64_t conn_id, std::uint64_t seq, pool::Frame::Kind kind, http::Response&& response) {
  const auto it = connections_.find(conn_id);
  if (it == connections_.end()) return;  // the connection has gone: drop its answer
  Connection& conn = *it->second;
  conn.guarded([&] { conn.apply(seq, kind, std::move(response)); });
}
// [dispatch.coroutine]

}  // namespace handoff::server
