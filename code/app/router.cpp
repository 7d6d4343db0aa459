// app/router: method + path → handler (chapter 01).
// Changed in chapter 04: coroutine routes.
#include "app/router.h"

namespace handoff::app {

void Router::add(std::string method, std::string path, http::Handler handler, bool never_blocks) {
  routes_.push_back({std::move(method), std::move(path), std::move(handler), never_blocks, {}});
}

void Router::add_coroutine(std::string method, std::string path, CoroutineHandler handler) {
  routes_.push_back({std::move(method), std::move(path), {}, false, std::move(handler)});
}

bool Router::has_coroutine_routes() const noexcept {
  for (const Route& r : routes_) {
    if (r.coroutine) return true;
  }
  return false;
}

Router::Match Router::find(std::string_view method, std::string_view path) const {
  bool path_known = false;
  for (const Route& r : routes_) {
    if (r.path != path) continue;
    path_known = true;
    if (r.method == method || (method == "HEAD" && r.method == "GET")) {
      if (r.coroutine) return {nullptr, 200, false, &r.coroutine};
      return {&r.handler, 200, r.never_blocks, nullptr};
    }
  }
  return {nullptr, path_known ? 405 : 404, false, nullptr};
}

}  // namespace handoff::app
