// app/router: method + path → handler (chapter 01).
#include "app/router.h"

namespace handoff::app {

void Router::add(std::string method, std::string path, http::Handler handler) {
  routes_.push_back({std::move(method), std::move(path), std::move(handler)});
}

Router::Match Router::find(std::string_view method, std::string_view path) const {
  bool path_known = false;
  for (const Route& r : routes_) {
    if (r.path != path) continue;
    path_known = true;
    if (r.method == method || (method == "HEAD" && r.method == "GET")) return {&r.handler, 200};
  }
  return {nullptr, path_known ? 405 : 404};
}

}  // namespace handoff::app
