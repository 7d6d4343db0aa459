// exercises/03-chained-wake: the parts of the lane that are given. Read them first.
#include "lane.h"

namespace exercise {

namespace {
constexpr std::uint64_t kOneParked = std::uint64_t{1} << 32;
constexpr std::uint64_t kOneWake = 1;
int parked_of(std::uint64_t word) { return static_cast<int>(word >> 32); }
int wakes_of(std::uint64_t word) { return static_cast<int>(word & 0xffff'ffffU); }
}  // namespace

Lane::Lane(Hooks hooks) : hooks_(std::move(hooks)) {}

// relaxed (all four): snapshots for tests, ordered by nothing.
int Lane::parked() const noexcept { return parked_of(wait_word_.load(std::memory_order_relaxed)); }
int Lane::wakes_in_flight() const noexcept { return wakes_of(wait_word_.load(std::memory_order_relaxed)); }
std::uint64_t Lane::pokes_eaten() const noexcept { return pokes_eaten_.load(std::memory_order_relaxed); }
std::uint64_t Lane::chained_wakes() const noexcept { return chained_wakes_.load(std::memory_order_relaxed); }

void Lane::submit(int job) {
  while (!ring_.try_push(job)) {
  }
  // Push, then read the word: a store then a load, ordered only by a seq_cst fence. Pairs
  // with the fence in park() between announcing and re-checking.
#if !defined(SUBMIT_WITHOUT_FENCE)  // the model's negative control on this side (CMakeLists.txt)
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  wake_one_if_parked(Waker::submit);
}

void Lane::wake_one_if_parked(Waker waker) {
  // Both counts from one load of one word; the CAS keeps two wakers from spending one
  // credit twice. relaxed: the word orders no data (the fences around the ring do).
  std::uint64_t word = wait_word_.load(std::memory_order_relaxed);
  while (parked_of(word) > wakes_of(word)) {
    if (wait_word_.compare_exchange_weak(word, word + kOneWake, std::memory_order_relaxed)) {
      // relaxed: a count for tests.
      if (waker == Waker::chain) chained_wakes_.fetch_add(1, std::memory_order_relaxed);
      wake_.poke();
      return;
    }
  }
}

void Lane::poll_lane() {
  while (wake_.try_take()) {
    // A poke sent for a parked taker, taken by this one, which is awake: its credit comes
    // back, and the taker it was sent for is not told. relaxed: a count for tests, and the
    // word orders no data. (A store, then this taker's pop and its pass_wake_on load the
    // ring: see pass_wake_on.)
    pokes_eaten_.fetch_add(1, std::memory_order_relaxed);
    wait_word_.fetch_sub(kOneWake, std::memory_order_relaxed);
  }
}

std::optional<int> Lane::take(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    poll_lane();
    int job;
    if (ring_.try_pop(job)) {
      if (hooks_.after_take) hooks_.after_take();
      pass_wake_on();
      return job;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    if (auto found = park(left)) {
      if (hooks_.after_take) hooks_.after_take();
      pass_wake_on();
      return found;
    }
  }
}

std::optional<int> Lane::park(std::chrono::milliseconds limit) {
  wait_word_.fetch_add(kOneParked, std::memory_order_relaxed);  // announce
  // The announcement must be visible before the re-check: pairs with submit()'s fence.
#if !defined(PARK_WITHOUT_FENCE)  // the model's negative control of the park (CMakeLists.txt)
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  int job;
  if (ring_.try_pop(job)) {
    wait_word_.fetch_sub(kOneParked, std::memory_order_relaxed);
    return job;
  }
  if (hooks_.before_block) hooks_.before_block();
  const bool poked = wake_.wait(limit);  // false: timed out, or a sibling read the poke first
  // Leave the parked count and give the credit back in one step (chapter 02's second lost
  // wake was these two apart).
  wait_word_.fetch_sub(kOneParked + (poked ? kOneWake : 0), std::memory_order_relaxed);
  if (hooks_.after_wake) hooks_.after_wake();
  return std::nullopt;
}

}  // namespace exercise
