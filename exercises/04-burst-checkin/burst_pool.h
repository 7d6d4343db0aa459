// exercises/04-burst-checkin: chapter 04's QueuePool cut down to its idle queue and its
// waiters, on scripted loop turns; the check-in to write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>

namespace exercise {

/// A connection: its number, 1, 2, ... in the order the pool opened them.
using Conn = int;
/// Runs once with the connection a checkout got.
using Served = std::function<void(Conn)>;

/// A loop cut down to its ready queue: call_soon queues a callback, run_turn runs one
/// generation (the callbacks queued when the turn started; what they queue waits for the
/// next turn, as in asyncio and chapter 04's loop).
class Turns {
 public:
  void call_soon(std::function<void()> cb) { ready_.push_back(std::move(cb)); }
  /// Returns how many callbacks the turn ran.
  std::size_t run_turn();
  bool idle() const noexcept { return ready_.empty(); }

 private:
  std::deque<std::function<void()>> ready_;
};

struct PoolCounts {
  std::uint64_t opened = 0;             ///< connections opened (each a new login)
  std::uint64_t closed_on_checkin = 0;  ///< check-ins that closed their connection
  std::uint64_t waits = 0;              ///< checkouts that found the pool at its limit
};

/// code/upstream/queue_pool.h without timeouts, broken connections or real opens (an open
/// here is instant and never fails). At most pool_size + max_overflow connections are open.
class BurstPool {
 public:
  BurstPool(Turns& turns, std::size_t pool_size, std::size_t max_overflow)
      : turns_(turns), pool_size_(pool_size), max_overflow_(max_overflow) {}

  // ---- given (burst_pool.cpp)

  /// A free idle connection if there is one (`done` runs before checkout returns); else,
  /// below the limit, a new one (likewise at once); else the checkout waits, first come first
  /// served, until a check-in wakes it.
  void checkout(Served done);
  /// Connections in the idle queue, including those promised to woken waiters.
  std::size_t idle() const noexcept { return idle_.size(); }
  /// Idle connections promised to woken waiters whose callbacks have not run yet.
  std::size_t reserved() const noexcept { return reserved_; }
  std::size_t waiting() const noexcept { return waiters_.size(); }
  std::size_t open() const noexcept { return open_; }
  const PoolCounts& counts() const noexcept { return counts_; }

  // ---- the exercise (checkin.cpp)

  /// Give `c` back: keep it in the idle queue, and wake the first waiter if any wait; or
  /// close it. Which, is the exercise.
  void checkin(Conn c);

 private:
  /// Pop the first waiter and promise it the newest idle connection: reserved() grows by
  /// one and the waiter's callback is queued for a later turn, where it takes the oldest
  /// idle connection. Call it only after pushing the connection into idle_.
  void wake_first_waiter();
  /// Close `c`: counted in closed_on_checkin, and its slot is free for a new open.
  void close(Conn c);

  Conn take_idle();

  Turns& turns_;
  const std::size_t pool_size_;
  const std::size_t max_overflow_;
  std::deque<Conn> idle_;       // FIFO: checkout takes the oldest
  std::size_t reserved_ = 0;    // of idle_, promised to woken waiters that have not run
  std::deque<Served> waiters_;  // FIFO
  std::size_t open_ = 0;
  Conn next_ = 1;
  PoolCounts counts_;
};

}  // namespace exercise
