// exercises/01-add-route/learners: cuts the value after the first "name=" in the target, so
// "?nickname=Bob" is greeted as Bob (chapter 01; a learner's answer the tests must fail).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    std::string name;
    if (const auto at = req.target.find("name="); at != std::string::npos) {
      const auto from = at + 5;
      name = req.target.substr(from, req.target.find('&', from) - from);
    }
    if (name.empty()) {
      out.send(handoff::http::Response{400, "text/plain", {}, "name is required"});
      return;
    }
    out.send(handoff::http::Response{200, "text/plain", {}, "Hello, " + name + "!"});
  });
}

}  // namespace exercise
