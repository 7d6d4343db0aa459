// relacy/resolver_cancel_model: a lookup's cancel against the resolver thread that takes it,
// under a relaxed-memory checker (chapter 04).
// Role: run the product's own CancelFlag (evloop/resolver_cancel.h) and its lock on
// Relacy's atomics and mutex, and search every interleaving and every value the C++ memory
// model lets each load read. The promise: a lookup cancelled while it waits never reaches
// the lookup function. "While it waits" needs a witness: the loop thread, after its cancel
// returns, goes on and writes something (here a relaxed flag, `moved_on`), and a resolver
// thread whose take can already see that write took the lookup after the cancel, so it
// must see the cancel too. Under the lock it does (the lock orders the cancel before or
// after the take); with the unlocked store (CancelStore::outside_lock) nothing orders the
// two, and the model must find the thread seeing the loop's later write and not the
// cancel. x86 never shows it (its stores become visible in order); the memory model allows it.
//
//   resolver_cancel_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "evloop/resolver_cancel.h"

namespace {

using handoff::evloop::CancelStore;
using handoff::models::Check;
using handoff::models::full_search;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using Flag = handoff::evloop::CancelFlag<RelacyAtomics>;

/// The loop's cancel against a resolver thread's take and check (Relacy).
template <CancelStore Where>
struct CancelTake : rl::test_suite<CancelTake<Where>, 2> {
  RelacyAtomics::mutex mu;  // Lookup::Shared::mu, the lock lookups are taken under
  Flag cancelled;
  RelacyAtomics::atomic<bool> moved_on{false};  // the witness of what the loop did after the cancel

  void thread(unsigned id) {
    if (id == 0) {  // the loop thread: Lookup::cancel, then anything
      cancelled.raise(mu, Where);
      moved_on.store(true, std::memory_order_relaxed);
    } else {  // a resolver thread: work(), its take (the queue's pop) and its check, under mu
      mu.lock();
      const bool after_cancel = moved_on.load(std::memory_order_relaxed);  // where the pop is
      const bool skipped = cancelled.seen_by_taker();
      mu.unlock();
      RL_ASSERT(!after_cancel || skipped);  // taken after the cancel returned: never run
    }
  }
};

SearchResult under_lock() { return full_search<CancelTake<CancelStore::under_lock>>("cancel under the take's lock"); }
SearchResult outside_lock() {
  return full_search<CancelTake<CancelStore::outside_lock>>("cancel by a relaxed store, no lock");
}

constexpr Check kChecks[] = {
    {"under-lock", under_lock, false},
    {"outside-lock", outside_lock, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
