// exercises/01-add-route/learners: takes everything after '?name=' as the name
// (chapter 01; a learner's answer the tests must fail).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const auto at = req.target.find("?name=");
    const std::string name = at == std::string::npos ? "" : req.target.substr(at + 6);
    if (name.empty()) {
      out.send(handoff::http::Response{400, "text/plain", {}, "name is required"});
      return;
    }
    out.send(handoff::http::Response{200, "text/plain", {}, "Hello, " + name + "!"});
  });
}

}  // namespace exercise
