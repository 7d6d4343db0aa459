// upstream/queue_pool: a connection pool with SQLAlchemy QueuePool's rules, on the event loop
// (chapter 04).
// Role: hands upstream connections to requests: at most pool_size + max_overflow open, at
// most pool_size kept idle; a connection checked in to a full idle queue is closed. Seed 003
// found its cost here: bursty turns checked more connections in than the idle queue holds
// before any woken waiter ran, so the pool closed them and opened new ones (each a login).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "evloop/event_loop.h"

namespace handoff::upstream {

/// The queue pool's size, overflow and checkout timeout (SQLAlchemy's).
struct QueuePoolOptions {
  std::size_t pool_size = 5;                 ///< the idle queue's capacity (SQLAlchemy's default 5; must be > 0)
  std::size_t max_overflow = 10;             ///< connections allowed beyond pool_size (SQLAlchemy's default 10)
  std::chrono::milliseconds timeout{30000};  ///< how long a checkout waits (SQLAlchemy's 30 s)
};

/// What a pool did: counters since it was made, gauges now. Loop thread; a server publishes
/// a copy.
struct QueuePoolCounts {
  std::uint64_t opened = 0;             ///< connections opened (each a new server session)
  std::uint64_t open_failures = 0;      ///< opens that failed (the checkout got the error)
  std::uint64_t closed_on_checkin = 0;  ///< check-ins that found the idle queue full
  std::uint64_t closed_broken = 0;      ///< check-ins of connections no longer usable
  std::uint64_t checkouts = 0;          ///< checkout() calls
  std::uint64_t waits = 0;              ///< checkouts that found the pool at its limit and queued
  std::uint64_t timeouts = 0;           ///< waits that ended in the timeout
  /// The bursts: check-ins per loop turn. checkin_turns counts the turns that had any;
  /// burst_checkins the check-ins that came after pool_size others in their turn (only a
  /// burst that long can fill the idle queue by itself); burst_max the longest burst.
  std::uint64_t checkin_turns = 0;
  std::uint64_t burst_checkins = 0;
  std::uint64_t burst_max = 0;
  std::size_t open = 0;       ///< connections open or opening now (pool_size + overflow)
  std::size_t peak_open = 0;  ///< the most `open` has been
  std::size_t idle = 0;       ///< connections in the idle queue now
};

/// A bounded pool of upstream connections on one loop, after SQLAlchemy's QueuePool.
///
/// SQLAlchemy's QueuePool (lib/sqlalchemy/pool/impl.py, with the asyncio queue of
/// AsyncAdaptedQueuePool) as callbacks on one evloop::EventLoop. Loop thread only.
///
/// Rules. checkout(): an idle connection if one is free (oldest first; `done` runs before
/// checkout returns); else, below pool_size + max_overflow open, a new one (opened through
/// the Connector); else the checkout waits, in FIFO order, for at most `timeout`.
/// checkin(): a connection no longer usable is closed (its slot goes to the first waiter as a
/// new connection, opened on the loop's next turn if someone still waits then, or is
/// freed); a usable one joins the idle queue, or is closed when the queue already holds
/// pool_size (closed_on_checkin: the overflow shrinks). A check-in into the queue wakes the
/// first waiter the way an asyncio future does: the waiter's timer is cancelled at once (a
/// served waiter never also times out, and its timer costs no wake), and the waiter takes
/// its connection when its callback runs, later in the loop. Until then the connection sits
/// in the idle queue, reserved for it (no later checkout takes it), and counts against the
/// queue's capacity: that is how a burst of check-ins in one turn fills the queue and closes
/// the rest. As in SQLAlchemy, a waiter is served only by a check-in; a slot freed by a
/// close does not wake it.
///
/// Where it differs. Left out: pool_size 0 (no limit), max_overflow -1 (no overflow limit),
/// LIFO, recycling, pre-ping. asyncio's queue lets a get() that finds the queue non-empty
/// take a connection a woken waiter has not collected yet (the waiter then queues again, at
/// the back); here it is reserved, so waiters keep their order. SQLAlchemy returns an
/// invalidated connection's record to the queue, to reconnect at its next checkout; here the
/// unusable connection is closed and its slot goes straight to a waiter.
///
/// `Conn` needs `bool usable() const`; destroying it closes it. Destroying the pool closes
/// its idle connections and drops its waiters uncalled; an open or a wake still pending then
/// finds the pool gone and does nothing (a late connection is closed). Checked-out
/// connections may outlive the pool. Cost: a checkout served from the idle queue runs its
/// callback at once; a waiter costs a list node, a timer and a call_soon.
template <class Conn>
class QueuePool {
 public:
  using ConnPtr = std::unique_ptr<Conn>;
  /// Runs once, on the loop: a connection, or null and why not.
  using Served = std::function<void(ConnPtr, std::string error)>;
  /// Opens one connection and calls its argument once, on the loop, never before returning.
  using Connector = std::function<void(Served)>;
  /// Names one checkout() call for withdraw(): its number among the pool's checkouts.
  using Ticket = std::uint64_t;

  QueuePool(evloop::EventLoop& loop, Connector connect, QueuePoolOptions options)
      : loop_(loop), connect_(std::move(connect)), options_(options) {
    if (options_.pool_size == 0) throw std::invalid_argument("QueuePool: pool_size must be > 0");
  }
  ~QueuePool() {
    for (auto& w : waiters_) w.timer.cancel();
  }
  QueuePool(const QueuePool&) = delete;
  QueuePool& operator=(const QueuePool&) = delete;

  Ticket checkout(Served done) {
    const Ticket ticket = ++counts_.checkouts;
    if (idle_.size() > reserved_) {  // a free idle connection (none is free while anyone waits)
      done(take_idle(), {});
      return ticket;
    }
    if (counts_.open < options_.pool_size + options_.max_overflow) {
      ++counts_.open;
      if (counts_.open > counts_.peak_open) counts_.peak_open = counts_.open;
      open_for(std::move(done));
      return ticket;
    }
    ++counts_.waits;
    auto it = waiters_.insert(waiters_.end(), Waiter{std::move(done), {}, ticket});
    it->timer = loop_.call_later(options_.timeout, [this, it] { time_out(it); });
    return ticket;
  }

  /// Take checkout `ticket` out of the wait queue, if it still waits there: its `done` never
  /// runs and its timer is cancelled. False (and nothing done) when it does not wait: it was
  /// served, is being opened, was woken (its connection is on its way), or timed out. Cost:
  /// a walk of the wait queue.
  bool withdraw(Ticket ticket) {
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      if (it->ticket != ticket) continue;
      it->timer.cancel();
      waiters_.erase(it);
      return true;
    }
    return false;
  }

  // [queue_pool.checkin]
  void checkin(ConnPtr conn) {
    count_burst();
    if (!conn->usable()) {
      ++counts_.closed_broken;
      conn.reset();
      if (waiters_.empty()) {
        --counts_.open;
      } else {
        // The slot passes to the first waiter, as a new connection, opened on the loop's
        // next turn rather than here: a check-in from a destructor (a coroutine destroyed
        // at the drain deadline, its lease with it) would otherwise start a connect and a
        // login for a waiter that is itself about to be destroyed, on a loop that never
        // turns again: a connection nothing owns. A waiter withdrawn before the
        // turn frees the slot instead; so does a pool destroyed before it.
        loop_.call_soon([alive = std::weak_ptr<char>(alive_), this] {
          if (alive.expired()) return;
          if (waiters_.empty()) {
            --counts_.open;
          } else {
            open_for(pop_waiter());
          }
        });
      }
      return;
    }
    // [queue_pool.checkin]
    // [queue_pool.checkin_idle]
    if (idle_.size() >= options_.pool_size) {  // the idle queue is full: close, overflow shrinks
      ++counts_.closed_on_checkin;
      --counts_.open;
      return;  // `conn` closes here
    }
    idle_.push_back(std::move(conn));
    counts_.idle = idle_.size();
    if (!waiters_.empty()) {
      ++reserved_;  // the connection waits in the queue until the woken waiter runs
      loop_.call_soon([alive = std::weak_ptr<char>(alive_), this, done = pop_waiter()] {
        if (alive.expired()) return;
        --reserved_;
        done(take_idle(), {});
      });
    }
  }
  // [queue_pool.checkin_idle]

  const QueuePoolCounts& counts() const noexcept { return counts_; }
  std::size_t waiting() const noexcept { return waiters_.size(); }
  const QueuePoolOptions& options() const noexcept { return options_; }

 private:
  /// One checkout waiting for a connection: its callback, its timer, its ticket.
  struct Waiter {
    Served done;
    evloop::Handle timer;
    Ticket ticket = 0;
  };

  // A turn is the loop's turn counter; a check-in in a new turn starts a new burst.
  void count_burst() {
    const std::uint64_t turn = loop_.counts().turns;
    if (turn != burst_turn_ || counts_.checkin_turns == 0) {
      burst_turn_ = turn;
      burst_length_ = 0;
      ++counts_.checkin_turns;
    }
    if (++burst_length_ > options_.pool_size) ++counts_.burst_checkins;
    if (burst_length_ > counts_.burst_max) counts_.burst_max = burst_length_;
  }

  ConnPtr take_idle() {
    ConnPtr c = std::move(idle_.front());
    idle_.pop_front();
    counts_.idle = idle_.size();
    return c;
  }

  Served pop_waiter() {
    Waiter w = std::move(waiters_.front());
    waiters_.pop_front();
    w.timer.cancel();
    return std::move(w.done);
  }

  // The slot is already counted in counts_.open; a failed open frees it.
  void open_for(Served done) {
    connect_([alive = std::weak_ptr<char>(alive_), this, done = std::move(done)](ConnPtr c, std::string error) {
      if (alive.expired()) return;  // the pool is gone: `c` closes here
      if (!c) {
        ++counts_.open_failures;
        --counts_.open;
        done(nullptr, std::move(error));
        return;
      }
      ++counts_.opened;
      done(std::move(c), {});
    });
  }

  void time_out(typename std::list<Waiter>::iterator it) {
    Served done = std::move(it->done);
    waiters_.erase(it);
    ++counts_.timeouts;
    done(nullptr, "QueuePool limit of size " + std::to_string(options_.pool_size) + " overflow " +
                      std::to_string(options_.max_overflow) + " reached, connection timed out, timeout " +
                      std::to_string(options_.timeout.count()) + " ms");
  }

  evloop::EventLoop& loop_;
  Connector connect_;
  QueuePoolOptions options_;
  std::deque<ConnPtr> idle_;   // FIFO: checkout takes the oldest
  std::size_t reserved_ = 0;   // idle connections promised to woken waiters that have not run
  std::list<Waiter> waiters_;  // FIFO; a list, so that a timer may hold its waiter's position
  QueuePoolCounts counts_;
  std::uint64_t burst_turn_ = 0;                            // the loop turn of the latest check-in
  std::uint64_t burst_length_ = 0;                          // check-ins in that turn so far
  std::shared_ptr<char> alive_ = std::make_shared<char>();  // callbacks outliving the pool see it expired
};

}  // namespace handoff::upstream
