// exercises/02-try-pop: a Vyukov ring of 64-bit words, with try_pop left to you.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace exercise {

/// The same algorithm as handoff::sync::MpmcRing, cut down to 64-bit words so that the
/// pop can live in a .cpp of its own. Cell i holds a sequence word:
///   seq == pos             free for the producer of position pos
///   seq == pos + 1         holds the word pushed at pos, ready for its consumer
///   seq == pos + capacity  taken: free for the producer one lap on
class WordRing {
 public:
  explicit WordRing(std::size_t capacity);  // a power of two, at least 2
  bool try_push(std::uint64_t value);
  /// Take the oldest published word. False when the next cell is not yet published.
  bool try_pop(std::uint64_t& out);

 private:
  struct Cell {
    std::atomic<std::size_t> seq{0};
    std::uint64_t value = 0;
  };
  std::size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<std::size_t> enqueue_pos_{0};
  alignas(64) std::atomic<std::size_t> dequeue_pos_{0};
};

}  // namespace exercise
