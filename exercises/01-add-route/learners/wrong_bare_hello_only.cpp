// exercises/01-add-route/learners: refuses only a target with no query at all, so "?name=" and
// "?x=1" are greeted with an empty name (chapter 01; a learner's answer the tests must fail).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    if (req.target == "/hello") {
      out.send(handoff::http::Response{400, "text/plain", {}, "name is required"});
      return;
    }
    out.send(handoff::http::Response{200, "text/plain", {}, "Hello, " + std::string(req.query("name")) + "!"});
  });
}

}  // namespace exercise
