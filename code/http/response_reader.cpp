// http/response_reader: strict, incremental reading of HTTP/1.1 responses over llhttp (chapter 01).
#include "http/response_reader.h"

#include "http/ascii.h"

namespace handoff::http {

namespace {
// One settings table for every reader; llhttp requires it to outlive the parsers.
struct Settings {
  llhttp_settings_t table{};
  Settings(llhttp_cb begin, llhttp_data_cb field, llhttp_cb field_done, llhttp_data_cb value, llhttp_cb headers,
           llhttp_data_cb body, llhttp_cb complete) {
    llhttp_settings_init(&table);
    table.on_message_begin = begin;
    table.on_header_field = field;
    table.on_header_field_complete = field_done;
    table.on_header_value = value;
    table.on_headers_complete = headers;
    table.on_body = body;
    table.on_message_complete = complete;
  }
};

constexpr char kNoBytes[1] = {};  // llhttp is never handed a null pointer, even for no bytes
}  // namespace

const std::string* ParsedResponse::header(std::string_view name) const {
  for (const auto& h : headers) {
    if (ascii_iequals(h.name, name)) return &h.value;
  }
  return nullptr;
}

ResponseReader::ResponseReader() noexcept : ResponseReader(Options{}) {}

ResponseReader::ResponseReader(Options options) noexcept : options_(options) { reset(); }

void ResponseReader::reset() noexcept {
  static const Settings settings(&on_message_begin, &on_header_field, &on_header_field_complete, &on_header_value,
                                 &on_headers_complete, &on_body, &on_message_complete);
  llhttp_init(&parser_, HTTP_RESPONSE, &settings.table);
  in_message_ = false;
  complete_ = false;
  failed_ = false;
}

int ResponseReader::on_message_begin(llhttp_t* parser) {
  ResponseReader& self = of(parser);
  self.in_message_ = true;
  self.name_done_ = true;
  self.response_.headers.clear();
  self.response_.body.clear();
  return 0;
}

int ResponseReader::on_header_field(llhttp_t* parser, const char* at, std::size_t length) {
  ResponseReader& self = of(parser);
  if (!self.options_.keep_headers) return 0;
  if (self.name_done_) {  // a field's name may arrive in several spans
    self.response_.headers.push_back({});
    self.name_done_ = false;
  }
  self.response_.headers.back().name.append(at, length);
  return 0;
}

int ResponseReader::on_header_field_complete(llhttp_t* parser) {
  of(parser).name_done_ = true;
  return 0;
}

int ResponseReader::on_header_value(llhttp_t* parser, const char* at, std::size_t length) {
  ResponseReader& self = of(parser);
  if (self.options_.keep_headers) self.response_.headers.back().value.append(at, length);
  return 0;
}

int ResponseReader::on_headers_complete(llhttp_t* parser) {
  ResponseReader& self = of(parser);
  self.response_.status = llhttp_get_status_code(parser);
  self.response_.version_minor = llhttp_get_http_minor(parser);
  // 1 tells llhttp that this response has no body: the answer to HEAD carries the headers
  // of the GET it stands for, Content-Length included, but never its bytes.
  const Options& o = self.options_;
  return o.bodiless != nullptr && o.bodiless(o.context, self.response_.status) ? 1 : 0;
}

int ResponseReader::on_body(llhttp_t* parser, const char* at, std::size_t length) {
  ResponseReader& self = of(parser);
  if (self.options_.keep_body) self.response_.body.append(at, length);
  return 0;
}

// Every response pauses the parser, so the caller learns where each one ends, to the byte.
int ResponseReader::on_message_complete(llhttp_t* parser) {
  ResponseReader& self = of(parser);
  self.in_message_ = false;
  self.complete_ = true;
  self.response_.keep_alive = llhttp_should_keep_alive(parser) != 0;
  return HPE_PAUSED;
}

ResponseReader::Step ResponseReader::feed(std::string_view bytes, std::size_t& used) {
  used = 0;
  if (failed_) return Step::error;
  const char* data = bytes.empty() ? kNoBytes : bytes.data();
  parser_.data = this;  // set here rather than once, so that the reader may be moved
  complete_ = false;
  const llhttp_errno_t err = llhttp_execute(&parser_, data, bytes.size());
  if (err == HPE_OK) {
    used = bytes.size();
    return Step::more;
  }
  if (err == HPE_PAUSED && complete_) {
    used = static_cast<std::size_t>(llhttp_get_error_pos(&parser_) - data);
    llhttp_resume(&parser_);
    return Step::response;
  }
  // Anything else, HPE_PAUSED_UPGRADE included (a 101 nobody asked for), is an error.
  if (const char* at = llhttp_get_error_pos(&parser_)) used = static_cast<std::size_t>(at - data);
  failed_ = true;
  return Step::error;
}

ResponseReader::Step ResponseReader::finish() {
  if (failed_) return Step::error;
  parser_.data = this;
  complete_ = false;
  // After the pause at a response's end the parser has one step left past it; an empty
  // call lets it take that step before the end of the stream is judged.
  if (llhttp_execute(&parser_, kNoBytes, 0) != HPE_OK) {
    failed_ = true;
    return Step::error;
  }
  if (!in_message_) return Step::more;
  // A body that runs to the end of the connection completes here: on_message_complete
  // runs inside llhttp_finish and pauses (such a response never keeps the connection).
  const llhttp_errno_t err = llhttp_finish(&parser_);
  if (err == HPE_PAUSED && complete_) {
    llhttp_resume(&parser_);
    return Step::response;
  }
  failed_ = true;
  return Step::error;
}

const char* ResponseReader::error_reason() const noexcept {
  const char* reason = parser_.reason;
  return reason ? reason : llhttp_errno_name(static_cast<llhttp_errno_t>(parser_.error));
}

}  // namespace handoff::http
