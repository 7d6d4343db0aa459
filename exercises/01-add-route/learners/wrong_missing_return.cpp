// exercises/01-add-route/learners: sends the 400 and falls through to send the greeting too
// (no return after the error), answering one request twice
// (chapter 01; a learner's answer the tests must fail).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string name(req.query("name"));
    if (name.empty()) out.send(handoff::http::Response{400, "text/plain", {}, "name is required"});
    out.send(handoff::http::Response{200, "text/plain", {}, "Hello, " + name + "!"});
  });
}

}  // namespace exercise
