// exercises/01-add-route/learners: builds the greeting from the view's data(), which is not
// NUL-terminated where the name ends, so the rest of the target follows it
// (chapter 01; a learner's answer the tests must fail).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string_view name = req.query("name");
    if (name.empty()) {
      out.send(handoff::http::Response{400, "text/plain", {}, "name is required"});
      return;
    }
    out.send(handoff::http::Response{200, "text/plain", {}, std::string("Hello, ") + name.data() + "!"});
  });
}

}  // namespace exercise
