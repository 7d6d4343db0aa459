// fuzz/connection_app: the connection target's application, whose answers name their requests (chapter 01).
#include "fuzz/connection_app.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <string_view>
#include <utility>

#include "http/response.h"

namespace handoff::fuzz {

namespace {
std::string echo(const http::Request& r) {
  return r.method + " " + r.target + " 1." + std::to_string(r.version_minor) + " " + std::to_string(r.body.size()) +
         "\n" + r.body;
}

/// GET /b?n=N pads its answer with N bytes (at most 16 KiB): enough to fill a small
/// socket buffer, so the server meets a client that does not keep up.
std::size_t padding(const http::Request& r) {
  const std::string_view text = r.query("n");
  std::size_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return std::min<std::size_t>(n, 16 * 1024);
}
}  // namespace

std::string answer(const http::Request& r) {
  if (r.path() == "/s") return echo(r) + "end\n";
  if (r.path() == "/b") return echo(r) + std::string(padding(r), 'x');
  return echo(r);
}

const app::Router& routes() {
  static const app::Router router = [] {
    app::Router r;
    const http::Handler whole = [](const http::Request& req, http::Responder& out) {
      http::Response a;
      a.body = answer(req);
      out.send(std::move(a));
    };
    const http::Handler stream = [](const http::Request& req, http::Responder& out) {
      out.start_stream(200, "text/plain");
      out.send_chunk(echo(req));
      out.send_chunk("");
      out.send_chunk("end\n");
      out.end_stream();
    };
    constexpr bool kNeverBlocks = true;
    r.add("GET", "/e", whole, kNeverBlocks);
    r.add("POST", "/e", whole, kNeverBlocks);
    r.add("GET", "/b", whole, kNeverBlocks);
    r.add("GET", "/p", whole);
    r.add("POST", "/p", whole);
    r.add("GET", "/s", stream);
    return r;
  }();
  return router;
}

}  // namespace handoff::fuzz
