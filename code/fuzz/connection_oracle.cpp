// fuzz/connection_oracle: what the connection target's client must have received (chapter 01).
#include "fuzz/connection_oracle.h"

#include <algorithm>
#include <deque>
#include <string>

#include "fuzz/connection_app.h"
#include "fuzz/connection_require.h"
#include "http/response.h"
#include "http/response_reader.h"

namespace handoff::fuzz {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

bool parser_error(int status) {
  return status == 400 || status == 413 || status == 414 || status == 431 || status == 501 || status == 505;
}

/// What the oracle knows while it reads the answers: the requests, and how many final
/// answers it has read so far.
struct Answered {
  const std::deque<http::Request>* requests = nullptr;
  std::size_t finals = 0;  // final (non-1xx) answers completed so far
};

// The reader must be told which answers are to HEAD: they carry a length and no body.
bool answers_head(const void* context, int status) {
  const Answered& a = *static_cast<const Answered*>(context);
  // An error answer (408, or the parser's) always carries its body: it may stand where a
  // HEAD was still arriving when the server gave up on it.
  if (status / 100 == 1 || status == 408 || parser_error(status)) return false;
  return a.finals < a.requests->size() && (*a.requests)[a.finals].is_head();
}

}  // namespace

void check_answers(const Transcript& t) {
  http::RequestParser parsed(t.limits);
  parsed.feed(t.sent);
  const std::deque<http::Request>& requests = parsed.ready();

  Answered answered;
  answered.requests = &requests;
  http::ResponseReader reader({.keep_body = true, .bodiless = &answers_head, .context = &answered});

  std::size_t at = 0;
  std::size_t continued = kNone;  // the final answer a 100 Continue came before
  bool closed = false;            // an answer said Connection: close
  bool truncated = false;
  const auto judge = [&](std::size_t begin, std::size_t end) {
    require(!closed, "bytes after an answer that said Connection: close");
    const http::ParsedResponse& s = reader.response();
    const std::size_t i = answered.finals;
    if (s.status == 100) {
      require(continued != i, "two 100 Continue before one answer");
      require(i >= requests.size() || requests[i].header("Expect") != nullptr,
              "a 100 Continue for a request that did not ask for one");
      continued = i;
      return;
    }
    ++answered.finals;
    if (s.status == 408) {
      require(begin >= t.before_clock, "a 408 before the clock moved");
      require(i <= requests.size(), "a 408 after a request that was never sent");
      require(!s.keep_alive, "a 408 that keeps the connection open");
    } else if (parser_error(s.status)) {
      require(i == requests.size() && parsed.error_status() != 0, "an error answer where the bytes sent hold no error");
      require(!s.keep_alive, "an error answer that keeps the connection open");
    } else {
      require(i < requests.size(), "an answer to a request that was never sent");
      const http::Request& r = requests[i];
      const app::Router::Match match = routes().find(r.method, r.path());
      require(s.status == (match.handler ? 200 : match.status), "an answer with another request's status");
      require(s.version_minor == std::min(r.version_minor, 1), "an answer in another HTTP version than its request");
      const std::string body = match.handler ? answer(r) : std::string(http::reason_phrase(match.status)) + "\n";
      require(s.body == (r.is_head() ? std::string() : body), "an answer with another request's body, or mixed bytes");
      // An HTTP/1.0 stream ends with the connection: it cannot keep it alive.
      const bool until_close = match.handler && r.path() == "/s" && r.version_minor == 0;
      const bool keep_alive = r.keep_alive && !until_close;
      require(s.keep_alive == keep_alive || (t.drain_requested && !s.keep_alive),
              "an answer whose Connection is not what its request asked for");
    }
    if (!s.keep_alive) {
      closed = true;
      require(end == t.got.size(), "bytes after an answer that said Connection: close");
    }
  };
  // The reader stops at the end of each answer, so each is judged with its bytes' place.
  for (;;) {
    std::size_t used = 0;
    const http::ResponseReader::Step step = reader.feed(t.got.substr(at), used);
    if (step == http::ResponseReader::Step::more) break;
    require(step == http::ResponseReader::Step::response,
            "the bytes received are not a valid HTTP/1.1 response stream");
    judge(at, at + used);
    at += used;
  }
  require(t.eof, "checked before the connection ended");
  switch (reader.finish()) {
    case http::ResponseReader::Step::response:
      judge(at, t.got.size());  // an answer framed by the end of the connection
      break;
    case http::ResponseReader::Step::error:
      truncated = true;
      break;
    case http::ResponseReader::Step::more:
      break;
  }
  require(!truncated || t.cut_excused, "an answer cut short");
  require(closed || t.cut_excused || (answered.finals == requests.size() && parsed.error_status() == 0),
          "the connection ended with requests unanswered");
}

}  // namespace handoff::fuzz
