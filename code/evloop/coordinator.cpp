// evloop/coordinator: a thread between call_soon_threadsafe and the loop, seed 003's
// "before" hand-in (chapter 04).
#include "evloop/coordinator.h"

#include <poll.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "stats/thread_cpu.h"

namespace handoff::evloop {

Coordinator::Coordinator(PostQueue& loop_posts, reactor::WakeFlag& loop_wake, std::function<void()> before_forward)
    : loop_posts_(loop_posts),
      loop_wake_(loop_wake),
      before_forward_(std::move(before_forward)),
      thread_([this] { run(); }) {}

Coordinator::~Coordinator() {
  // relaxed: the fence in poke_if_waiting() orders this store before its read of the
  // coordinator's flag; pairs with the fence in announce_wait() before run()'s re-check.
  stopping_.store(true, std::memory_order_relaxed);
  wake_.poke_if_waiting(nullptr, stats::Counter::wakes_sent);
  thread_.join();
}

void Coordinator::submit(HandlePtr handle, const ReadyQueue& ready) {
  inbox_.push(std::move(handle), ready);  // the mark is read here, by the producer
  // The push, then the fence and the coordinator's flag (reactor/wake_flag.cpp): the first
  // wake-up, only for a coordinator that announced its wait.
  if (wake_.poke_if_waiting(nullptr, stats::Counter::wakes_sent)) {
    wakes_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a count, ordered by nothing
  }
}

void Coordinator::run() {
  stats::name_this_thread("loop-coord");
  std::vector<Post> batch;
  for (;;) {
    inbox_.take(batch);
    if (!batch.empty()) {
      if (before_forward_) before_forward_();
      const std::uint64_t n = batch.size();
      loop_posts_.append(batch);  // the producers' marks, in inbox order
      // release: pairs with forwarded()'s acquire; the posts counted are in the loop's queue.
      forwarded_.fetch_add(n, std::memory_order_release);
      // The second wake-up: the direct arm's push-then-poke, from this thread.
      if (loop_wake_.poke_if_waiting(nullptr, stats::Counter::wakes_sent)) {
        loop_wakes_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a count, ordered by nothing
      }
      continue;
    }
    // Park as the loop does: raise the flag and fence, then re-check the inbox and the stop.
    wake_.announce_wait();
    if (!inbox_.empty()) {
      wake_.end_wait();
      continue;
    }
    // relaxed: ordered after the flag by announce_wait()'s fence; pairs with the fence in
    // the destructor's poke_if_waiting() after its store.
    if (stopping_.load(std::memory_order_relaxed)) return;  // the inbox is empty: all forwarded
    pollfd pfd{wake_.loop_fd(), POLLIN, 0};
    while (::poll(&pfd, 1, -1) < 0) {
      if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll(coordinator)");
    }
    wake_.end_wait();
    wake_.take_poke(nullptr);
  }
}

std::uint64_t Coordinator::forwarded() const noexcept {
  return forwarded_.load(std::memory_order_acquire);  // acquire: pairs with run()'s release
}

std::uint64_t Coordinator::wakes() const noexcept {
  return wakes_.load(std::memory_order_relaxed);  // relaxed: a count, ordered by nothing
}

std::uint64_t Coordinator::loop_wakes() const noexcept {
  return loop_wakes_.load(std::memory_order_relaxed);  // relaxed: a count, ordered by nothing
}

}  // namespace handoff::evloop
