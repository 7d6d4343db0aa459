// pool/elastic_pool: the ring hand-off with the elastic rules: one idle spinner, a wake only
// for an all-parked lane, the loop's age check, and a wake channel per thread (chapter 03).
// Changed in chapter 04: the idle spinner's backoff (sync/spin_backoff).
#include "pool/elastic_pool.h"

#include <string>

#include "pool/completion_ring.h"
#include "pool/handler_slot.h"
#include "pool/run_job.h"
#include "stats/thread_cpu.h"
#include "sync/mpmc_ring.h"

namespace handoff::pool {

/// Everything a pool thread touches. The pool and each of its threads hold a reference, so
/// a thread that stop() let go of inside a handler still finds it when the handler returns.
struct ElasticPool::Core {
  Core(const PoolConfig& config, ElasticPoolOptions o, ElasticPoolSeams t)
      : options(std::move(o)),
        seams(std::move(t)),
        threads(config.threads),
        jobs(options.ring_capacity),
        done(options.ring_capacity),
        channels(std::make_unique<sync::WakeChannel[]>(static_cast<std::size_t>(config.threads))),
        slots(std::make_unique<HandlerSlot[]>(static_cast<std::size_t>(config.threads))) {}
  ~Core() {  // no thread uses the core any more: free what the job ring still holds
    Job* job = nullptr;
    while (jobs.try_pop(job)) delete job;
  }

  /// How a park ended.
  enum class Parked { took_job, woken, stop };

  void thread_main(sync::WakeChannel& me, stats::ThreadStats& stats, HandlerSlot& slot);
  bool spin_for_job(sync::WakeChannel& me, stats::ThreadStats& stats, Job*& job);
  Parked park(sync::WakeChannel& me, stats::ThreadStats& stats, Job*& job);
  bool run(stats::ThreadStats& stats, HandlerSlot& slot, Job* job);
  bool wake_newest(stats::ThreadStats& loop_stats);
  void wake_all(stats::ThreadStats& loop_stats);

  const ElasticPoolOptions options;
  const ElasticPoolSeams seams;  // the tests' hooks and negative controls; defaults in production
  const int threads;
  sync::MpmcRing<Job*> jobs;
  CompletionRing done;
  std::unique_ptr<sync::WakeChannel[]> channels;  // one per thread, by index
  std::unique_ptr<HandlerSlot[]> slots;           // one per thread, by index
  ElasticPark<> gate;  // the parked count, the park tickets and the stop flag (pool/elastic_pool_park.h)
  alignas(64) std::atomic<bool> spinner{false};  // a thread spins idle (rule 1)
  sync::SpinBackoff backoff;                     // the spinner role's, with spin_backoff
  std::atomic<bool> past_deadline{false};        // raised by stop() at its deadline (see run_job)
  std::atomic<std::size_t> deadline_drops{0};    // jobs dropped for the deadline; read after the joins
};

ElasticPool::ElasticPool(const PoolConfig& config, ElasticPoolOptions options, ElasticPoolSeams seams)
    : config_(config), core_(std::make_shared<Core>(config, std::move(options), std::move(seams))) {}

ElasticPool::~ElasticPool() { stop(kNoDeadline); }

int ElasticPool::parked() const noexcept { return core_->gate.parked(); }

sync::WakeChannel::Kind ElasticPool::thread_state(int i) const noexcept {
  return core_->channels[static_cast<std::size_t>(i)].kind();
}

bool ElasticPool::loop_waiting() const noexcept { return core_->done.loop_waiting(); }

void ElasticPool::Endpoint::on_io(std::uint32_t) { pool->core_->done.take_poke(*pool->loop_.stats); }

void ElasticPool::bind(reactor::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
                       stats::ThreadStats& loop_stats) {
  done_endpoint_.pool = this;
  loop_.bind(reactor, sink, loop_stats, core_->done.loop_fd(), done_endpoint_);
  start_pool_threads(loop_.threads, config_.threads, config_.worker_index, registry,
                     [core = core_](std::size_t i, stats::ThreadStats& st) {
                       core->thread_main(core->channels[i], st, core->slots[i]);
                     });
}

// ---------------------------------------------------------------- the loop's side

void ElasticPool::submit(Job* job) {
  if (!loop_.backlog.empty() || !core_->jobs.try_push(job)) {
    loop_.backlog.push_back(job);  // the ring is full: ready_to_wait() pushes it when room comes
    return;
  }
  ++pushed_;
  wake_if_all_parked();
}

void ElasticPool::wake_if_all_parked() {
  // Rule 2: a running or spinning thread comes back to the ring by itself, so wake only a
  // lane whose every thread is parked, and only one: wake_newest() lowers the count before
  // it returns, so the next push of a burst reads one parked thread fewer and wakes nobody.
  // The fence between the push and the read of the count: all_parked_after_push.
  if (!core_->seams.submit_wakes || !core_->gate.all_parked_after_push(config_.threads)) return;
  core_->wake_newest(*loop_.stats);
}

bool ElasticPool::Core::wake_newest(stats::ThreadStats& loop_stats) {
  // The choice, the claim and the count: ElasticPark::wake_newest; the futex wake here.
  const bool woke = gate.wake_newest(channels.get(), threads, [&loop_stats](sync::WakeChannel& ch, std::uint32_t seq) {
    return ch.wake(seq, loop_stats);
  });
  if (woke) loop_stats.add(stats::Counter::wakes_sent);
  return woke;
}

void ElasticPool::Core::wake_all(stats::ThreadStats& loop_stats) {
  while (wake_newest(loop_stats)) {
  }
}

// [elastic.age]
void ElasticPool::check_age() {
  if (!core_->options.age_check) return;
  const std::uint64_t pops = core_->jobs.pops();
  if (pops == pushed_) {  // nothing waits in the ring
    standing_since_ = 0;
    return;
  }
  const std::int64_t now = stats::monotonic_ns();
  if (pops != last_pops_ || standing_since_ == 0) {  // draining (however deep), or just filled
    last_pops_ = pops;
    standing_since_ = now;
    return;
  }
  if (now - standing_since_ <= core_->options.age_ns) return;
  // Rule 3: jobs wait and nobody has popped for longer than T: every thread that could take
  // them is busy or asleep. Wake one parked thread; at most one per T while it stands still.
  // No fence: a thread whose announcement we do not see yet is seen on the next pass (the
  // wait is capped), and the CAS in wake() orders the jobs before the woken thread's pop.
  standing_since_ = now;
  if (core_->wake_newest(*loop_.stats)) loop_.stats->add(stats::Counter::age_wakes);
}

bool ElasticPool::jobs_waiting() const noexcept { return !loop_.backlog.empty() || core_->jobs.pops() != pushed_; }

int ElasticPool::max_wait_ms() {
  // The cap is there so that the age check runs while jobs wait, and the age check can only
  // wake a parked thread: with none parked, the jobs are behind threads that will come back
  // to the ring by themselves, and a capped wait would only arm a timer (and, when it
  // fires, wake the loop for nothing). relaxed: read after this pass's submits and their
  // fences; a thread whose announcement it misses re-checks the ring after announcing, and
  // by the store-buffering pair with those fences finds the jobs submit pushed.
  if (!core_->options.age_check || !jobs_waiting() || core_->gate.parked() == 0) {
    return kNoWaitCap;
  }
  return core_->options.pending_wait_ms;
}
// [elastic.age]

void ElasticPool::push_backlog() {
  bool pushed = false;
  while (!loop_.backlog.empty() && core_->jobs.try_push(loop_.backlog.front())) {
    loop_.backlog.pop_front();
    ++pushed_;
    pushed = true;
  }
  if (pushed) wake_if_all_parked();  // as in submit(): push → fence → read the parked count
}

bool ElasticPool::ready_to_wait() {
  check_age();
  push_backlog();
  // Announce, then re-check (pool/completion_ring.h): the completion ring, and with a
  // backlog the job ring's room (push_backlog's try_push reads the cell a pop freed; a pop
  // that frees one is followed by a frame or a drop, and its poke).
  core_->done.announce_wait();
  push_backlog();  // what does not fit waits for the poke of the job that makes room
  if (core_->done.has_frames()) {
    core_->done.end_wait();
    return false;  // completions are waiting: poll without blocking, then drain them
  }
  return true;
}

void ElasticPool::before_nonblocking_poll() {
  check_age();  // the age check runs every turn, as in ready_to_wait
  push_backlog();
}

void ElasticPool::after_wait() {
  core_->done.end_wait();
  core_->done.drain(*loop_.sink);
}

// ---------------------------------------------------------------- a pool thread's side

void ElasticPool::Core::thread_main(sync::WakeChannel& me, stats::ThreadStats& stats, HandlerSlot& slot) {
  stats.attach_current_thread();
  for (;;) {
    Job* job = nullptr;
    if (jobs.try_pop(job) || spin_for_job(me, stats, job)) {
      if (!run(stats, slot, job)) return;  // let go of by stop(): touch nothing of the loop's
      continue;
    }
    const Parked how = park(me, stats, job);
    if (how == Parked::stop) break;
    if (how == Parked::took_job && !run(stats, slot, job)) return;
  }
  stats.detach_current_thread();
  slot.finish();  // the last touch: stop() may join and free the loop's world after it
}

bool ElasticPool::Core::spin_for_job(sync::WakeChannel& me, stats::ThreadStats& stats, Job*& job) {
  // Rule 1: one idle spinner per lane. The exchange makes one of the threads that find the
  // ring empty the spinner; the others park at once (the load first spares them the RMW).
  // relaxed (all): the flag is a role, not a publication; a thread that loses it parks, and
  // the park's own fences keep its wake. A stale view costs one spin more or less.
  if (options.spin.spin_ns <= 0 || spinner.load(std::memory_order_relaxed) ||
      spinner.exchange(true, std::memory_order_relaxed)) {
    return false;
  }
  if (options.spin_backoff && backoff.skip()) {  // recent spins missed: park at once
    spinner.store(false, std::memory_order_relaxed);
    return false;
  }
  me.set(sync::WakeChannel::Kind::spinning);
  // Spin for a job, or until stop() raises its flag (the park that follows then exits).
  sync::spin_until(
      options.spin, [&] { return jobs.try_pop(job) || gate.stop_raised_hint(); }, &stats);
  if (options.spin_backoff) backoff.record(job != nullptr);
  spinner.store(false, std::memory_order_relaxed);
  me.set(sync::WakeChannel::Kind::running);
  if (job == nullptr) return false;
  stats.add(stats::Counter::spin_catches);
  return true;
}

ElasticPool::Core::Parked ElasticPool::Core::park(sync::WakeChannel& me, stats::ThreadStats& stats, Job*& job) {
  // The two steps, their order and their fence: ElasticPark::park (the model runs the same).
  std::uint32_t seq = 0;
  const auto between = [this] {
    if (seams.between_park_steps) seams.between_park_steps();
  };
  switch (gate.park(me, jobs, job, seams.park_order, ParkFence::seq_cst, between, seq)) {
    case ElasticPark<>::Outcome::took_job:
      return Parked::took_job;
    case ElasticPark<>::Outcome::stop:
      return Parked::stop;
    case ElasticPark<>::Outcome::sleep:
      break;
  }
  stats.add(stats::Counter::parks);
  me.sleep(seq, stats);  // until the loop moves us to WOKEN (it lowered the count)
  return Parked::woken;
}

bool ElasticPool::Core::run(stats::ThreadStats& stats, HandlerSlot& slot, Job* job) {
  const RunOutcome outcome =
      run_job(job, RunContext{stats, slot, past_deadline}, [this, &stats](Frame* f) { done.push(f, stats); });
  if (outcome == RunOutcome::dropped) {
    // relaxed (both): a flag and a count, see their declarations.
    if (past_deadline.load(std::memory_order_relaxed)) deadline_drops.fetch_add(1, std::memory_order_relaxed);
    done.poke_loop_if_waiting(stats);  // the pop made room a loop with a backlog may wait for
  }
  return outcome != RunOutcome::thread_abandoned;
}

std::size_t ElasticPool::stop(std::int64_t deadline_ns) {
  // The body both ring pools share: pool/ring_loop.h. The stop here is a flag, not a message.
  return stop_ring_pool(
      *core_, loop_, deadline_ns,
      [this] {
        // The flag, then a fence, then the threads' words (ElasticPark::raise_stop).
        core_->gate.raise_stop();
        core_->wake_all(*loop_.stats);  // a thread not parked sees the flag when it next parks
      },
      [this] {
        push_backlog();
        check_age();
      },
      [this] { core_->done.drain(*loop_.sink); });
}

}  // namespace handoff::pool
