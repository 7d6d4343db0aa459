// exercises/01-add-route/learners: answers as the demo's /stream does, a head and then the body
// in chunks; a client reads the same status and body (chapter 01; a learner's answer the
// tests must pass).
#include <string>

#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string_view name = req.query("name");
    out.start_stream(name.empty() ? 400 : 200, "text/plain");
    if (name.empty()) {
      out.send_chunk("name is required");
    } else {
      out.send_chunk("Hello, ");
      out.send_chunk(std::string(name));
      out.send_chunk("!");
    }
    out.end_stream();
  });
}

}  // namespace exercise
