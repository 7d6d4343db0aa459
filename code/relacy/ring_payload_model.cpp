// relacy/ring_payload_model: the ring's publication of its items under a relaxed-memory
// checker (chapter 03; issue 39).
// Role: run the product's own MpmcRing on Relacy's atomics with items the checker can see:
// each item is a pointer to a plain variable (an rl::var) that its producer wrote just
// before the push, and the consumer reads it just after the pop. The promise is the ring's
// first one: a consumer that pops an item sees everything its producer wrote before the
// push. It rests on one release/acquire pair: push_value's release store of the cell's
// sequence and try_pop's acquire load of it. The other models carry ints in the cells,
// which the checker does not track, so they hold with that pair made relaxed; here Relacy
// reports a data race on the payload the moment either half is cut (CutAtomics, one order
// removed from the product's code, the rest untouched).
//
//   ring_payload_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "sync/mpmc_ring.h"

namespace {

using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::full_search;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;

/// `Producers` producers and a consumer (Relacy). Each producer writes its payload and
/// pushes a pointer to it (RingPool::submit's push); the consumer pops as many times (a pool
/// thread's try_pop) and reads the payload of each item it got. Relacy reports a read of
/// the payload not ordered after its write as a data race, and the value is checked too.
template <class Atoms, unsigned Producers>
struct Payload : rl::test_suite<Payload<Atoms, Producers>, Producers + 1> {
  using Ring = handoff::sync::MpmcRing<rl::var<int>*, Atoms>;
  Ring ring{4};
  rl::var<int> payload[Producers];

  void thread(unsigned id) {
    if (id < Producers) {  // a producer: write, then publish
      payload[id]($) = static_cast<int>(id) + 1;
      const bool pushed = ring.try_push(&payload[id]);
      RL_ASSERT(pushed);
    } else {  // the consumer: pop, then read
      for (unsigned i = 0; i < Producers; ++i) {
        rl::var<int>* item = nullptr;
        if (!ring.try_pop(item)) continue;
        const int seen = (*item)($);
        RL_ASSERT(seen == (item == &payload[0] ? 1 : 2));
      }
    }
  }
};

/// The cuts: the sequence's release store in push_value, or its acquire load in try_pop.
struct PushRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "push_value";
};
struct PopAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "try_pop";
};

// One producer: the full search (a few hundred executions: each thread makes a handful of
// steps, and that is the whole space). Two producers, whose pushes contend for positions
// and may complete out of order: exhaustive to a context bound of 3 (the full search
// explores 28 million executions, about two minutes here: past CTest's budget).
SearchResult published() {
  return full_search<Payload<RelacyAtomics, 1>>("ring: payload written, pushed, popped, read");
}
SearchResult published_two() {
  return handoff::models::bounded_search<Payload<RelacyAtomics, 2>>(
      "ring: two producers' payloads written, pushed, popped, read", 3);
}
SearchResult push_relaxed() {
  return full_search<Payload<CutAtomics<PushRelease>, 1>>("ring: push_value's sequence store made relaxed");
}
SearchResult pop_relaxed() {
  return full_search<Payload<CutAtomics<PopAcquire>, 1>>("ring: try_pop's sequence load made relaxed");
}

constexpr Check kChecks[] = {
    {"published", published, false},
    {"published-two-producers", published_two, false},
    {"push-relaxed", push_relaxed, true},
    {"pop-relaxed", pop_relaxed, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
