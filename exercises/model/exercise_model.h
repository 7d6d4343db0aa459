// exercises/model: the ordering exercises' second grader, the learner's own file run under the
// C++ memory model (introduced with issue 42, for the exercises of chapters 02, 03 and 05).
// Role: an exercise's model (exercises/NN-slug/model/*_model.cpp) includes the exercise's
// given code and the learner's file (EXERCISE_LEARNER_FILE) after this header, so that their
// atomics are Relacy's (the Atoms seam of sync/atomics.h, relacy/relacy_atomics.h) and their
// fences too; then its thread bodies call the learner's functions. Relacy (Dmitry Vyukov's
// Relacy Race Detector) runs the threads as fibers, tries every interleaving and, for each
// load, every value the C++ memory model lets it read, which x86 never shows. The hook an
// exercise's C++ tests use to force a window plays no part here: a wrong order or a missing
// fence fails wherever the learner calls the hook.
//
// A model names its lesson where it checks it: expect(ok, "one sentence") fails the
// execution with that sentence. On a failure the runner prints the sentence, Relacy's
// history of the failing execution beneath it, and the sentence again as the last line.
#pragma once

#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <string>
#include <string_view>

// A learner writes std::atomic_thread_fence, as the chapters do; a fence the model cannot see
// would fail a correct answer. From here on that name is Relacy's fence, declared in std as
// Relacy's own relacy_std.hpp declares its names there. (Headers included before this point,
// the standard library's among them, keep the real fence.)
namespace std {
inline void handoff_model_fence(std::memory_order order, std::source_location at = std::source_location::current()) {
  handoff::models::RelacyAtomics::fence(order, at);
}
}  // namespace std
#define atomic_thread_fence handoff_model_fence

namespace exercise::model {

/// The Atoms a model builds the learner's file on: Relacy's (relacy/relacy_atomics.h), with
/// the rest of std::atomic's interface a learner may write (`++count_`, `count_ += n`,
/// `fetch_or`, `fetch_xor`, a load or store by conversion or assignment), each the same
/// operation, with the same order, as std::atomic's. A correct answer in any of these
/// spellings must build here as it builds for the tests.
struct Atoms : handoff::models::RelacyAtomics {
  template <class T>
  class atomic : public handoff::models::RelacyAtomics::atomic<T> {
    using base = handoff::models::RelacyAtomics::atomic<T>;
    using here = std::source_location;

   public:
    using base::base;
    using base::load;
    using base::store;
    T operator=(T v) {
      this->store(v);
      return v;
    }
    operator T() const { return this->load(); }  // NOLINT(google-explicit-constructor): as std::atomic's
    T operator++() { return this->fetch_add(1) + 1; }
    T operator++(int) { return this->fetch_add(1); }
    T operator--() { return this->fetch_sub(1) - 1; }
    T operator--(int) { return this->fetch_sub(1); }
    T operator+=(T v) { return this->fetch_add(v) + v; }
    T operator-=(T v) { return this->fetch_sub(v) - v; }
    /// An atomic read-modify-write, as one compare-and-swap that retries on the value it failed on.
    T fetch_or(T v, std::memory_order o = sc, here at = here::current()) {
      return rmw(o, at, [v](T old) { return old | v; });
    }
    T fetch_xor(T v, std::memory_order o = sc, here at = here::current()) {
      return rmw(o, at, [v](T old) { return old ^ v; });
    }

   private:
    template <class F>
    T rmw(std::memory_order o, const here& at, F next) {
      // The failure order: the success order without a release half (as std::atomic's rule).
      const std::memory_order fail = o == std::memory_order_acq_rel   ? std::memory_order_acquire
                                     : o == std::memory_order_release ? std::memory_order_relaxed
                                                                      : o;
      T old = this->load(std::memory_order_relaxed, at);
      while (!this->compare_exchange_strong(old, next(old), o, fail, at)) {
      }
      return old;
    }
  };
};

/// The lesson of the check that failed last (set just before Relacy's assertion fails).
inline const char*& failed_lesson() {
  static const char* lesson = nullptr;
  return lesson;
}

/// A model's check: when `ok` is false, the execution fails and `lesson` is what the
/// learner reads.
inline void expect(bool ok, const char* lesson) {
  if (!ok) failed_lesson() = lesson;
  RL_ASSERT(ok);
}

/// Time in a model (05-starved-waiter's bound). Relacy has no clock, and a real one would make
/// a verdict depend on the machine. Here time passes only while a thread sleeps, and the model
/// says how long each of its threads' sleeps last: a thread's clock moves on by its sleep's
/// length each time it comes back from a sleep (woken or timed out), and a timed sleep may end
/// by its timeout only if the thread's sleeps last that long. A thread whose sleeps last 0
/// never sees a bound pass and is never rescued by a timeout; one whose sleeps last the bound
/// is past it after its first. So the model, not the machine, decides who has waited too long.
class Clock {
 public:
  static constexpr unsigned kThreads = 8;
  /// From a model's before(): every thread's clock at 1 (a lock may take 0 for "not yet"),
  /// and the length of each thread's sleeps, by thread index (missing ones: 0).
  static void reset(std::initializer_list<std::int64_t> sleep_ns) {
    State& s = state();
    s.now.fill(1);
    s.sleep_ns.fill(0);
    unsigned i = 0;
    for (std::int64_t ns : sleep_ns) s.sleep_ns.at(i++) = ns;
  }
  /// The calling thread's time.
  static std::int64_t now_ns() { return state().now.at(rl::thread_index()); }
  /// Whether the calling thread's sleep may end by a timeout of `timeout_ns`.
  static bool may_time_out(std::int64_t timeout_ns) {
    return timeout_ns > 0 && state().sleep_ns.at(rl::thread_index()) >= timeout_ns;
  }
  /// The calling thread is back from a sleep: its clock moves on by its sleep's length.
  static void slept() { state().now.at(rl::thread_index()) += state().sleep_ns.at(rl::thread_index()); }

 private:
  struct State {
    std::array<std::int64_t, kThreads> now{};
    std::array<std::int64_t, kThreads> sleep_ns{};
  };
  static State& state() {
    static State s;
    return s;
  }
};

/// What a model says when Relacy stops on something other than expect(): a thread blocked for
/// good (a deadlock) or one that spins for ever (a livelock), each in the model's own words.
struct Verdicts {
  const char* deadlock;  ///< in the wake exercises: a thread asleep for good, a lost wake
  const char* livelock;
  const char* data_race =
      "a data race: a plain variable read and written by two threads with no "
      "happens-before between them.";
};

/// How a model is searched.
struct Search {
  rl::scheduler_type_e type;
  unsigned long long executions;  ///< the full search's upper bound, or the random scheduler's count
};

/// What one search found.
enum class Outcome {
  held,        ///< no execution broke it, over the whole search
  unfinished,  ///< a full search stopped at its bound: nothing is proven
  refuted,     ///< an execution broke one of the model's checks (expect, a deadlock, livelock or data race)
  stopped,     ///< Relacy stopped on something else (a crash, an assertion of its own)
};

/// Searches one test suite and reports in the learner's words: the lesson of a failing
/// execution, its history beneath, and the lesson again as the last line.
template <class Test>
Outcome search_one(const char* exercise, Search search, const Verdicts& verdicts) {
  // Relacy replaces operator new and delete while it runs, so nothing it writes to may
  // allocate: the search writes to a stream with no buffer, and a failing execution is run
  // once more from its saved state, with its history, to stdout, after the lesson is printed.
  std::ostream nowhere(nullptr);
  rl::test_params p;
  p.search_type = search.type;
  p.iteration_count = search.executions;
  p.execution_depth_limit = 4000;
  p.output_stream = &nowhere;
  p.progress_stream = &nowhere;
  const char* how = search.type == rl::sched_full ? "full search of every interleaving" : "random scheduler";
  std::printf("%s: the C++ memory model (Relacy, %s, up to %llu executions)\n", exercise, how, search.executions);
  std::fflush(stdout);
  failed_lesson() = nullptr;
  const bool held = rl::simulate<Test>(p);
  if (held) {
    const bool whole = search.type != rl::sched_full || p.stop_iteration < search.executions;
    std::printf("%s: held over %llu executions%s\n", exercise, static_cast<unsigned long long>(p.stop_iteration),
                !whole ? " (the search's bound, NOT every interleaving: raise it)"
                : search.type == rl::sched_full
                    ? ", every one there is: no interleaving and no value a load may read breaks it"
                    : " chosen at random");
    return whole ? Outcome::held : Outcome::unfinished;
  }
  std::string lesson;
  if (failed_lesson() != nullptr) {
    lesson = failed_lesson();
  } else if (p.test_result == rl::test_result_livelock) {
    lesson = verdicts.livelock;
  } else if (p.test_result == rl::test_result_data_race) {
    lesson = verdicts.data_race;
  } else if (p.test_result == rl::test_result_deadlock) {
    lesson = verdicts.deadlock;
  } else {
    lesson = std::string("Relacy stopped the run: ") + rl::test_result_str(p.test_result) + ".";
  }
  std::printf("FAILED: %s\n\nThe failing execution (Relacy's history; each line names the file and line):\n",
              lesson.c_str());
  std::fflush(stdout);
  rl::test_params replay;
  replay.search_type = search.type;
  replay.iteration_count = search.executions;
  replay.execution_depth_limit = p.execution_depth_limit;
  replay.initial_state = p.final_state;
  replay.collect_history = true;
  replay.output_stream = &std::cout;
  replay.progress_stream = &nowhere;
  rl::simulate<Test>(replay);
  std::cout << std::endl;
  std::printf("%s: FAILED at execution %llu: %s\n", exercise, static_cast<unsigned long long>(p.stop_iteration),
              lesson.c_str());
  const bool by_a_check = failed_lesson() != nullptr || p.test_result == rl::test_result_livelock ||
                          p.test_result == rl::test_result_deadlock || p.test_result == rl::test_result_data_race;
  return by_a_check ? Outcome::refuted : Outcome::stopped;
}

/// Runs a model's test suites in turn, each with the same search, until one fails, and
/// reports in the learner's words. Exit status 0 when every one held over its whole search,
/// 1 when one found an execution that breaks the lesson. `--expect-refuted` (the corpus of
/// wrong answers, the mutants) inverts it: 0 only for a refutation by one of the model's own
/// checks, so a model that does not build or crashes is never taken for a catch.
template <class... Tests>
int run(int argc, char** argv, const char* exercise, Search search, Verdicts verdicts) {
  const bool expect_refuted = argc > 1 && std::string_view(argv[1]) == "--expect-refuted";
  Outcome outcome = Outcome::held;
  // In order, stopping at the first suite that does not hold.
  (void)((outcome = search_one<Tests>(exercise, search, verdicts), outcome == Outcome::held) && ...);
  switch (outcome) {
    case Outcome::held:
      if (expect_refuted) std::printf("%s: A WRONG ANSWER PASSED THE MODEL\n", exercise);
      return expect_refuted ? 1 : 0;
    case Outcome::unfinished:
      return 1;
    case Outcome::refuted:
      return expect_refuted ? 0 : 1;
    case Outcome::stopped:
      if (expect_refuted) std::printf("%s: refuted, but not by one of the model's checks\n", exercise);
      return 1;
  }
  return 1;
}

}  // namespace exercise::model
