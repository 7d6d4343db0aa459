// exercises/01-add-route/tests: the route, called through the router as the loop would.
#include <catch2/catch.hpp>

#include "hello_route.h"

namespace {
struct Capture final : handoff::http::Responder {
  handoff::http::Response response;
  void send(handoff::http::Response r) override { response = std::move(r); }
  void start_stream(int, std::string) override { FAIL("a whole response was expected"); }
  void send_chunk(std::string) override { FAIL("a whole response was expected"); }
  void end_stream() override { FAIL("a whole response was expected"); }
};

handoff::http::Response get(const std::string& target) {
  handoff::app::Router router;
  exercise::add_hello_route(router);
  handoff::http::Request req;
  req.method = "GET";
  req.target = target;
  const auto match = router.find(req.method, req.path());
  INFO("no route answers GET " << req.path() << ": register GET /hello (the path alone; the query is not part of it)");
  REQUIRE(match.handler != nullptr);
  Capture out;
  (*match.handler)(req, out);
  return out.response;
}
}  // namespace

TEST_CASE("hello route: greets the name it is given", "[exercise][ch01]") {
  const auto r = get("/hello?name=Ada");
  INFO("GET /hello?name=Ada answers 200 with the body \"Hello, Ada!\"");
  CHECK(r.status == 200);
  CHECK(r.body == "Hello, Ada!");
}

TEST_CASE("hello route: finds the name among other parameters", "[exercise][ch01]") {
  INFO("the name is one query parameter among others: ask the request for it (req.query) rather than cutting the "
       "target");
  CHECK(get("/hello?x=1&name=Grace&y=2").body == "Hello, Grace!");
}

TEST_CASE("hello route: without a name it is a client error", "[exercise][ch01]") {
  const auto r = get("/hello");
  INFO("a request without a name (absent, or ?name= with nothing after it) is the client's error: status 400, "
       "body \"name is required\"; a client reads the status, not the body");
  CHECK(r.status == 400);
  CHECK(r.body == "name is required");
  CHECK(get("/hello?name=").status == 400);
}
