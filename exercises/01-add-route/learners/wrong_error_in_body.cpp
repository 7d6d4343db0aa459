// exercises/01-add-route/learners: tells the missing name in the body of a 200
// (chapter 01; a learner's answer the tests must fail).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string_view name = req.query("name");
    const std::string body = name.empty() ? std::string("name is required") : "Hello, " + std::string(name) + "!";
    out.send(handoff::http::Response{200, "text/plain", {}, body});
  });
}

}  // namespace exercise
