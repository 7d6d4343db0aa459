// exercises/01-add-route/starter: compiles, registers a route, and is wrong. Fix it.
#include "hello_route.h"

namespace exercise {

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request&, handoff::http::Responder& out) {
    out.send(handoff::http::Response{200, "text/plain", {}, "Hello, World!"});
  });
}

}  // namespace exercise
