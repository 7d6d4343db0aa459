// pool/run_job: what a pool thread does with one job, whichever pool it belongs to
// (chapter 01).
// Changed in chapter 04: run_in_executor's task.
// Role: one place for the rules every pool keeps around a handler: drop a job whose
// connection has gone or whose pool's shutdown deadline has passed, answer for a handler
// that throws or returns without answering, and step out of the way of a stop() that let
// go of this thread. A task (run_in_executor's, chapter 04) keeps the same drop and
// let-go rules; it answers for itself (pool/job.h, PoolTask).
#pragma once

#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "pool/frame_responder.h"
#include "pool/handler_slot.h"
#include "pool/job.h"
#include "stats/thread_stats.h"

namespace handoff::pool {

/// What became of a job.
enum class RunOutcome {
  ran,               ///< the handler ran and the exchange was answered (by it, or with a 500/abort), or the task ran
  dropped,           ///< not run: its ticket was cancelled, or the pool's deadline had passed; no frame
  thread_abandoned,  ///< stop() let go of this thread inside the handler: return, touch nothing else
};

/// The thread's side of one job.
struct RunContext {
  stats::ThreadStats& stats;  ///< the thread's record (touched only outside the handler)
  HandlerSlot& slot;          ///< the thread's token (see handler_slot.h)
  /// Raised by stop() once its deadline has passed: drop jobs not started, stop waiting for room.
  const std::atomic<bool>& past_deadline;
};

/// Run `job` (owned; deleted here) and pass its frames to `emit` in order.
template <class Emit>
RunOutcome run_job(Job* job, const RunContext& ctx, Emit emit) {
  const std::unique_ptr<Job> owned(job);
  // relaxed (both): a flag, looked at once per job; a late look runs one job for nobody
  // (or one a stuck-handler deadline then lets go of), and nothing is read through it.
  if (ctx.past_deadline.load(std::memory_order_relaxed) ||
      (job->ticket && job->ticket->cancelled.load(std::memory_order_relaxed))) {
    ctx.stats.add(stats::Counter::jobs_abandoned);
    return RunOutcome::dropped;
  }
  if (job->task) {  // run_in_executor's work: no responder, no frame; it hands its result over itself
    ctx.slot.enter_handler();
    job->task->run();
    if (!ctx.slot.leave_handler()) return RunOutcome::thread_abandoned;  // destroyed without complete()
    job->task->complete();
    ctx.stats.add(stats::Counter::requests);
    return RunOutcome::ran;
  }
  bool inside = false;     // the thread is inside the handler (holds no token)
  bool abandoned = false;  // stop() let go of it: frames go nowhere from now on
  auto guarded = [&](Frame* frame) {
    if (!inside) return emit(frame);  // fail() after the handler: already in the pool's code
    if (abandoned || !ctx.slot.leave_handler()) {
      abandoned = true;
      delete frame;
      return;
    }
    try {
      emit(frame);
    } catch (...) {
      ctx.slot.enter_handler();  // the handler's own catch must see the token as it left it
      throw;
    }
    ctx.slot.enter_handler();
  };
  FrameResponder<decltype(guarded)> responder(*job, ctx.past_deadline, guarded);
  std::string failure;
  inside = true;
  ctx.slot.enter_handler();
  try {
    (*job->handler)(job->request, responder);
  } catch (const std::exception& e) {
    failure = std::string("threw: ") + e.what();
  } catch (...) {
    failure = "threw a non-standard exception";
  }
  if (abandoned || !ctx.slot.leave_handler()) return RunOutcome::thread_abandoned;
  inside = false;
  if (failure.empty() && responder.progress() != FrameResponder<decltype(guarded)>::Progress::done) {
    failure = "returned without answering";
  }
  if (!failure.empty()) {
    ctx.stats.add(stats::Counter::handler_failures);
    std::fprintf(stderr, "handoff: handler for %s %s %s\n", job->request.method.c_str(), job->request.target.c_str(),
                 failure.c_str());
    responder.fail();  // a 500 if nothing was sent, an abort if a stream had begun
  }
  ctx.stats.add(stats::Counter::requests);
  return RunOutcome::ran;
}

}  // namespace handoff::pool
