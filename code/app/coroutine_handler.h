// app/coroutine_handler: a request handler that runs on the worker's event loop as a C++20
// coroutine (chapter 04).
// Role: the second handler kind beside http::Handler: it waits (a timer, a descriptor, an
// executor call) by co_await, without blocking the loop and without holding a pool thread
// while it waits, and answers through the same Responder.
#pragma once

#include <functional>
#include <memory>

#include "evloop/event_loop.h"
#include "evloop/executor.h"
#include "evloop/task.h"
#include "http/handler.h"
#include "http/request.h"
#include "stats/thread_stats.h"

namespace handoff::app {

/// What a stage gives each worker beside its loop.
///
/// What a stage gives each worker beside its loop (an upstream's connection pool, from
/// chapter 04): made by the stage's WorkerServicesFactory for one worker, used on that
/// worker's loop thread only, destroyed on it after the worker's last coroutine and before
/// its loop. A stage derives its own; a route that needs it downcasts.
class WorkerServices {
 public:
  virtual ~WorkerServices() = default;
};

/// Makes one worker's services on its loop, with the loop thread's statistics to publish
/// into (the worker's loop is not running yet). Called once per worker, when it is built.
using WorkerServicesFactory =
    std::function<std::unique_ptr<WorkerServices>(evloop::EventLoop& loop, stats::ThreadStats& loop_stats)>;

/// What a coroutine handler may wait on: its worker's loop, the worker's pool as an
/// executor for blocking work (null when the worker has no pool: --dispatch inline), and
/// the worker's services (null when the stage gives none).
struct CoroutineContext {
  evloop::EventLoop& loop;
  evloop::Executor* executor;
  WorkerServices* services = nullptr;
};

/// A coroutine handler. The request, the responder and the context outlive the coroutine
/// (the server keeps them in the frame that awaits it); the function object is the
/// router's, so a coroutine lambda's captures live as long as the router. The handler's
/// answer is written in request order like any other; one that throws or ends without
/// answering is answered 500 (or aborted) as an inline handler is.
using CoroutineHandler =
    std::function<evloop::Task<void>(const http::Request&, http::Responder&, const CoroutineContext&)>;

}  // namespace handoff::app
