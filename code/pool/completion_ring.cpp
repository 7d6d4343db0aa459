// pool/completion_ring: the pool→loop half of a ring hand-off: frames through an MpmcRing,
// and a poke only for a loop that said it is about to wait (chapter 03).
#include "pool/completion_ring.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <system_error>
#include <thread>
#include <tuple>

#include "net/socket_pair.h"

namespace handoff::pool {

CompletionRing::CompletionRing(std::size_t capacity, CompletionRingOptions options)
    : options_(options), frames_(capacity) {
  std::tie(loop_end_, pool_end_) = net::datagram_pair();
}

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
  // Push (or the caller's pop), then read the loop's flag: a store then a load. Pairs with
  // the fence in announce_wait() between raising the flag and the loop's re-check.
  // (options_.fences is false only in the broken variant a stress test runs.)
  if (options_.fences) std::atomic_thread_fence(std::memory_order_seq_cst);
  // exchange: of all the threads that see the flag raised, exactly one pokes. relaxed
  // (both): the fence above orders the load; the frame itself is published by the ring.
  if (!loop_waiting_.load(std::memory_order_relaxed) || !loop_waiting_.exchange(false, std::memory_order_relaxed)) {
    return;
  }
  stats.add(stats::Counter::completion_pokes);  // before the poke: the loop it wakes sees the count
  const std::uint64_t poke = 1;
  for (;;) {
    const ssize_t n = ::send(pool_end_.get(), &poke, sizeof poke, 0);
    stats.add(stats::Counter::handoff_sends);
    stats.add(stats::Counter::syscalls);
    if (n == static_cast<ssize_t>(sizeof poke)) return;
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "send(completion poke)");
  }
}
// [completion.push]

// [completion.loop]
void CompletionRing::announce_wait() noexcept {
  // relaxed: the fence that follows orders it before the re-check's loads.
  loop_waiting_.store(true, std::memory_order_relaxed);
  // The flag must be visible before the loop re-checks the rings: a store then a load.
  // Pairs with the fence in poke_loop_if_waiting(), after a frame's push or a drop's pop.
  if (options_.fences) std::atomic_thread_fence(std::memory_order_seq_cst);
}

void CompletionRing::end_wait() noexcept {
  // relaxed: a poke sent for a wait that ends anyway costs one spurious turn; the ring is
  // drained either way.
  loop_waiting_.store(false, std::memory_order_relaxed);
}
// [completion.loop]

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

void CompletionRing::take_poke(stats::ThreadStats& loop_stats) {
  // One recv: a pool thread pokes at most once per raised flag, so there is rarely a second
  // poke, and if there is, the level-triggered descriptor reports it again next turn.
  std::uint64_t word;
  ::recv(loop_end_.get(), &word, sizeof word, MSG_DONTWAIT);
  loop_stats.add(stats::Counter::handoff_recvs);
  loop_stats.add(stats::Counter::syscalls);
}

bool CompletionRing::loop_waiting() const noexcept {
  // relaxed: a snapshot for tests, ordered by nothing.
  return loop_waiting_.load(std::memory_order_relaxed);
}

}  // namespace handoff::pool
