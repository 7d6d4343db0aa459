// exercises/01-add-route/learners: builds the response first and sends it once
// (chapter 01; a learner's answer the tests must pass).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    handoff::http::Response r{400, "text/plain", {}, "name is required"};
    if (const auto name = req.query("name"); !name.empty()) {
      r.status = 200;
      r.body = "Hello, ";
      r.body.append(name);
      r.body += '!';
    }
    out.send(std::move(r));
  });
}

}  // namespace exercise
