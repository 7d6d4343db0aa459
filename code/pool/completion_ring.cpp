// pool/completion_ring: the pool→loop half of a ring hand-off: frames through an MpmcRing,
// and a poke only for a loop that said it is about to wait (chapter 03).
#include "pool/completion_ring.h"

#include <thread>

namespace handoff::pool {

CompletionRing::CompletionRing(std::size_t capacity, CompletionRingSeams seams)
    : frames_(capacity), wake_(seams.fences) {}

CompletionRing::~CompletionRing() {
  Frame* frame = nullptr;
  while (frames_.try_pop(frame)) delete frame;
}

// [completion.push]
void CompletionRing::push(Frame* frame, stats::ThreadStats& stats) {
  while (!frames_.try_push(frame)) {  // the loop always drains
    std::this_thread::yield();
    stats.add(stats::Counter::syscalls);
  }
  poke_loop_if_waiting(stats);
}

void CompletionRing::poke_loop_if_waiting(stats::ThreadStats& stats) {
  // The push (or the caller's pop), a fence, then the loop's flag: reactor/wake_flag.cpp.
  wake_.poke_if_waiting(&stats, stats::Counter::completion_pokes);
}
// [completion.push]

void CompletionRing::announce_wait() noexcept { wake_.announce_wait(); }

void CompletionRing::end_wait() noexcept { wake_.end_wait(); }

std::size_t CompletionRing::drain(FrameSink& sink) {
  std::size_t answers = 0;
  Frame* frame = nullptr;
  while (frames_.try_pop(frame)) {
    if (frame->kind == Frame::Kind::whole || frame->kind == Frame::Kind::end || frame->kind == Frame::Kind::abort) {
      ++answers;
    }
    sink.on_frame(*frame);
    delete frame;
  }
  return answers;
}

void CompletionRing::take_poke(stats::ThreadStats& loop_stats) { wake_.take_poke(&loop_stats); }

bool CompletionRing::loop_waiting() const noexcept { return wake_.waiting(); }

}  // namespace handoff::pool
