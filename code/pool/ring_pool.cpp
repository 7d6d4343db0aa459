// pool/ring_pool: the loop↔pool hand-off in memory: Vyukov rings, spin-then-park, and
// a wake only for a thread that said it was parked (chapter 02; the chained wake, chapter 03).
// Changed in chapter 03: the chained wake policy, the stolen credit's return and the completion ring.
#include "pool/ring_pool.h"

#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <tuple>

#include "net/socket_pair.h"
#include "pool/completion_ring.h"
#include "pool/handler_slot.h"
#include "pool/run_job.h"
#include "pool/wait_word.h"
#include "stats/thread_cpu.h"

namespace handoff::pool {

namespace {

enum : std::uint64_t { kPoke = 1, kPill = 2 };

void send_word(int fd, std::uint64_t word, stats::ThreadStats& stats) {
  for (;;) {
    const ssize_t n = ::send(fd, &word, sizeof word, 0);
    stats.add(stats::Counter::handoff_sends);
    stats.add(stats::Counter::syscalls);
    if (n == static_cast<ssize_t>(sizeof word)) return;
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "send(wake)");
  }
}

}  // namespace

/// Everything a pool thread touches. The pool and each of its threads hold a reference, so
/// a thread that stop() let go of inside a handler still finds it when the handler returns.
struct RingPool::Core {
  Core(const PoolConfig& config, RingPoolOptions o, RingPoolSeams t)
      : options(std::move(o)),
        seams(std::move(t)),
        jobs(options.ring_capacity),
        done(options.ring_capacity),
        slots(std::make_unique<HandlerSlot[]>(static_cast<std::size_t>(config.threads))) {
    std::tie(lane_loop, lane_pool) = net::datagram_pair();
  }
  ~Core() {  // no thread uses the core any more: free what the job ring still holds
    Job* job = nullptr;
    while (jobs.try_pop(job)) delete job;
  }

  void thread_main(stats::ThreadStats& stats, HandlerSlot& slot);
  bool poll_lane(stats::ThreadStats& stats);
  Job* park(stats::ThreadStats& stats, bool& pill);
  bool run(stats::ThreadStats& stats, HandlerSlot& slot, Job* job);
  enum class Waker { submit, chain };
  void send_wake(stats::ThreadStats& stats, Waker waker);
  void pass_wake_on(stats::ThreadStats& stats);

  const RingPoolOptions options;
  const RingPoolSeams seams;  // the tests' hooks and negative controls; defaults in production
  sync::MpmcRing<Job*> jobs;
  CompletionRing done;                   // frames, and the loop's flag and poke (chapter 03's component)
  net::Fd lane_loop, lane_pool;          // pokes and pills: loop → pool threads
  std::unique_ptr<HandlerSlot[]> slots;  // one per thread, by index
  // Each word is written by one side and read by the other on every hand-off: keep each
  // on its own cache line so the two do not falsely share.
  alignas(64) WaitWord<> wait_word;  // parked (high half), wakes in flight (low): pool/wait_word.h
  // Jobs dropped unrun, not yet taken off in_flight_ by the loop. relaxed (both sides): a
  // count for the loop's spin decision; a late read only makes the loop spin once for nothing.
  alignas(64) std::atomic<std::size_t> dropped{0};
  std::atomic<bool> past_deadline{false};      // raised by stop() at its deadline (see run_job)
  std::atomic<std::size_t> deadline_drops{0};  // jobs dropped for the deadline; read after the joins
};

RingPool::RingPool(const PoolConfig& config, RingPoolOptions options, RingPoolSeams seams)
    : config_(config), core_(std::make_shared<Core>(config, std::move(options), std::move(seams))) {}

RingPool::~RingPool() { stop(kNoDeadline); }

int RingPool::parked() const noexcept {
  return core_->wait_word.parked();  // a snapshot, ordered by nothing
}

bool RingPool::loop_waiting() const noexcept { return core_->done.loop_waiting(); }

void RingPool::bind(reactor::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
                    stats::ThreadStats& loop_stats) {
  done_endpoint_.pool = this;
  loop_.bind(reactor, sink, loop_stats, core_->done.loop_fd(), done_endpoint_);
  start_pool_threads(loop_.threads, config_.threads, config_.worker_index, registry,
                     [core = core_](std::size_t i, stats::ThreadStats& st) { core->thread_main(st, core->slots[i]); });
}

// ---------------------------------------------------------------- the loop's side

// [ring.submit]
void RingPool::submit(Job* job) {
  if (!job->task) ++in_flight_;
  if (!loop_.backlog.empty() || !core_->jobs.try_push(job)) {
    loop_.backlog.push_back(job);  // the ring is full: ready_to_wait() pushes it when room comes
    return;
  }
  // The push must be visible before we read the parked count: claim_wake_after_push
  // fences first (pool/wait_word.h; pairs with the fence in park()'s announcement).
  if (core_->wait_word.claim_wake_after_push()) core_->send_wake(*loop_.stats, Core::Waker::submit);
}
// [ring.submit]

void RingPool::Core::send_wake(stats::ThreadStats& stats, Waker waker) {
  // A wake was claimed on the wait word (WaitWord::claim_wake: one per parked thread, never
  // one per push, only while the parked threads outnumber the pokes already on their way).
  // Count it before the poke: whoever it wakes sees the counts.
  stats.add(stats::Counter::wakes_sent);
  if (waker == Waker::chain) stats.add(stats::Counter::chained_wakes);
  send_word(lane_loop.get(), kPoke, stats);
}

void RingPool::flush_backlog() {
  bool pushed = false;
  while (!loop_.backlog.empty() && core_->jobs.try_push(loop_.backlog.front())) {
    loop_.backlog.pop_front();
    pushed = true;
  }
  // As in submit(): push, fence, read the parked count.
  if (pushed && core_->wait_word.claim_wake_after_push()) core_->send_wake(*loop_.stats, Core::Waker::submit);
}

// [ring.loop_wait]
bool RingPool::ready_to_wait() {
  flush_backlog();
  // Optional: an answer is on its way, so spin for it rather than park and be poked.
  if (loop_.backlog.empty() && in_flight_ > 0 &&
      sync::spin_until(
          core_->options.loop_spin, [this] { return core_->done.has_frames(); }, loop_.stats)) {
    return false;
  }
  const auto& hook = core_->seams.between_loop_wait_steps;
  if (core_->seams.loop_order == RingPoolSeams::LoopOrder::announce_then_recheck) {
    // Announce, then re-check: raise the flag and fence (pool/completion_ring.h: the store
    // must be visible before the loads of the rings; pairs with the fence after a frame's
    // push or a dropped job's pop), then look once more: at the completion ring, and, with
    // a backlog, at the job ring's room (flush_backlog's try_push reads the cell a pop freed).
    core_->done.announce_wait();
    if (hook) hook();
    flush_backlog();  // what does not fit waits for the poke of the job that makes room
    if (core_->done.has_frames()) {
      core_->done.end_wait();
      return false;  // completions are waiting: poll without blocking, then drain them
    }
    return true;
  }
  // The broken order, kept as the negative control: a frame pushed between the re-check
  // and the flag finds no flag, sends no poke, and waits out the loop's timeout.
  const bool waiting = core_->done.has_frames();
  if (hook) hook();
  if (waiting) return false;
  core_->done.announce_wait();
  return true;
}

void RingPool::before_nonblocking_poll() {
  flush_backlog();  // no spin, no flag: the poll after this only looks
}

void RingPool::after_wait() {
  core_->done.end_wait();
  drain_completions();
}
// [ring.loop_wait]

void RingPool::drain_completions() {
  // relaxed: see Core::dropped.
  in_flight_ -= core_->dropped.exchange(0, std::memory_order_relaxed);
  in_flight_ -= core_->done.drain(*loop_.sink);
}

void RingPool::drain_loop_pokes() { core_->done.take_poke(*loop_.stats); }

// ---------------------------------------------------------------- a pool thread's side

// [ring.thread]
void RingPool::Core::thread_main(stats::ThreadStats& stats, HandlerSlot& slot) {
  stats.attach_current_thread();
  std::int64_t next_poll_ns = 0;
  bool pill = false;
  while (!pill) {
    // A thread that never runs dry must still see a pill: look at the lane socket,
    // without blocking, once per dgram_poll_ns, whatever the ring holds.
    const std::int64_t now = stats::monotonic_ns();
    if (now >= next_poll_ns) {
      next_poll_ns = now + options.dgram_poll_ns;
      if (poll_lane(stats)) break;
    }
    Job* job = nullptr;
    if (!jobs.try_pop(job)) {
      if (sync::spin_until(
              options.spin, [&] { return jobs.try_pop(job); }, &stats)) {
        stats.add(stats::Counter::spin_catches);
      } else if ((job = park(stats, pill)) == nullptr) {
        continue;  // woken (or a pill): poll the lane and look again
      }
    }
    // A job taken, by whichever path: pass a wake on if the policy says so.
    pass_wake_on(stats);
    if (!run(stats, slot, job)) return;  // let go of by stop(): touch nothing of the loop's
  }
  // A pill comes after every job submitted before stop(): finish what the ring still holds.
  Job* job = nullptr;
  while (jobs.try_pop(job)) {
    if (!run(stats, slot, job)) return;
  }
  stats.detach_current_thread();
  slot.finish();  // the last touch: stop() may join and free the loop's world after it
}
// [ring.thread]

// [ring.poll_lane]
bool RingPool::Core::poll_lane(stats::ThreadStats& stats) {
  std::uint64_t word;
  const int flags = MSG_DONTWAIT | (seams.lane_poll_takes_pokes ? 0 : MSG_PEEK);
  for (;;) {
    const ssize_t n = ::recv(lane_pool.get(), &word, sizeof word, flags);
    stats.add(stats::Counter::handoff_recvs);
    stats.add(stats::Counter::syscalls);
    if (n != static_cast<ssize_t>(sizeof word)) return false;
    if (!seams.lane_poll_takes_pokes) return false;  // only looked: the parked thread takes it
    if (word == kPill) return true;
    // A poke, read by a thread that is already awake. It was sent for a parked thread;
    // taking it here spends that thread's credit (the hole; pass_wake_on passes it on
    // under WakePolicy::chained). The return fences before this thread looks at the ring
    // again (WaitWord::return_stolen_credit: the store-buffering shape against submit).
    stats.add(stats::Counter::stolen_pokes);
    wait_word.return_stolen_credit(seams.credit_return);
  }
}
// [ring.poll_lane]

// [ring.chain]
void RingPool::Core::pass_wake_on(stats::ThreadStats& stats) {
  if (options.wake_policy != RingPoolOptions::WakePolicy::chained) return;
  // This thread took a job: if it sees more, a parked sibling with no wake on its way is
  // poked by submit's own rule. The wake this replaces is one that a lane poll spent, and
  // the thread that spent it is the one here: it polls before it pops, and the poke it ate
  // was sent after its job's push, so its look at the ring (after its recv of the poke,
  // which the kernel orders after the send) sees that job unless a thread already took it.
  // A job the loop pushed after that poke is the store-buffering pair: the loop pushes,
  // fences and reads the word; this thread returned the credit, fenced
  // (WaitWord::return_stolen_credit), and reads the ring. One of the two sees the other:
  // the loop sees the credit gone and pokes, or this thread sees the job and chains. (The
  // fence is needed: an earlier version had none and said that coherence on the word was
  // enough; it orders the word, not the ring. A relaxed-memory model, code/relacy/
  // ring_pool_model.cpp, refutes it; x86's locked fetch_sub hid it from every run-time test.)
  if (wait_word.chain_needed(jobs)) send_wake(stats, Waker::chain);
}
// [ring.chain]

// [ring.park]
Job* RingPool::Core::park(stats::ThreadStats& stats, bool& pill) {
  Job* job = nullptr;
  // Announce, then re-check the ring (WaitWord::park_or_take): the announcement must be
  // visible before the re-check, a store then a load, fenced inside; pairs with the fence
  // in submit()'s claim_wake_after_push. ParkOrder::recheck_then_announce, the reverse, is
  // the negative control: a push between the re-check and the announcement sees no parked
  // thread and sends no wake.
  if (wait_word.park_or_take(jobs, job, seams.park_order, [this] {
        if (seams.between_park_steps) seams.between_park_steps();
      })) {
    return job;
  }
  if (seams.before_park_recv) seams.before_park_recv();
  stats.add(stats::Counter::parks);
  std::uint64_t word = 0;
  ssize_t n;
  do {
    n = ::recv(lane_pool.get(), &word, sizeof word, 0);  // the park
    stats.add(stats::Counter::handoff_recvs);
    stats.add(stats::Counter::syscalls);
  } while (n < 0 && errno == EINTR);
  const bool poke = n == static_cast<ssize_t>(sizeof word) && word == kPoke;
  // [ring.park]
  // [ring.unpark]
  // Leave the parked count and give back the poke's credit in ONE step. A waker pokes only
  // while parked > wakes in flight. Lowered apart, parked first, a submit between the two
  // steps sees this thread's credit still out for a thread that no longer waits: one
  // parked thread fewer, the same wakes in flight. With a sibling parked it reckons the
  // sibling's wake already sent, sends none, and the job waits in the ring behind
  // whatever this thread runs next (the negative control, UnparkOrder::parked_then_credit).
  // Giving the credit back first would only err towards a spare poke; one step leaves
  // nothing to argue. (The word orders no data: the fences around the ring do.)
  if (seams.unpark_order == RingPoolSeams::UnparkOrder::together) {
    wait_word.leave_park(poke);
    if (seams.after_unpark_step) seams.after_unpark_step();
  } else {
    wait_word.leave_parked_count();
    if (seams.after_unpark_step) seams.after_unpark_step();
    if (poke) wait_word.give_back_credit();
  }
  pill = !poke;  // a pill, or the lane is broken: either way, stop
  return nullptr;
}
// [ring.unpark]

bool RingPool::Core::run(stats::ThreadStats& stats, HandlerSlot& slot, Job* job) {
  const bool counted_in_flight = !job->task;  // see in_flight_
  const RunOutcome outcome =
      run_job(job, RunContext{stats, slot, past_deadline}, [this, &stats](Frame* f) { done.push(f, stats); });
  if (outcome == RunOutcome::dropped) {
    // relaxed (all): counts, see their declarations.
    if (past_deadline.load(std::memory_order_relaxed)) deadline_drops.fetch_add(1, std::memory_order_relaxed);
    if (counted_in_flight) dropped.fetch_add(1, std::memory_order_relaxed);
    done.poke_loop_if_waiting(stats);  // the pop made room a loop with a backlog may wait for
  }
  return outcome != RunOutcome::thread_abandoned;
}

std::size_t RingPool::stop(std::int64_t deadline_ns) {
  // The body both ring pools share: pool/ring_loop.h. The stop here is a pill per thread.
  return stop_ring_pool(
      *core_, loop_, deadline_ns,
      [this] {
        // Every job submitted so far is in the ring before any pill goes into the lane.
        for (std::size_t i = 0; i < loop_.threads.size(); ++i) send_word(core_->lane_loop.get(), kPill, *loop_.stats);
      },
      [this] { flush_backlog(); }, [this] { drain_completions(); });
}

}  // namespace handoff::pool
