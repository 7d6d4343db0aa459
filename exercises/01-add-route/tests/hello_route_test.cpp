// exercises/01-add-route/tests: the route, called through the router as the loop would.
#include <catch2/catch.hpp>
#include <cctype>
#include <string>
#include <utility>

#include "hello_route.h"

namespace {
/// What a client would read: one response, whole (send) or streamed (start_stream, chunks,
/// end_stream); a handler answers each request once, either way.
struct Capture final : handoff::http::Responder {
  handoff::http::Response response;
  int answers = 0;       // send() calls and streams started
  bool streaming = false, ended = false;
  void send(handoff::http::Response r) override {
    ++answers;
    response = std::move(r);
    ended = true;
  }
  void start_stream(int status, std::string type) override {
    ++answers;
    streaming = true;
    response = handoff::http::Response{status, std::move(type), {}, {}};
  }
  void send_chunk(std::string data) override {
    INFO("send_chunk() outside a stream: start_stream() first");
    CHECK(streaming);
    response.body += data;
  }
  void end_stream() override {
    INFO("end_stream() outside a stream: start_stream() first");
    CHECK(streaming);
    streaming = false;
    ended = true;
  }
};

/// The media type of a Content-Type value, as a client reads it: before any parameter
/// ("; charset=utf-8"), without spaces, in lower case.
std::string media_type(const std::string& content_type) {
  std::string type;
  for (char ch : content_type.substr(0, content_type.find(';'))) {
    if (ch != ' ' && ch != '\t') type += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return type;
}

handoff::http::Response get(const std::string& target) {
  handoff::app::Router router;
  exercise::add_hello_route(router);
  handoff::http::Request req;
  req.method = "GET";
  req.target = target;
  const auto match = router.find(req.method, req.path());
  {
    INFO("no route answers GET " << req.path()
                                 << ": register GET /hello (the path alone; the query is not part of it)");
    REQUIRE(match.handler != nullptr);
  }
  Capture out;
  (*match.handler)(req, out);
  {
    INFO("GET " << target << " was answered " << out.answers
                << " times: a handler answers each request exactly once (send() once, or one stream), so after "
                   "sending the 400 it must return");
    REQUIRE(out.answers == 1);
  }
  {
    INFO("GET " << target << ": the stream was never ended (end_stream())");
    REQUIRE(out.ended);
  }
  {
    INFO("GET " << target << " answered with content type \"" << out.response.content_type
                << "\": the route's answers are text/plain");
    CHECK(media_type(out.response.content_type) == "text/plain");
  }
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
  const auto r = get("/hello?x=1&name=Grace&y=2");
  INFO("the name is one query parameter among others: ask the request for it (req.query) rather than cutting the "
       "target");
  CHECK(r.body == "Hello, Grace!");
}

TEST_CASE("hello route: a parameter whose name only ends in 'name' is not the name", "[exercise][ch01]") {
  const auto nick = get("/hello?nickname=Bob");
  const auto sur = get("/hello?surname=Lovelace&name=Ada");
  INFO("\"nickname\" and \"surname\" are other parameters: the name is the parameter called exactly \"name\" "
       "(req.query(\"name\") compares whole names; a search for \"name=\" in the target does not)");
  CHECK(nick.status == 400);
  CHECK(nick.body == "name is required");
  CHECK(sur.body == "Hello, Ada!");
}

TEST_CASE("hello route: without a name it is a client error", "[exercise][ch01]") {
  const auto r = get("/hello");
  INFO("a request without a name (absent, or ?name= with nothing after it) is the client's error: status 400, "
       "body \"name is required\"; a client reads the status, not the body");
  CHECK(r.status == 400);
  CHECK(r.body == "name is required");
  CHECK(get("/hello?name=").status == 400);
}
