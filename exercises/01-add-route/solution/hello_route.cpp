// exercises/01-add-route/solution: one way to do it.
#include "hello_route.h"

namespace exercise {

// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one part
// wrong, as a learner might: `?name=` taken for a name (EMPTY_NAME_GREETED), or the error
// told in the body only, with a 200 (MISSING_NAME_STATUS_200).
#if defined(MISSING_NAME_STATUS_200)
constexpr int kNoName = 200;
#else
constexpr int kNoName = 400;  // the client's error: its request lacks what the route needs
#endif

void add_hello_route(handoff::app::Router& router) {
  router.add("GET", "/hello", [](const handoff::http::Request& req, handoff::http::Responder& out) {
    const std::string_view name = req.query("name");
#if defined(EMPTY_NAME_GREETED)
    const bool missing = req.target.find("name=") == std::string::npos;
#else
    const bool missing = name.empty();  // query() gives "" for an absent name and an empty one alike
#endif
    if (missing) {
      out.send(handoff::http::Response{kNoName, "text/plain", {}, "name is required"});
      return;
    }
    out.send(handoff::http::Response{200, "text/plain", {}, "Hello, " + std::string(name) + "!"});
  });
}

}  // namespace exercise
