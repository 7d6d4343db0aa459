// exercises/01-add-route/learners: parses the query by hand, piece by piece on '&', and
// compares each piece's name whole (chapter 01; a learner's answer the tests must pass).
#include <string>
#include <string_view>
#include <utility>

#include "hello_route.h"

namespace exercise {

namespace {
std::string_view name_of(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view piece = rest.substr(0, amp);
    if (piece.substr(0, 5) == "name=") return piece.substr(5);
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return {};
}
}  // namespace

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string_view name = name_of(req.target);
    handoff::http::Response r;  // 200, text/plain
    if (name.empty()) {
      r.status = 400;
      r.body = "name is required";
    } else {
      r.body = "Hello, " + std::string(name) + "!";
    }
    out.send(std::move(r));
  });
}

}  // namespace exercise
