// upstream/pg_await: the upstream as a coroutine waits for: a pool checkout, a scoped lease,
// a query (chapter 04).
// Role: let a request handler read "check out, query, query, check in" as straight-line code
// on the loop: `co_await checkout(pool)` gives a Lease that checks its connection back in
// when it goes out of scope, `co_await query(*lease, sql, params)` gives the statement's
// PgResult. A frame destroyed while it waits (a drain deadline) leaves no connection behind
// and is never resumed.
#pragma once

#include <coroutine>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "upstream/pg_connection.h"
#include "upstream/queue_pool.h"

namespace handoff::upstream {

/// What `co_await checkout(pool)` throws when the pool gives no connection: its checkout
/// timed out, or opening a connection failed (the message says which).
class CheckoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A checked-out connection, held for one scope: destroying the lease (or release()) checks
/// the connection in, and the pool's check-in rules decide its fate: back to the idle queue,
/// closed because the queue is full, or closed because it is no longer usable (a query still
/// in flight, a broken session). The pool must outlive the lease. Loop thread.
template <class Conn>
class [[nodiscard]] Lease {
 public:
  Lease() = default;
  Lease(QueuePool<Conn>& pool, std::unique_ptr<Conn> conn) : pool_(&pool), conn_(std::move(conn)) {}
  Lease(Lease&& other) noexcept : pool_(other.pool_), conn_(std::move(other.conn_)) {}
  Lease& operator=(Lease&& other) noexcept {
    if (this != &other) {
      release();
      pool_ = other.pool_;
      conn_ = std::move(other.conn_);
    }
    return *this;
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() { release(); }

  Conn& operator*() const noexcept { return *conn_; }
  Conn* operator->() const noexcept { return conn_.get(); }
  explicit operator bool() const noexcept { return conn_ != nullptr; }

  /// Check the connection in now (a no-op when there is none).
  void release() {
    if (conn_) pool_->checkin(std::move(conn_));
  }

 private:
  QueuePool<Conn>* pool_ = nullptr;
  std::unique_ptr<Conn> conn_;
};

/// `co_await checkout(pool)`: a Lease on a connection, or CheckoutError thrown.
///
/// The pool may serve the checkout inside checkout() itself (an idle connection is free):
/// then the coroutine goes on without suspending (await_suspend answers false), as asyncio's
/// queue get() does not yield when an item is there. Otherwise it resumes from the pool's
/// callback. Destroyed while it waits, the awaiter withdraws its place in the wait queue;
/// if its connection is already on its way (being opened, or reserved for it by a check-in
/// whose wake has not run), the connection is checked in when it arrives, so no slot of the
/// pool is lost to a frame that is gone. The pool must outlive the awaiter.
///
/// Cost: one shared state per checkout (the pool's callback may outlive the frame).
template <class Conn>
class [[nodiscard]] CheckoutAwaiter {
 public:
  explicit CheckoutAwaiter(QueuePool<Conn>& pool) : pool_(pool) {}
  CheckoutAwaiter(const CheckoutAwaiter&) = delete;
  CheckoutAwaiter& operator=(const CheckoutAwaiter&) = delete;
  ~CheckoutAwaiter() {
    // state_ is null unless the frame is destroyed while it waits (await_resume takes it).
    if (!state_) return;
    state_->abandoned = true;  // a callback still to come checks its connection in,
    pool_.withdraw(ticket_);   // or never comes: it waited in the queue
  }

  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<> waiter) {
    state_ = std::make_shared<State>();
    state_->waiter = waiter;
    ticket_ = pool_.checkout([state = state_, pool = &pool_](std::unique_ptr<Conn> c, std::string error) {
      if (state->abandoned) {  // the frame is gone: the connection goes back, nobody resumes
        if (c) pool->checkin(std::move(c));
        return;
      }
      state->conn = std::move(c);
      state->error = std::move(error);
      state->arrived = true;
      if (state->suspended) state->waiter.resume();
    });
    if (state_->arrived) return false;  // served inside checkout(): go on without suspending
    state_->suspended = true;
    return true;
  }
  Lease<Conn> await_resume() {
    std::shared_ptr<State> state = std::move(state_);
    if (!state->conn) throw CheckoutError(state->error);
    return Lease<Conn>(pool_, std::move(state->conn));
  }

 private:
  /// What the awaiter and the pool's callback share: the connection (or error), and who went first.
  struct State {
    std::coroutine_handle<> waiter;
    std::unique_ptr<Conn> conn;
    std::string error;
    bool arrived = false;    // the pool's callback has run
    bool suspended = false;  // await_suspend has returned true: the callback resumes
    bool abandoned = false;  // the awaiter was destroyed first
  };
  QueuePool<Conn>& pool_;
  std::shared_ptr<State> state_;
  typename QueuePool<Conn>::Ticket ticket_ = 0;
};

template <class Conn>
CheckoutAwaiter<Conn> checkout(QueuePool<Conn>& pool) {
  return CheckoutAwaiter<Conn>(pool);
}

/// `co_await query(conn, sql, params)`: the statement's PgResult (an error is in it, never
/// thrown). PgConnection calls back only after query() returns, so the coroutine always
/// suspends. Destroyed while the statement runs, the awaiter leaves the connection's
/// callback resuming nobody; the connection stays busy (not usable()) until the result
/// arrives, so a lease checked in meanwhile closes it. Cost: one shared state per query.
class [[nodiscard]] QueryAwaiter {
 public:
  QueryAwaiter(PgConnection& conn, std::string sql, std::vector<std::string> params)
      : conn_(conn), sql_(std::move(sql)), params_(std::move(params)) {}
  QueryAwaiter(const QueryAwaiter&) = delete;
  QueryAwaiter& operator=(const QueryAwaiter&) = delete;
  ~QueryAwaiter() {
    if (state_) state_->waiter = {};
  }

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> waiter) {
    state_ = std::make_shared<State>();
    state_->waiter = waiter;
    conn_.query(sql_, params_, [state = state_](PgResult r) {
      state->result = std::move(r);
      if (state->waiter) std::exchange(state->waiter, {}).resume();
    });
  }
  PgResult await_resume() { return std::move(std::exchange(state_, {})->result); }

 private:
  /// What the awaiter and the query's callback share.
  struct State {
    std::coroutine_handle<> waiter;  // null once resumed, or once the awaiter is gone
    PgResult result;
  };
  PgConnection& conn_;
  std::string sql_;
  std::vector<std::string> params_;
  std::shared_ptr<State> state_;
};

inline QueryAwaiter query(PgConnection& conn, std::string sql, std::vector<std::string> params = {}) {
  return QueryAwaiter(conn, std::move(sql), std::move(params));
}

}  // namespace handoff::upstream
