// sync/mpmc_ring: a bounded multi-producer, multi-consumer ring in memory (chapter 02).
// Role: the loop↔pool hand-off without a syscall: the loop pushes jobs and pool threads
// pop them; pool threads push completions and the loop pops them.
//
// The design is Dmitry Vyukov's bounded MPMC queue. Every cell carries a sequence word
// that says whose turn the cell is. For the cell at index i = pos % capacity:
//
//   seq == pos             the cell is free for the producer that claims position pos;
//   seq == pos + 1         the cell holds the item pushed at pos, ready for its consumer;
//   seq == pos + capacity  the item at pos was taken: free for the producer one lap on.
//
// Producers contend on one counter (enqueue_pos) and consumers on another (dequeue_pos),
// each with a compare-and-swap that claims ONE position. Whoever wins a position owns its
// cell alone until it stores the cell's next sequence value (release); the other side reads
// the cell only after an acquire load of that sequence has returned that value. So a reader
// never sees a half-written item, and there is no lock that could be held across a park.
//
// WHAT THE RING DOES NOT GIVE A WAKE PROTOCOL. A pool that parks threads on an empty ring
// runs two store→load sequences, one on each side:
//
//   producer:  try_push(job)                       then  load the "parked" word (poke if set)
//   consumer:  store "parked"                      then  empty() / try_pop (re-check the ring)
//
// This is the store-buffering (SB) shape: each side stores, then loads what the other
// stored. Release stores and acquire loads do NOT order a store before a LATER load (a
// store may sit in the store buffer while the load runs), so both loads can read the old
// values: the producer sees "not parked", the consumer sees "empty", and the job waits with
// nobody woken for it. The ring's own orderings are acquire/release only, and deliberately
// so (the common path pays for nothing more). Whoever parks on the ring must put a
// std::atomic_thread_fence(std::memory_order_seq_cst) between the push and its read of
// "parked", and another between its store of "parked" and its re-check of the ring: the
// ring pool's parked count does so in pool/wait_word, a loop's flag (the completion rings,
// the callback loop's posts) in reactor/wait_flag, and the elastic pool in its own code. The
// two fences are then ordered one before the other, and whichever comes second sees the
// store that precedes the first: at least one side sees the other (chapter 02 tells that
// story; chapter 03's sb-litmus probe shows the reordering the fences forbid).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "sync/atomics.h"

namespace handoff::sync {

/// A bounded MPMC ring of T, capacity a power of two (at least 2), fixed at construction.
///
/// Guarantee: every item pushed successfully is popped exactly once (if anyone pops), and
/// items come out in the order their pushes claimed positions; so two items pushed by one
/// thread, and popped by one thread, arrive in the order they were pushed. try_push and
/// try_pop never block and never allocate: each is lock-free in the usual sense that some
/// thread always completes, but NOT wait-free for a given cell: a producer that has claimed a
/// position and is descheduled before publishing it makes that cell (and so the ring, for
/// consumers) look empty until it runs again. Consumers likewise can make the ring look full.
///
/// Cost: an uncontended push or pop is one acquire load of the cell's sequence, one CAS on
/// the side's counter and one release store of the sequence: no fences, no syscalls. Under
/// contention, producers (and consumers) bounce their counter's cache line between them; the
/// two counters live on separate cache lines so that producers and consumers do not. Cells
/// are not padded: neighbouring cells share lines, the price of a compact array.
///
/// T must be nothrow move-constructible, nothrow move-assignable and nothrow destructible:
/// a claimed cell must be published whatever happens, or the ring stops at it forever. The
/// const T& push copies into a temporary BEFORE claiming a cell, so a throwing copy leaves
/// the ring untouched.
///
/// Atoms is the atomics seam (sync/atomics.h): the product's StdAtomics, or a model
/// checker's atomics, so that the models in code/relacy/ run this very ring.
template <class T, class Atoms = StdAtomics>
class MpmcRing {
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "MpmcRing<T>: a claimed cell must be published, so moving T must not throw");
  static_assert(std::is_nothrow_move_assignable_v<T>,
                "MpmcRing<T>: try_pop move-assigns into `out` between claim and publish");
  static_assert(std::is_nothrow_destructible_v<T>, "MpmcRing<T>: T must not throw when destroyed");

 public:
  /// Throws std::invalid_argument unless capacity is a power of two and at least 2. (With
  /// one cell, "published at pos" (seq pos+1) and "free for pos+1" (seq pos+1) would be the
  /// same value, and a second push would overwrite the first.)
  explicit MpmcRing(std::size_t capacity) : mask_(capacity - 1) {
    if (capacity < 2 || (capacity & (capacity - 1)) != 0) {
      throw std::invalid_argument("MpmcRing: capacity must be a power of two and at least 2, got " +
                                  std::to_string(capacity));
    }
    if constexpr (std::is_same_v<Atoms, StdAtomics>) {  // a model's atomics have their own layout
      static_assert(std::is_standard_layout_v<Counters>);
      static_assert(offsetof(Counters, dequeue_pos) - offsetof(Counters, enqueue_pos) >= 64,
                    "producers' and consumers' counters must not share a cache line");
      static_assert(alignof(Counters) >= 64 && sizeof(Counters) % 64 == 0,
                    "nothing else may share the consumers' counter's cache line");
    }
    cells_ = std::make_unique<Cell[]>(capacity);
    for (std::size_t i = 0; i < capacity; ++i) {
      // relaxed: nobody else can see the ring until the constructor returns, and whatever
      // hands the ring to other threads (a thread start, a mutex) orders these stores.
      cells_[i].seq.store(i, std::memory_order_relaxed);
    }
  }

  /// Destroys the items still in the ring. No other thread may be using it.
  ~MpmcRing() {
    // relaxed (both): the destructor runs after every user has finished, and whatever told
    // this thread so (a join) already ordered their operations before this point.
    std::size_t pos = counters_.dequeue_pos.load(std::memory_order_relaxed);
    const std::size_t end = counters_.enqueue_pos.load(std::memory_order_relaxed);
    for (; pos != end; ++pos) {
      Cell& cell = cells_[pos & mask_];
      // relaxed: as above; no push can be half done once every user has gone.
      if (cell.seq.load(std::memory_order_relaxed) == pos + 1) cell.item()->~T();
    }
  }

  MpmcRing(const MpmcRing&) = delete;
  MpmcRing& operator=(const MpmcRing&) = delete;

  /// Moves v into the ring. Returns false (v untouched) when the ring is full.
  bool try_push(T&& v) noexcept { return push_value(v); }

  /// Copies v into the ring. Returns false when the ring is full. The copy is made before a
  /// cell is claimed, so if it throws, the exception escapes and the ring is unchanged.
  bool try_push(const T& v) {
    T copy(v);
    return push_value(copy);
  }

  /// Moves the oldest published item into out. Returns false (out untouched) when the next
  /// cell to pop is not yet published: the ring is empty, or a push is half done.
  bool try_pop(T& out) noexcept {
    // relaxed: the counter only chooses a candidate position; the acquire load of the cell's
    // sequence below is what orders our read of the item after the producer's write.
    std::size_t pos = counters_.dequeue_pos.load(std::memory_order_relaxed);
    Cell* cell;
    for (;;) {
      cell = &cells_[pos & mask_];
      // acquire: pairs with the release store of seq = pos + 1 at the end of push_value, so
      // the item the producer constructed is visible before we move it out.
      const std::size_t seq = cell->seq.load(std::memory_order_acquire);
      const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
      if (dif == 0) {
        // relaxed: the CAS only arbitrates which consumer owns position pos (its
        // atomicity alone makes the winner unique); it publishes nothing and reads no data.
        // The acquire above already ordered the item. On failure pos is reloaded.
        if (counters_.dequeue_pos.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed,
                                                        std::memory_order_relaxed)) {
          break;
        }
      } else if (dif < 0) {
        return false;  // not yet published at pos: empty (or a producer is mid-push)
      } else {
        // Another consumer took pos already: our counter value was stale.
        // relaxed: as at the top, a candidate only.
        pos = counters_.dequeue_pos.load(std::memory_order_relaxed);
      }
    }
    T* item = cell->item();
    out = std::move(*item);
    item->~T();
    // release: pairs with the acquire load of seq in push_value by the producer one lap on
    // (position pos + capacity): our move out of the cell and the destruction happen before
    // that producer constructs a new item in the same storage.
    cell->seq.store(pos + mask_ + 1, std::memory_order_release);
    return true;
  }

  /// True when the next cell to pop is not yet published. A cell that a producer has
  /// claimed but not yet published counts as empty (a try_pop now would return false).
  /// A snapshot: another thread may push or pop the moment after it returns. It is the
  /// re-check of a parking consumer; see the top of this file for the fence it needs.
  bool empty() const noexcept {
    for (;;) {
      // relaxed: chooses which cell to look at; the answer comes from that cell's sequence.
      const std::size_t pos = counters_.dequeue_pos.load(std::memory_order_relaxed);
      // acquire: pairs with push_value's release store of seq = pos + 1, so a caller that
      // sees "not empty" and then pops also sees the item. (It does NOT order an earlier
      // store of the caller's before this load: that takes a seq_cst fence, as said above.)
      const std::size_t seq = cells_[pos & mask_].seq.load(std::memory_order_acquire);
      const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
      if (dif == 0) return false;  // published: a pop would find it
      if (dif < 0) return true;    // not yet published
      // dif > 0: a consumer took pos after we read the counter; look again.
    }
  }

  std::size_t capacity() const noexcept { return mask_ + 1; }

  /// The consumer counter: how many pops have claimed a cell so far (a claimed pop completes
  /// without waiting on anyone). It only grows. Chapter 03's age check reads it from another
  /// thread to see whether the ring is draining.
  std::uint64_t pops() const noexcept {
    // relaxed: a progress figure compared with an earlier reading of itself; coherence
    // alone keeps one reader's readings from going backwards. It orders nothing else; a
    // caller that must order it against its own stores adds the fence itself.
    return static_cast<std::uint64_t>(counters_.dequeue_pos.load(std::memory_order_relaxed));
  }

  /// Items claimed by pushes and not yet claimed by pops, clamped to [0, capacity]. Only a
  /// hint while other threads run: the two counters are not read at one instant.
  std::size_t size_approx() const noexcept {
    // relaxed (both): a statistic; consumers read first so that the usual interleavings
    // make enqueue ≥ dequeue, and the clamps below cover the rest.
    const std::size_t deq = counters_.dequeue_pos.load(std::memory_order_relaxed);
    const std::size_t enq = counters_.enqueue_pos.load(std::memory_order_relaxed);
    if (enq <= deq) return 0;
    const std::size_t n = enq - deq;
    return n > capacity() ? capacity() : n;
  }

 private:
  /// One slot: its sequence number and room for one item.
  struct Cell {
    typename Atoms::template atomic<std::size_t> seq{0};
    alignas(T) unsigned char storage[sizeof(T)];  // NOLINT(bugprone-sizeof-expression): T may be a pointer
    T* item() noexcept { return std::launder(reinterpret_cast<T*>(storage)); }
  };

  // The producers' and the consumers' counters, a cache line each.
  //
  // The producers' counter and the consumers' counter, each on its own 64-byte line (64 is
  // the line on x86-64 and most arm64 cores; g++ 12 warns that the interference-size
  // constants may change between builds, so we do not use them). The struct is aligned to
  // 64, so whatever follows it in memory starts on a fresh line too.
  struct Counters {
    alignas(64) typename Atoms::template atomic<std::size_t> enqueue_pos{0};
    alignas(64) typename Atoms::template atomic<std::size_t> dequeue_pos{0};
  };  // the layout is checked in the constructor (for the product's atomics)

  bool push_value(T& v) noexcept {
    // relaxed: the counter only chooses a candidate position; the acquire load of the
    // cell's sequence below is what orders our write after the previous lap's read.
    std::size_t pos = counters_.enqueue_pos.load(std::memory_order_relaxed);
    Cell* cell;
    for (;;) {
      cell = &cells_[pos & mask_];
      // acquire: pairs with try_pop's release store of seq = pos by the consumer of position
      // pos - capacity (the previous lap; on the first lap the constructor set it): that
      // consumer's move out of the cell and destruction of the old item happen before we
      // construct the new one in the same storage.
      const std::size_t seq = cell->seq.load(std::memory_order_acquire);
      const auto dif = static_cast<std::ptrdiff_t>(seq - pos);
      if (dif == 0) {
        // relaxed: the CAS only arbitrates which producer owns position pos; the item is
        // published by the release store of the cell's sequence, not by this counter.
        // On failure pos is reloaded.
        if (counters_.enqueue_pos.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed,
                                                        std::memory_order_relaxed)) {
          break;
        }
      } else if (dif < 0) {
        return false;  // the previous lap's item is still there (or being taken): full
      } else {
        // Another producer took pos already: our counter value was stale.
        // relaxed: as at the top, a candidate only.
        pos = counters_.enqueue_pos.load(std::memory_order_relaxed);
      }
    }
    ::new (static_cast<void*>(cell->storage)) T(std::move(v));
    // release: pairs with the acquire load of seq in try_pop (and in empty()): the item's
    // construction happens before any consumer that sees pos + 1 reads it.
    cell->seq.store(pos + 1, std::memory_order_release);
    return true;
  }

  // Read-only after construction, shared by both sides: on the object's first line.
  std::unique_ptr<Cell[]> cells_;
  std::size_t mask_;
  Counters counters_;
};

}  // namespace handoff::sync
