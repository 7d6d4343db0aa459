// exercises/02-try-pop: a Vyukov ring of 64-bit words, with try_pop left to you.
#pragma once

#include <cstdint>
#include <memory>

// The seam. The tests build the ring on the standard atomics (sync/atomics.h), and a cell's
// value is a plain word; the grader's model (model/word_ring_model.cpp) builds
// word_ring_push.cpp and your pop once more on Relacy's atomics, with the value a variable
// whose every read and write it checks for a data race: it defines EXERCISE_MODEL_SEAM and its
// own exercise::Atoms and exercise::Plain before it includes this header. Write a fence as
// std::atomic_thread_fence(...): the model sees it.
#ifndef EXERCISE_MODEL_SEAM
#include "sync/atomics.h"
namespace exercise {
using Atoms = handoff::sync::StdAtomics;
template <class T>
using Plain = T;
}  // namespace exercise
#endif

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
    Atoms::atomic<std::size_t> seq{0};
    Plain<std::uint64_t> value = 0;
  };
  std::size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) Atoms::atomic<std::size_t> enqueue_pos_{0};
  alignas(64) Atoms::atomic<std::size_t> dequeue_pos_{0};
};

}  // namespace exercise
