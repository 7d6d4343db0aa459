// app/router: method + path → handler (chapter 01).
// Changed in chapter 04: coroutine routes.
// Role: pick the handler for a request on the loop thread, before dispatch decides where
// it runs; an unknown path is 404, a known path with another method 405.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/coroutine_handler.h"
#include "http/handler.h"

namespace handoff::app {

/// A stage's routes: each method and exact path to its handler, blocking or not.
class Router {
 public:
  /// Route `method` requests for exactly `path` (no patterns: the demo needs none).
  /// A GET route also answers HEAD. `never_blocks` promises that the handler neither
  /// sleeps, nor waits on I/O, nor burns noticeable CPU: the server may then run it on
  /// the loop thread even when handlers go to a pool.
  void add(std::string method, std::string path, http::Handler handler, bool never_blocks = false);
  /// Route to a coroutine handler, run on the worker's event loop (chapter 04: only a
  /// server whose workers have one may serve such a router).
  void add_coroutine(std::string method, std::string path, CoroutineHandler handler);
  bool has_coroutine_routes() const noexcept;

  /// Exactly one of handler and coroutine is set when status is 200.
  struct Match {
    const http::Handler* handler = nullptr;  ///< null when status is 404 or 405
    int status = 200;
    bool never_blocks = false;
    const CoroutineHandler* coroutine = nullptr;
  };
  Match find(std::string_view method, std::string_view path) const;

 private:
  /// One route: its method, path, handler and promise not to block.
  struct Route {
    std::string method;
    std::string path;
    http::Handler handler;
    bool never_blocks;
    CoroutineHandler coroutine;  // set instead of handler for a coroutine route
  };
  std::vector<Route> routes_;
};

}  // namespace handoff::app
