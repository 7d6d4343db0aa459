// fuzz/tallied_pool: a handler pool that counts its jobs out and back, for the connection target (chapter 01).
// Role: lets the script player run the loop until every job it handed over has answered,
// so that an input replays the same exchange of events whatever the pool thread's timing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include "pool/handler_pool.h"

namespace handoff::fuzz {

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

}  // namespace handoff::fuzz
