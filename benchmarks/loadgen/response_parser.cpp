// loadgen/response_parser: strict, incremental HTTP/1.1 response parsing over llhttp (chapter 01).
// Role: the llhttp callbacks and the mapping of llhttp's result to ok / closed / error.
#include "loadgen/response_parser.h"

namespace handoff::loadgen {
namespace {

// One settings table for every parser; llhttp requires it to outlive the parsers.
struct Settings {
  llhttp_settings_t table{};
  Settings(llhttp_cb begin, llhttp_cb headers, llhttp_cb complete) {
    llhttp_settings_init(&table);
    table.on_message_begin = begin;
    table.on_headers_complete = headers;
    table.on_message_complete = complete;
  }
};

}  // namespace

ResponseParser::ResponseParser(Sink sink, void* context, bool head_requests) noexcept
    : sink_(sink), context_(context), head_requests_(head_requests) {
  reset();
}

void ResponseParser::reset() noexcept {
  static const Settings settings(&on_message_begin, &on_headers_complete, &on_message_complete);
  llhttp_init(&parser_, HTTP_RESPONSE, &settings.table);
  in_message_ = false;
  closed_ = false;
  failed_ = false;
}

int ResponseParser::on_message_begin(llhttp_t* parser) {
  static_cast<ResponseParser*>(parser->data)->in_message_ = true;
  return 0;
}

int ResponseParser::on_headers_complete(llhttp_t* parser) {
  const auto* self = static_cast<ResponseParser*>(parser->data);
  // 1 tells llhttp that this response has no body: the answer to HEAD carries the
  // headers of the GET it stands for, Content-Length included, but never its bytes.
  return self->head_requests_ ? 1 : 0;
}

int ResponseParser::on_message_complete(llhttp_t* parser) {
  auto* self = static_cast<ResponseParser*>(parser->data);
  self->in_message_ = false;
  const int status = parser->status_code;
  if (status >= 100 && status < 200 && status != 101) return 0;  // interim; the final follows
  if (!self->sink_(self->context_, status)) {
    llhttp_set_error_reason(parser, "response without a request waiting for it");
    return HPE_USER;
  }
  if (!llhttp_should_keep_alive(parser)) {
    // Stop here: the bytes after a response that ends the connection are not ours to
    // read, and llhttp would reject them as HPE_CLOSED_CONNECTION.
    self->closed_ = true;
    return HPE_PAUSED;
  }
  return 0;
}

ResponseParser::Outcome ResponseParser::outcome_of(llhttp_errno_t err) noexcept {
  if (err == HPE_OK) return closed_ ? Outcome::closed : Outcome::ok;
  if (err == HPE_PAUSED && closed_) return Outcome::closed;
  // Anything else, HPE_PAUSED_UPGRADE included (a 101 we never asked for), is an error.
  failed_ = true;
  return Outcome::error;
}

ResponseParser::Outcome ResponseParser::feed(const char* data, std::size_t size) noexcept {
  if (failed_) return Outcome::error;
  if (closed_) return Outcome::closed;
  parser_.data = this;  // set here rather than once, so that the object may be moved
  return outcome_of(llhttp_execute(&parser_, data, size));
}

ResponseParser::Outcome ResponseParser::finish() noexcept {
  if (failed_) return Outcome::error;
  if (closed_) return Outcome::closed;
  if (!in_message_) return Outcome::ok;
  parser_.data = this;
  // A body that runs to the end of the connection completes here: on_message_complete
  // runs inside llhttp_finish and pauses (such a response never keeps the connection).
  const llhttp_errno_t err = llhttp_finish(&parser_);
  if ((err == HPE_OK || err == HPE_PAUSED) && !in_message_) {
    closed_ = true;
    return Outcome::closed;
  }
  failed_ = true;
  return Outcome::error;
}

const char* ResponseParser::error_reason() const noexcept {
  const char* reason = parser_.reason;
  return reason ? reason : llhttp_errno_name(static_cast<llhttp_errno_t>(parser_.error));
}

}  // namespace handoff::loadgen
