// relacy/packet_pool_model: the packet pool's tagged lock-free stack under a relaxed-memory
// checker (chapter 05; issue 39).
// Role: run the product's own PacketPool (stack/packet_pool.h: try_take() and give_back() on
// the tagged head) on Relacy's atomics (relacy/relacy_atomics.h), with two threads that take
// and give back buffers, and search the interleavings and every value the C++ memory model
// lets each load read. One thread's steps (take, take, give the first back) are the ABA
// schedule: the other, stopped in a take between reading the top's link and its CAS, sees
// the top it read back on the head, with a link that is no longer true. The promises: a buffer
// is held by one thread at a time (the model keeps an owner per buffer and asserts it at each
// take), every buffer is back in the pool once at the end (none lost, none twice), and a
// taker sees what the buffer's last holder wrote before giving it back (Relacy reports a data
// race on the buffer's contents otherwise).
//
// The negative controls: the tag not bumped (PacketPoolSeams::aba_tag = false, the seam the
// ABA unit test uses), which lets the stale CAS install a held buffer as the top; and
// give_back()'s release CAS, or try_take()'s acquire, made relaxed (CutAtomics), which lets a
// taker miss the last holder's writes. Each must be refuted.
//
//   packet_pool_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "stack/packet_pool.h"

namespace {

using handoff::models::bounded_search;
using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::stack::PacketPoolOptions;
using handoff::stack::PacketPoolSeams;

/// Three buffers, all in the lock-free pool: 0 on top, then 1, then 2.
constexpr std::uint32_t kBuffers = 3;

/// Two threads that take and give back (Relacy). Each: take a buffer, take a second, give
/// the first back, take again, and give back what it still holds. Holding a buffer, a thread
/// checks it is the only holder, reads what the last holder wrote into it and writes its own
/// mark (rl::var: the buffer's contents as the checker sees them).
template <bool Tagged, class Atoms = RelacyAtomics>
struct TakeGive : rl::test_suite<TakeGive<Tagged, Atoms>, 2> {
  static PacketPoolOptions options() {
    PacketPoolOptions o;
    o.packets = kBuffers;
    o.packet_bytes = 1;
    o.free_pool = kBuffers;
    o.refill_batch = 0;
    return o;
  }
  static PacketPoolSeams seams() {
    PacketPoolSeams s;
    s.aba_tag = Tagged;
    return s;
  }

  handoff::stack::PacketPool<Atoms> pool{options(), seams()};
  rl::var<int> contents[kBuffers];  // what a holder writes into the buffer
  int owner[kBuffers] = {};         // the model's record: 0 = free, else thread id + 1

  void before() {
    for (auto& c : contents) c($) = 0;
  }

  /// Take a buffer and use it; kNone when the pool is empty.
  std::int32_t take(unsigned id) {
    const std::int32_t b = pool.try_take();
    if (b == handoff::stack::PacketPool<Atoms>::kNone) return b;
    RL_ASSERT(owner[b] == 0);  // one holder at a time
    owner[b] = static_cast<int>(id) + 1;
    contents[b]($) = contents[b]($) + 1;  // Relacy: a data race unless after the last holder's write
    return b;
  }
  void give(std::int32_t b) {
    if (b == handoff::stack::PacketPool<Atoms>::kNone) return;
    owner[b] = 0;
    pool.give_back(static_cast<std::uint32_t>(b));
  }

  void thread(unsigned id) {
    const std::int32_t first = take(id);
    const std::int32_t second = take(id);
    give(first);
    const std::int32_t third = take(id);
    give(second);
    give(third);
  }

  void after() {
    // Every buffer is back, once each: three takes find three distinct buffers, then none.
    bool seen[kBuffers] = {};
    for (std::uint32_t i = 0; i < kBuffers; ++i) {
      const std::int32_t b = pool.try_take();
      RL_ASSERT(b != handoff::stack::PacketPool<Atoms>::kNone && !seen[b]);
      seen[b] = true;
    }
    RL_ASSERT(pool.try_take() == handoff::stack::PacketPool<Atoms>::kNone);
  }
};

/// The cuts: give_back()'s release CAS, or try_take()'s acquire load and CAS.
struct GiveRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "give_back";
};
struct TakeAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "try_take";
};

// The search: exhaustive to a context bound of 3 (every execution with up to three
// preemptions, each with every value each load may read). The full search of two threads of
// six pool operations each did not end within five minutes; the ABA schedule needs two
// preemptions (the taker stopped before its CAS, and again after the other's give-back).
constexpr unsigned kBound = 3;

SearchResult tagged() {
  return bounded_search<TakeGive<true>>("packet pool: two threads take and give back; tagged head", kBound);
}
SearchResult untagged() {
  return bounded_search<TakeGive<false>>("packet pool: the tag not bumped (a take and a give-back leave it as it was)",
                                         kBound);
}
SearchResult give_relaxed() {
  return bounded_search<TakeGive<true, CutAtomics<GiveRelease>>>("packet pool: give_back()'s release CAS made relaxed",
                                                                 kBound);
}
SearchResult take_relaxed() {
  return bounded_search<TakeGive<true, CutAtomics<TakeAcquire>>>("packet pool: try_take()'s acquire made relaxed",
                                                                 kBound);
}

constexpr Check kChecks[] = {
    {"tagged", tagged, false},
    {"untagged", untagged, true},
    {"give-relaxed", give_relaxed, true},
    {"take-relaxed", take_relaxed, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
