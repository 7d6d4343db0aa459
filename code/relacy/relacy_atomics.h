// relacy/relacy_atomics: the atomics seam's model-checker side: Relacy's atomics behind the
// interface of sync/atomics.h, with a modelled futex and clock (chapter 03).
// Role: instantiate the product's protocol templates (the ring, the wait word, the flags)
// with atomics that Relacy Race Detector (Debian's relacy-dev, by Dmitry Vyukov) controls:
// it runs the test's threads as fibers, picks every interleaving (full search) and, for
// each load, any value the C++ memory model allows it to read, not only what x86 would
// show. A store-buffering outcome that a fence forbids is then reported as a failure with
// its history. Each operation records the caller's file and line (std::source_location),
// so a failure's history names the product's own lines.
//
// Include this header before anything else that includes <relacy/relacy.hpp>: Relacy
// spells its orders as macros (memory_order_relaxed → `mo_relaxed, $`) and replaces new,
// delete and malloc; those would rewrite the product's headers, so they are undefined here
// and the product's code keeps std::memory_order. (Memory is then not tracked by Relacy;
// the models check orderings, not leaks.)
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>  // before Relacy, whose sem_* macros would rewrite what <thread> includes

#include <relacy/relacy.hpp>

#undef memory_order_relaxed
#undef memory_order_consume
#undef memory_order_acquire
#undef memory_order_release
#undef memory_order_acq_rel
#undef memory_order_seq_cst
#undef new
#undef delete
#undef malloc
#undef calloc
#undef realloc
#undef free

namespace handoff::models {

constexpr rl::memory_order to_rl(std::memory_order order) noexcept {
  switch (order) {
    case std::memory_order_relaxed:
      return rl::mo_relaxed;
    case std::memory_order_consume:
      return rl::mo_consume;
    case std::memory_order_acquire:
      return rl::mo_acquire;
    case std::memory_order_release:
      return rl::mo_release;
    case std::memory_order_acq_rel:
      return rl::mo_acq_rel;
    case std::memory_order_seq_cst:
      return rl::mo_seq_cst;
  }
  return rl::mo_seq_cst;
}

inline rl::debug_info where(const std::source_location& at) noexcept {
  return rl::debug_info(at.function_name(), at.file_name(), at.line());
}

/// The clock a protocol reads through the seam's now_ns() in a model: time passes only when
/// a timed FUTEX_WAIT times out, and then by exactly its timeout. So a bound on elapsed time
/// (the stack lock's starvation bound) is reached by a waiter that slept it out, or by one
/// that another's timeout carried past it, and a waiter woken before its timeout finds no
/// time passed; the search explores each timeout (Relacy's timed wait may time out at any
/// step) as it explores a schedule. Each execution starts it at 1 ns (reset(), from the
/// test's before()). A plain variable: Relacy's threads are fibers of one OS thread, and
/// the clock is no memory location of the protocol's.
struct ModelClock {
  std::int64_t now_ns = 1;

  void reset() noexcept { now_ns = 1; }
};
inline ModelClock model_clock;

/// The Atoms policy of sync/atomics.h over Relacy. Objects holding these atomics must be
/// built inside a Relacy test (as members of the test suite, or in its before()).
struct RelacyAtomics {
  using here = std::source_location;
  static constexpr auto sc = std::memory_order_seq_cst;

  template <class T>
  class atomic {
   public:
    atomic(T value = T(), here at = here::current()) { a_.store(value, rl::mo_relaxed, where(at)); }
    atomic(const atomic&) = delete;
    atomic& operator=(const atomic&) = delete;

    T load(std::memory_order o = sc, here at = here::current()) const { return a_.load(to_rl(o), where(at)); }
    void store(T v, std::memory_order o = sc, here at = here::current()) { a_.store(v, to_rl(o), where(at)); }
    T exchange(T v, std::memory_order o = sc, here at = here::current()) { return a_.exchange(v, to_rl(o), where(at)); }
    T fetch_add(T v, std::memory_order o = sc, here at = here::current()) {
      return a_.fetch_add(v, to_rl(o), where(at));
    }
    T fetch_sub(T v, std::memory_order o = sc, here at = here::current()) {
      return a_.fetch_sub(v, to_rl(o), where(at));
    }
    T fetch_and(T v, std::memory_order o = sc, here at = here::current()) {
      return a_.fetch_and(v, to_rl(o), where(at));
    }
    // A weak compare-and-swap is searched as a strong one. Every weak CAS in the product
    // sits in a retry loop that re-reads the value it failed on, so a spurious failure only
    // repeats a step; letting Relacy branch on it at each try makes a full search endless.
    bool compare_exchange_weak(T& expected, T desired, std::memory_order o = sc, here at = here::current()) {
      return a_.compare_exchange_strong(expected, desired, to_rl(o), where(at));
    }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                               here at = here::current()) {
      return a_.compare_exchange_strong(expected, desired, to_rl(success), where(at), to_rl(failure), where(at));
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order o = sc, here at = here::current()) {
      return a_.compare_exchange_strong(expected, desired, to_rl(o), where(at));
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                 here at = here::current()) {
      return a_.compare_exchange_strong(expected, desired, to_rl(success), where(at), to_rl(failure), where(at));
    }

    /// FUTEX_WAIT on this word (RelacyAtomics::futex_wait says how it is modelled).
    void futex_wait(T expected, std::int64_t timeout_ns, here at) {
      rl::context& c = rl::ctx();
      c.sched();
      c.atomic_thread_fence_seq_cst();
      T now;
      {
        rl::preemption_disabler no_switch(c);
        now = a_.load(rl::mo_acquire, where(at));
      }
      if (now != expected) return;  // EWOULDBLOCK
      if (a_.wait(c, timeout_ns > 0, false, where(at)) == rl::unpark_reason_timeout) model_clock.now_ns += timeout_ns;
    }
    /// FUTEX_WAKE of one sleeper on this word.
    void futex_wake_one(here at) {
      rl::context& c = rl::ctx();
      c.sched();
      c.atomic_thread_fence_seq_cst();
      a_.wake(c, 1, where(at));
    }

   private:
    mutable rl::atomic<T> a_;
  };

  static void fence(std::memory_order o, here at = here::current()) { rl::atomic_thread_fence(to_rl(o), where(at)); }

  /// A plain variable of the protocol's that the checker follows: the value is held as a T,
  /// and each read or write also reads or writes a shadow rl::var, so that Relacy reports a
  /// data race when two threads' accesses are not ordered by the protocol's atomics (a T of
  /// any type: Relacy's own var needs one it can print).
  template <class T>
  class plain {
   public:
    plain(T value = T()) : value_(value), shadow_(0) {}
    plain(const plain&) = delete;
    plain& operator=(const T& value) {
      shadow_(where(here::current())) = 0;
      value_ = value;
      return *this;
    }
    operator T() const {
      static_cast<void>(static_cast<int>(shadow_(where(here::current()))));
      return value_;
    }

   private:
    T value_;
    rl::var<int> shadow_;
  };

  /// The futex, modelled as Relacy's own futex (relacy/stdlib/pthread.hpp) models it: a
  /// FUTEX_WAIT is one step of the scheduler (no other thread runs inside it) made of a
  /// seq_cst fence, a load of the word and, if the load returned `expected`, a block on
  /// the word's wait set; a FUTEX_WAKE is a seq_cst fence and an unblock of one thread in
  /// that set. The fences stand for the kernel's (futex(2)'s wait side takes the bucket
  /// lock and then orders its read of the word after a full barrier; its wake side has the
  /// matching barrier before it looks for waiters), so a waker that changed the word before
  /// its FUTEX_WAKE either is seen by the wait's load or finds the waiter in the set. A
  /// sleeper nobody wakes stays blocked, and when no thread can run Relacy reports a
  /// deadlock: a lost wake refutes the model. Not searched: spurious returns (each only
  /// repeats a caller's look, and they would make a full search endless); a wait with a
  /// timeout may time out (Relacy's timed wait), and then the model clock (ModelClock) has
  /// moved by its timeout.
  static void futex_wait(atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns,
                         here at = here::current()) {
    word.futex_wait(expected, timeout_ns, at);
  }
  static void futex_wake_one(atomic<std::uint32_t>& word, here at = here::current()) { word.futex_wake_one(at); }

  /// The modelled clock (ModelClock): time passes only as a timed wait times out.
  static std::int64_t now_ns() { return model_clock.now_ns; }

  /// Relacy's mutex: its lock and unlock are the acquire and release a checker follows
  /// (std::lock_guard calls them with the guard's line).
  class mutex {
   public:
    void lock(here at = here::current()) { m_.lock(where(at)); }
    void unlock(here at = here::current()) { m_.unlock(where(at)); }

   private:
    rl::mutex m_;
  };
};

/// What a broken variant cuts from the product's code (CutAtomics).
enum class Cut {
  fence,    ///< a thread fence is skipped
  release,  ///< a store's or read-modify-write's release half is dropped (release → relaxed, acq_rel → acquire)
  acquire,  ///< a load's or read-modify-write's acquire half is dropped (acquire → relaxed, acq_rel → release)
  split,    ///< an exchange is done as a load and then a store (same orders): it is no longer one step
};

/// Whether a cut was asked for and whether it applied, for the search's report
/// (run_search): a broken variant whose cut never applied tests nothing.
struct CutRecord {
  bool in_use = false;             ///< an atomic or fence of a CutAtomics policy was used
  unsigned long long applied = 0;  ///< operations the cut weakened or skipped
};
inline CutRecord cut_record;

/// RelacyAtomics with ONE ordering removed from the product's code, selected by the
/// function it stands in: `Where::cut` says what, `Where::function` names the function (its
/// bare name, e.g. "claim_wake_after_push"). Every other operation is RelacyAtomics'. A
/// broken variant made this way changes no line of the product: the cut falls on the very
/// fence or order the chapter explains, alone, and the search must refute it. The cut
/// records each time it applies; a variant whose cut never applied fails its check (the
/// function was renamed or is never reached), so it cannot pass vacuously.
template <class Where>
struct CutAtomics {
  using here = std::source_location;
  static constexpr auto sc = std::memory_order_seq_cst;

  /// True when `at` lies in the function the cut names.
  static bool in_cut(const here& at) {
    const std::string_view fn = at.function_name();
    const std::string needle = std::string("::") + Where::function + "(";
    cut_record.in_use = true;
    return fn.find(needle) != std::string_view::npos;
  }
  static std::memory_order weaken(std::memory_order o, const here& at) {
    std::memory_order w = o;
    if (Where::cut == Cut::release) {
      if (o == std::memory_order_release) w = std::memory_order_relaxed;
      if (o == std::memory_order_acq_rel) w = std::memory_order_acquire;
    } else if (Where::cut == Cut::acquire) {
      if (o == std::memory_order_acquire || o == std::memory_order_consume) w = std::memory_order_relaxed;
      if (o == std::memory_order_acq_rel) w = std::memory_order_release;
    }
    if (w == o || !in_cut(at)) return o;
    ++cut_record.applied;
    return w;
  }

  template <class T>
  class atomic {
   public:
    atomic(T value = T(), here at = here::current()) : a_(value, at) { cut_record.in_use = true; }
    atomic(const atomic&) = delete;
    atomic& operator=(const atomic&) = delete;

    T load(std::memory_order o = sc, here at = here::current()) const { return a_.load(weaken(o, at), at); }
    void store(T v, std::memory_order o = sc, here at = here::current()) { a_.store(v, weaken(o, at), at); }
    T exchange(T v, std::memory_order o = sc, here at = here::current()) {
      if (Where::cut == Cut::split && in_cut(at)) {
        ++cut_record.applied;
        // The read-modify-write's acquire half on the load, its release half on the store;
        // another thread may run between the two.
        const bool acq = o == std::memory_order_acquire || o == std::memory_order_acq_rel || o == sc;
        const bool rel = o == std::memory_order_release || o == std::memory_order_acq_rel || o == sc;
        const T old = a_.load(acq ? std::memory_order_acquire : std::memory_order_relaxed, at);
        a_.store(v, rel ? std::memory_order_release : std::memory_order_relaxed, at);
        return old;
      }
      return a_.exchange(v, weaken(o, at), at);
    }
    T fetch_add(T v, std::memory_order o = sc, here at = here::current()) { return a_.fetch_add(v, weaken(o, at), at); }
    T fetch_sub(T v, std::memory_order o = sc, here at = here::current()) { return a_.fetch_sub(v, weaken(o, at), at); }
    T fetch_and(T v, std::memory_order o = sc, here at = here::current()) { return a_.fetch_and(v, weaken(o, at), at); }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order o = sc, here at = here::current()) {
      return a_.compare_exchange_weak(expected, desired, weaken(o, at), at);
    }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                               here at = here::current()) {
      return a_.compare_exchange_weak(expected, desired, weaken(success, at), weaken(failure, at), at);
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order o = sc, here at = here::current()) {
      return a_.compare_exchange_strong(expected, desired, weaken(o, at), at);
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                 here at = here::current()) {
      return a_.compare_exchange_strong(expected, desired, weaken(success, at), weaken(failure, at), at);
    }

    RelacyAtomics::atomic<T>& relacy() { return a_; }

   private:
    RelacyAtomics::atomic<T> a_;
  };

  static void fence(std::memory_order o, here at = here::current()) {
    if (Where::cut == Cut::fence && in_cut(at)) {
      ++cut_record.applied;
      return;
    }
    RelacyAtomics::fence(o, at);
  }
  using mutex = RelacyAtomics::mutex;
  template <class T>
  using plain = RelacyAtomics::plain<T>;
  static void futex_wait(atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns,
                         here at = here::current()) {
    RelacyAtomics::futex_wait(word.relacy(), expected, timeout_ns, at);
  }
  static void futex_wake_one(atomic<std::uint32_t>& word, here at = here::current()) {
    RelacyAtomics::futex_wake_one(word.relacy(), at);
  }
  static std::int64_t now_ns() { return RelacyAtomics::now_ns(); }
};

/// The outcome of one search, for the model's report.
struct SearchResult {
  bool refuted;                        ///< Relacy found an execution that breaks an assertion
  unsigned long long iterations;       ///< executions explored (full search: all of them, when not refuted)
  std::string search = "full search";  ///< which search: full, or exhaustive to a context bound
  bool cut_never_applied = false;      ///< a CutAtomics variant whose cut touched nothing
  std::string unreached;               ///< what the model must reach and its search never did (empty: all)
};

/// Runs one Relacy test with the given parameters (search type and size set by the caller)
/// and names the search in the result. The history of a failing execution goes to stdout.
template <class Test>
SearchResult run_search(const char* name, rl::test_params p, std::string search) {
  p.collect_history = std::getenv("HANDOFF_MODEL_HISTORY") != nullptr;
  p.output_history = p.collect_history;
  std::ostringstream progress;  // Relacy's percentages: not part of the report
  p.progress_stream = &progress;
  std::printf("-- %s (%s)\n", name, search.c_str());
  std::fflush(stdout);
  cut_record = {};
  const bool ok = rl::simulate<Test>(p);
  return {!ok,
          static_cast<unsigned long long>(p.stop_iteration),
          std::move(search),
          cut_record.in_use && cut_record.applied == 0,
          {}};
}

/// Runs one Relacy test with the full search (every interleaving, every value the memory
/// model allows each load).
template <class Test>
SearchResult full_search(const char* name) {
  rl::test_params p;
  p.search_type = rl::sched_full;
  p.iteration_count = 100'000'000;  // an upper bound; the full search ends when it has seen all
  return run_search<Test>(name, p, "full search");
}

/// Runs one Relacy test exhaustively up to a context bound: every execution in which the
/// scheduler preempts a runnable thread at most `bound` times (a switch forced by a thread
/// blocking or ending is free), each with every value the memory model allows each load.
/// For a model whose full search is too large for CTest's budget; most concurrency bugs
/// need only a few preemptions (Musuvathi and Qadeer, "Iterative context bounding", 2007).
/// With HANDOFF_MODEL_FULL set in the environment it runs the full search instead.
template <class Test>
SearchResult bounded_search(const char* name, unsigned bound) {
  // HANDOFF_MODEL_FULL=1 runs the full search instead (minutes, not for CTest).
  if (std::getenv("HANDOFF_MODEL_FULL") != nullptr) return full_search<Test>(name);
  rl::test_params p;
  p.search_type = rl::sched_bound;
  p.context_bound = bound;
  p.iteration_count = 100'000'000;  // an upper bound; the search ends when it has seen all
  return run_search<Test>(name, p, "exhaustive to a context bound of " + std::to_string(bound));
}

/// Runs one Relacy test over `iterations` random executions (a random schedule, random
/// timeouts and a random value the memory model allows for each load). For a model whose
/// exhaustive search to even a small context bound is too large for CTest's budget; it
/// proves nothing about the executions it did not draw, so a model that uses it says why
/// and how often its negative controls are found.
template <class Test>
SearchResult random_search(const char* name, unsigned long long iterations) {
  rl::test_params p;
  p.search_type = rl::sched_random;
  p.iteration_count = iterations;
  return run_search<Test>(name, p, "random search of " + std::to_string(iterations) + " executions");
}

/// One check of a model executable: a search, and whether it must find a failure.
struct Check {
  const char* name;
  SearchResult (*search)();
  bool must_refute;  ///< a broken variant: the search must find the bad execution
};

/// The model executables' main: runs the check named by argv[1] (every check without
/// one), says what each found, and exits 0 only when each correct variant held over the
/// whole search and each broken variant was refuted.
template <std::size_t N>
int run_checks(int argc, char** argv, const Check (&checks)[N]) {
  int failures = 0, ran = 0;
  for (const Check& c : checks) {
    if (argc > 1 && std::string_view(argv[1]) != c.name) continue;
    ++ran;
    const SearchResult r = c.search();
    if (r.refuted) {
      std::printf("%s: refuted at execution %llu (%s)%s\n", c.name, r.iterations, r.search.c_str(),
                  c.must_refute ? " (a broken variant: as it must be)" : " (THE CORRECT VARIANT FAILED)");
    } else {
      // A full search ends when it has run every execution, so its count is the whole space.
      const bool whole = r.search == "full search";
      std::printf("%s: held over %s%llu executions (%s)%s\n", c.name, whole ? "all " : "", r.iterations,
                  whole ? "full search: that is every execution there is" : r.search.c_str(),
                  c.must_refute ? " (A BROKEN VARIANT PASSED: the model does not see what it must)" : "");
    }
    if (r.cut_never_applied) {
      std::printf(
          "%s: THE CUT NEVER APPLIED (no operation of the named function was reached): the variant tests nothing\n",
          c.name);
      ++failures;
    }
    if (!r.unreached.empty()) {
      std::printf("%s: THE SEARCH NEVER REACHED %s: the check tests nothing\n", c.name, r.unreached.c_str());
      ++failures;
    }
    if (r.refuted != c.must_refute) ++failures;
  }
  if (ran == 0) {
    std::printf("no check named %s\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace handoff::models
