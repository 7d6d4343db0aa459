// pool/datagram_pool: the hand-off over datagram socketpairs (chapter 01, the "before").
// Role: every job crosses a lane socketpair (the loop sends, a pool thread blocks in
// recv) and every frame of every answer crosses a completion socketpair the loop watches
// in epoll. Two syscalls per crossing, on both sides, whether or not anyone was waiting.
#pragma once

#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "net/fd.h"
#include "pool/handler_pool.h"

namespace handoff::pool {

/// The chapter 01 pool: one lane (a SOCK_DGRAM socketpair shared by all its threads: Linux
/// hands each datagram to exactly one blocked receiver) and one completion socketpair.
/// A datagram carries one pointer (a Job*, a Frame*, or null for the poison pill): the
/// payload never crosses the kernel, the ownership does.
///
/// The kernel queues only as many datagrams as the sender's SO_SNDBUF accounts for (a few
/// hundred 8-byte datagrams with the default 208 KiB), so submit() sends without blocking
/// and parks what does not fit in a backlog that drains when the lane turns writable. Pool threads send frames
/// blocking: the loop never blocks, so it always drains them, and the two sides cannot deadlock.
///
/// Shutdown: stop(deadline) runs what was submitted until the deadline, then drops what
/// has not started and lets go of threads stuck in a handler (pool/handler_slot.h); what
/// those threads touch lives in a core they share, so it outlives the pool.
class DatagramPool final : public HandlerPool {
 public:
  explicit DatagramPool(const PoolConfig& config);
  ~DatagramPool() override;

  void bind(reactor::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
            stats::ThreadStats& loop_stats) override;
  void submit(Job* job) override;
  std::size_t stop(std::int64_t deadline_ns) override;

 private:
  struct Core;
  /// One of the pool's sockets as the reactor sees it: readiness calls `handler`.
  struct Endpoint final : reactor::IoHandler {
    DatagramPool* pool = nullptr;
    void (DatagramPool::*handler)() = nullptr;
    void on_io(std::uint32_t) override { (pool->*handler)(); }
  };
  void drain_completions();
  void flush_backlog();
  bool send_to_lane(void* ptr);

  PoolConfig config_;
  std::shared_ptr<Core> core_;  // what the threads touch: shared, so a let-go thread keeps it
  reactor::Reactor* reactor_ = nullptr;
  FrameSink* sink_ = nullptr;
  stats::ThreadStats* loop_stats_ = nullptr;  // the loop thread's record (bind's caller)
  Endpoint done_endpoint_, lane_endpoint_;
  std::deque<void*> backlog_;  // jobs (and pills) the lane could not take yet
  bool watching_lane_ = false;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace handoff::pool
