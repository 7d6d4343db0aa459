// exercises/01-add-route/learners: says the text's charset in its content type
// ("text/plain; charset=utf-8"), which a client reads as text/plain (chapter 01; a learner's
// answer the tests must pass).
#include <string>
#include <utility>

#include "hello_route.h"

namespace exercise {

namespace {
void answer(handoff::http::Responder& out, int status, std::string body) {
  out.send(handoff::http::Response{status, "text/plain; charset=utf-8", {}, std::move(body)});
}
}  // namespace

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string_view name = req.query("name");
    if (name.empty()) return answer(out, 400, "name is required");
    answer(out, 200, "Hello, " + std::string(name) + "!");
  });
}

}  // namespace exercise
