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

#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

// A learner writes std::atomic_thread_fence, as the chapters do; a fence the model cannot see
// would fail a correct answer. From here on that name is Relacy's fence, declared in std as
// Relacy's own relacy_std.hpp declares its names there. (Headers included before this point,
// the standard library's among them, keep the real fence.)
namespace std {
inline void handoff_model_fence(std::memory_order order,
                                std::source_location at = std::source_location::current()) {
  handoff::models::RelacyAtomics::fence(order, at);
}
}  // namespace std
#define atomic_thread_fence handoff_model_fence

namespace exercise::model {

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

/// What a model says when Relacy stops on something other than expect(): a thread blocked for
/// good (a deadlock) or one that spins for ever (a livelock), each in the model's own words.
struct Verdicts {
  const char* deadlock;  ///< in the wake exercises: a thread asleep for good, a lost wake
  const char* livelock;
  const char* data_race = "a data race: a plain variable read and written by two threads with no "
                          "happens-before between them.";
};

/// How a model is searched.
struct Search {
  rl::scheduler_type_e type;
  unsigned long long executions;  ///< the full search's upper bound, or the random scheduler's count
};

/// Runs one model and reports in the learner's words. Exit status 0 when the model held over
/// the whole search, 1 when it found an execution that breaks the lesson. `--expect-refuted`
/// (the corpus of wrong answers, the mutants) inverts it: 0 only for a refutation by one of the
/// model's own checks, so a model that does not build or crashes is never taken for a catch.
template <class Test>
int run(int argc, char** argv, const char* exercise, Search search, Verdicts verdicts) {
  const bool expect_refuted = argc > 1 && std::string_view(argv[1]) == "--expect-refuted";
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
  const char* how = search.type == rl::sched_full ? "full search of every interleaving"
                                                  : "random scheduler";
  std::printf("%s: the C++ memory model (Relacy, %s, up to %llu executions)\n", exercise, how, search.executions);
  std::fflush(stdout);
  failed_lesson() = nullptr;
  const bool held = rl::simulate<Test>(p);
  if (held) {
    const bool whole = search.type != rl::sched_full || p.stop_iteration < search.executions;
    std::printf("%s: held over %llu executions%s\n", exercise, static_cast<unsigned long long>(p.stop_iteration),
                !whole ? " (the search's bound, NOT every interleaving: raise it)"
                : search.type == rl::sched_full ? ", every one there is: no interleaving and no value a load may read breaks it"
                                                : " chosen at random");
    if (!whole) return 1;
    if (expect_refuted) std::printf("%s: A WRONG ANSWER PASSED THE MODEL\n", exercise);
    return expect_refuted ? 1 : 0;
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
  if (expect_refuted && failed_lesson() == nullptr && p.test_result != rl::test_result_livelock &&
      p.test_result != rl::test_result_deadlock && p.test_result != rl::test_result_data_race) {
    std::printf("%s: refuted, but not by one of the model's checks\n", exercise);
    return 1;
  }
  return expect_refuted ? 0 : 1;
}

}  // namespace exercise::model
