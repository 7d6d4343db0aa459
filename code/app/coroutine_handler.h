// app/coroutine_handler: a request handler that runs on the worker's event loop as a C++20
// coroutine (chapter 04).
// Role: the second handler kind beside http::Handler: it waits (a timer, a descriptor, an
// executor call) by co_await, without blocking the loop and without holding a pool thread
// while it waits, and answers through the same Responder.
#pragma once

#include <functional>

#include "evloop/event_loop.h"
#include "evloop/executor.h"
#include "evloop/task.h"
#include "http/handler.h"
#include "http/request.h"

namespace handoff::app {

/// What a coroutine handler may wait on: its worker's loop, and the worker's pool as an
/// executor for blocking work (null when the worker has no pool: --dispatch inline).
struct CoroutineContext {
  evloop::EventLoop& loop;
  evloop::Executor* executor;
};

/// A coroutine handler. The request, the responder and the context outlive the coroutine
/// (the server keeps them in the frame that awaits it); the function object is the
/// router's, so a coroutine lambda's captures live as long as the router. The handler's
/// answer is written in request order like any other; one that throws or ends without
/// answering is answered 500 (or aborted) as an inline handler is.
using CoroutineHandler =
    std::function<evloop::Task<void>(const http::Request&, http::Responder&, const CoroutineContext&)>;

}  // namespace handoff::app
