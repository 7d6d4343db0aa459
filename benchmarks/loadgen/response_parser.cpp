// loadgen/response_parser: the statuses of the responses one connection receives (chapter 01).
// Role: interim responses skipped, each final status to the sink, and the mapping of the
// reader's steps to ok / closed / error.
#include "loadgen/response_parser.h"

#include <string_view>

namespace handoff::loadgen {
namespace {

using Step = http::ResponseReader::Step;

// The answer to HEAD carries the headers of the GET it stands for, Content-Length
// included, but never its bytes.
bool every_response_bodiless(const void*, int) { return true; }

http::ResponseReader::Options options_for(bool head_requests) noexcept {
  http::ResponseReader::Options o;
  if (head_requests) o.bodiless = &every_response_bodiless;
  return o;
}

}  // namespace

ResponseParser::ResponseParser(Sink sink, void* context, bool head_requests) noexcept
    : reader_(options_for(head_requests)), sink_(sink), context_(context) {}

void ResponseParser::reset() noexcept {
  reader_.reset();
  closed_ = false;
  failed_ = false;
  refused_ = false;
}

ResponseParser::Outcome ResponseParser::take() noexcept {
  const http::ParsedResponse& r = reader_.response();
  if (r.status >= 100 && r.status < 200 && r.status != 101) return Outcome::ok;  // interim; the final follows
  if (!sink_(context_, r.status)) {
    refused_ = true;
    failed_ = true;
    return Outcome::error;
  }
  // A response that ends the connection ends the stream: the bytes after it are not ours
  // to read (the reader would reject them).
  if (!r.keep_alive) {
    closed_ = true;
    return Outcome::closed;
  }
  return Outcome::ok;
}

ResponseParser::Outcome ResponseParser::feed(const char* data, std::size_t size) noexcept {
  if (failed_) return Outcome::error;
  if (closed_) return Outcome::closed;
  std::string_view rest(data, size);
  for (;;) {
    std::size_t used = 0;
    const Step step = reader_.feed(rest, used);
    if (step == Step::more) return Outcome::ok;
    if (step == Step::error) {
      failed_ = true;
      return Outcome::error;
    }
    const Outcome outcome = take();
    if (outcome != Outcome::ok) return outcome;
    rest.remove_prefix(used);
  }
}

ResponseParser::Outcome ResponseParser::finish() noexcept {
  if (failed_) return Outcome::error;
  if (closed_) return Outcome::closed;
  switch (reader_.finish()) {
    case Step::more:
      return Outcome::ok;  // between responses
    case Step::response:   // a body that ran to the end of the connection
      if (take() == Outcome::error) return Outcome::error;
      closed_ = true;
      return Outcome::closed;
    case Step::error:
      break;
  }
  failed_ = true;
  return Outcome::error;
}

const char* ResponseParser::error_reason() const noexcept {
  return refused_ ? "response without a request waiting for it" : reader_.error_reason();
}

}  // namespace handoff::loadgen
