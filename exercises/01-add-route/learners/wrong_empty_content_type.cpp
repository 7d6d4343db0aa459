// exercises/01-add-route/learners: skips the response's fields it does not think about with {},
// so the content type goes out empty (chapter 01; a learner's answer the tests must fail).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string_view name = req.query("name");
    if (name.empty()) {
      out.send(handoff::http::Response{400, {}, {}, "name is required"});
      return;
    }
    out.send(handoff::http::Response{200, {}, {}, "Hello, " + std::string(name) + "!"});
  });
}

}  // namespace exercise
