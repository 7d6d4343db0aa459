// http/request_parser: HTTP/1.1 request parsing over llhttp, with limits (chapter 01).
// Role: turn the bytes of one connection into complete Requests, in order, or into
// exactly one error status after which the connection closes. llhttp (strict mode) does
// every bit of tokenizing; this file only measures, collects and judges what llhttp
// reports through its callbacks.
#include "http/request_parser.h"

#include "http/ascii.h"

#include <llhttp.h>

#include <cstdint>

namespace handoff::http {

namespace {

/// A Content-Length body is reserved up front, but never more than this before the bytes
/// arrive: a client that announces a large body and then stalls costs little.
constexpr std::size_t kMaxUpfrontBodyReserve = std::size_t{64} * 1024;
/// Header vectors start with room for this many fields (one allocation for most requests).
constexpr std::size_t kInitialHeaderCapacity = 8;

}  // namespace

/// The state behind a RequestParser.
///
/// How sizes are measured. Every byte of the connection has an absolute offset. llhttp
/// hands each span (method, target, version, field name, field value, body) to a
/// callback with a pointer into the buffer it is running over, so the offset of any span
/// end is known exactly, and at the end of every feed() the offset of the last byte is
/// known too. Two more offsets come from pausing llhttp: the end of a head (pause in
/// on_headers_complete) and the end of a message (pause in on_message_complete). With
/// these, each limit is checked against the true byte count as soon as the bytes arrive,
/// including bytes no span covers (whitespace, CRLFs), and nothing is ever stored beyond
/// a limit: a span is measured before it is appended.
///
///   request line    from the message's first byte (any empty lines before the method
///                   included) to the end of the version, without the CRLF
///   header section  from the byte after the request line's CRLF through the CRLF of
///                   the empty line that ends the head
///   trailer section from the first trailer field through the final CRLF; limited like
///                   the header section, trailer fields are counted but not kept
///   body            the decoded body; chunk-extension bytes count against it too, so a
///                   stream of extensions cannot run on without limit
struct RequestParser::Impl {
  enum class Phase : std::uint8_t { idle, request_line, header_section, body, trailer_section };
  enum class Pause : std::uint8_t { none, head_end, message_end };

  explicit Impl(Limits l) : limits(l) {
    llhttp_init(&llp, HTTP_REQUEST, &settings());
    llp.data = this;
  }

  llhttp_t llp{};
  Limits limits;
  std::deque<Request> ready;
  Request cur;  ///< the request being parsed; moved into `ready` when complete

  // Offsets, in bytes since the connection began.
  std::uint64_t chunk_base = 0;     ///< offset of chunk_ptr[0]
  const char* chunk_ptr = nullptr;  ///< the bytes the running llhttp_execute() started at
  std::uint64_t message_start = 0;  ///< first byte of the current (or next) message
  std::uint64_t line_end = 0;       ///< just past the version of the current message
  std::uint64_t section_start = 0;  ///< header or trailer section; valid if section_known

  std::size_t fields = 0;           ///< fields in the current header or trailer section
  std::size_t extension_bytes = 0;  ///< chunk-extension bytes of the current message
  int te_fields = 0;                ///< Transfer-Encoding fields in the head
  Phase phase = Phase::idle;
  Pause pause = Pause::none;
  bool section_known = false;
  bool field_open = false;       ///< a field name is being received
  bool te_chunked = false;       ///< the (only) Transfer-Encoding value is "chunked"
  bool expect_header = false;    ///< the head carries Expect: 100-continue
  bool expect_continue = false;  ///< what take_expect_continue() reports
  bool stopped = false;
  int error_status = 0;
  const char* error_reason = "";

  void feed(std::string_view bytes);

 private:
  static Impl& of(llhttp_t* p) { return *static_cast<Impl*>(p->data); }
  std::uint64_t offset_of(const char* at) const { return chunk_base + static_cast<std::uint64_t>(at - chunk_ptr); }

  /// Records the first error and stops; returns the value that makes llhttp stop too.
  int fail(int status, const char* reason) {
    if (error_status == 0) {
      error_status = status;
      error_reason = reason;
    }
    stopped = true;
    expect_continue = false;
    return -1;
  }
  void fail_from_llhttp(llhttp_errno_t err);

  bool line_over(std::uint64_t end) const { return end - message_start > limits.max_request_line; }
  bool section_over(std::uint64_t end) const {
    return end > section_start && end - section_start > limits.max_header_bytes;
  }

  void check_at_end_of_feed(std::uint64_t end);
  void finish_head(std::uint64_t end);
  void finish_message(std::uint64_t end);
  void begin_message();

  // llhttp callbacks. A non-zero return other than HPE_PAUSED makes llhttp_execute()
  // return an error; fail() has recorded the status by then.
  static const llhttp_settings_t& settings();
  static int on_message_begin(llhttp_t* p);
  static int on_method(llhttp_t* p, const char* at, std::size_t n);
  static int on_url(llhttp_t* p, const char* at, std::size_t n);
  static int on_version(llhttp_t* p, const char* at, std::size_t n);
  static int on_version_complete(llhttp_t* p);
  static int on_header_field(llhttp_t* p, const char* at, std::size_t n);
  static int on_header_field_complete(llhttp_t* p);
  static int on_header_value(llhttp_t* p, const char* at, std::size_t n);
  static int on_header_value_complete(llhttp_t* p);
  static int on_headers_complete(llhttp_t* p);
  static int on_chunk_extension(llhttp_t* p, const char* at, std::size_t n);
  static int on_chunk_header(llhttp_t* p);
  static int on_body(llhttp_t* p, const char* at, std::size_t n);
  static int on_message_complete(llhttp_t* p);
};

const llhttp_settings_t& RequestParser::Impl::settings() {
  static const llhttp_settings_t s = [] {
    llhttp_settings_t t;
    llhttp_settings_init(&t);
    t.on_message_begin = &Impl::on_message_begin;
    t.on_method = &Impl::on_method;
    t.on_url = &Impl::on_url;
    t.on_version = &Impl::on_version;
    t.on_version_complete = &Impl::on_version_complete;
    t.on_header_field = &Impl::on_header_field;
    t.on_header_field_complete = &Impl::on_header_field_complete;
    t.on_header_value = &Impl::on_header_value;
    t.on_header_value_complete = &Impl::on_header_value_complete;
    t.on_headers_complete = &Impl::on_headers_complete;
    t.on_chunk_extension_name = &Impl::on_chunk_extension;
    t.on_chunk_extension_value = &Impl::on_chunk_extension;
    t.on_chunk_header = &Impl::on_chunk_header;
    t.on_body = &Impl::on_body;
    t.on_message_complete = &Impl::on_message_complete;
    return t;
  }();
  return s;
}

// [request_parser.feed]
// llhttp runs over the bytes until it has consumed them all, fails, or pauses at the end
// of a head or a message. After a pause the judgement that needs the exact offset is
// made here, and llhttp resumes on the rest (even when no byte is left: a head that
// ended on the last byte still has steps that consume no input, such as completing a
// request without a body), unless parsing has stopped.
void RequestParser::Impl::feed(std::string_view bytes) {
  if (stopped || bytes.empty()) return;
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  for (;;) {
    chunk_ptr = p;
    const llhttp_errno_t err = llhttp_execute(&llp, p, n);
    if (err == HPE_OK) {
      chunk_base += n;
      check_at_end_of_feed(chunk_base);
      return;
    }
    if (err != HPE_PAUSED) {
      fail_from_llhttp(err);
      return;
    }
    const char* resume_at = llhttp_get_error_pos(&llp);
    const auto used = static_cast<std::size_t>(resume_at - p);
    chunk_base += used;
    p = resume_at;
    n -= used;
    const Pause why = pause;
    pause = Pause::none;
    if (why == Pause::head_end) {
      finish_head(chunk_base);
    } else {
      finish_message(chunk_base);
    }
    if (stopped) return;
    llhttp_resume(&llp);
  }
}
// [request_parser.feed]

void RequestParser::Impl::fail_from_llhttp(llhttp_errno_t err) {
  if (error_status != 0) {  // a callback of ours refused and has said why
    stopped = true;
    return;
  }
  // A Transfer-Encoding llhttp cannot use (e.g. "chunked, gzip") is ours to refuse with
  // 501, unless it came with a Content-Length: that pair is a smuggling attempt, 400.
  const bool coding = err == HPE_INVALID_TRANSFER_ENCODING && (llp.flags & F_CONTENT_LENGTH) == 0;
  const char* reason = llhttp_get_error_reason(&llp);
  fail(coding ? 501 : 400, reason != nullptr && *reason != '\0' ? reason : llhttp_errno_name(err));
}

void RequestParser::Impl::check_at_end_of_feed(std::uint64_t end) {
  switch (phase) {
    case Phase::request_line:
      if (line_over(end)) fail(414, "request line too long");
      break;
    case Phase::header_section:
      if (section_over(end)) fail(431, "header section too large");
      break;
    case Phase::trailer_section:
      if (section_known && section_over(end)) fail(431, "trailer section too large");
      break;
    case Phase::idle:
    case Phase::body:
      break;
  }
}

void RequestParser::Impl::finish_head(std::uint64_t end) {
  if (section_over(end)) {
    fail(431, "header section too large");
    return;
  }
  if (te_fields > 0 && (te_fields > 1 || !te_chunked)) {
    fail(501, "Transfer-Encoding other than chunked");
    return;
  }
  if ((llp.flags & F_CONTENT_LENGTH) != 0) {
    if (llp.content_length > limits.max_body_bytes) {
      fail(413, "body too large");
      return;
    }
    const auto declared = static_cast<std::size_t>(llp.content_length);
    cur.body.reserve(declared < kMaxUpfrontBodyReserve ? declared : kMaxUpfrontBodyReserve);
  }
  const bool body_follows = (llp.flags & F_CHUNKED) != 0 || llp.content_length > 0;
  expect_continue = expect_header && body_follows;
  phase = Phase::body;
}

void RequestParser::Impl::finish_message(std::uint64_t end) {
  if (phase == Phase::trailer_section && section_known && section_over(end)) {
    fail(431, "trailer section too large");
    return;
  }
  const bool keep_alive = cur.keep_alive;
  ready.push_back(std::move(cur));
  phase = Phase::idle;
  message_start = end;
  if (!keep_alive) stopped = true;
}

void RequestParser::Impl::begin_message() {
  // `cur` was moved from (or never used): clear() makes its state definite, and the
  // moved-from strings keep no buffer to reuse, so one reservation replaces the
  // geometric growth of the header vector.
  cur.method.clear();
  cur.target.clear();
  cur.version_minor = 1;
  cur.headers.clear();
  cur.headers.reserve(kInitialHeaderCapacity);
  cur.body.clear();
  cur.keep_alive = true;
  phase = Phase::request_line;
  section_known = false;
  fields = 0;
  extension_bytes = 0;
  te_fields = 0;
  te_chunked = false;
  field_open = false;
  expect_header = false;
  expect_continue = false;
}

int RequestParser::Impl::on_message_begin(llhttp_t* p) {
  of(p).begin_message();
  return 0;
}

int RequestParser::Impl::on_method(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  if (s.line_over(s.offset_of(at + n))) return s.fail(414, "request line too long");
  s.cur.method.append(at, n);
  return 0;
}

int RequestParser::Impl::on_url(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  if (s.line_over(s.offset_of(at + n))) return s.fail(414, "request line too long");
  s.cur.target.append(at, n);
  return 0;
}

int RequestParser::Impl::on_version(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  s.line_end = s.offset_of(at + n);
  if (s.line_over(s.line_end)) return s.fail(414, "request line too long");
  return 0;
}

int RequestParser::Impl::on_version_complete(llhttp_t* p) {
  Impl& s = of(p);
  if (p->http_major != 1) return s.fail(400, "unsupported HTTP version");
  s.cur.version_minor = p->http_minor;
  s.phase = Phase::header_section;
  // CRLF ends the line (llhttp also takes a bare LF: the section then counts one byte short).
  s.section_start = s.line_end + 2;
  s.section_known = true;
  return 0;
}

int RequestParser::Impl::on_header_field(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  const bool trailer = s.phase == Phase::trailer_section;
  if (trailer && !s.section_known) {
    s.section_start = s.offset_of(at);
    s.section_known = true;
  }
  if (s.section_over(s.offset_of(at + n))) {
    return s.fail(431, trailer ? "trailer section too large" : "header section too large");
  }
  if (trailer) return 0;
  if (!s.field_open) {
    s.cur.headers.emplace_back();
    s.field_open = true;
  }
  s.cur.headers.back().name.append(at, n);
  return 0;
}

int RequestParser::Impl::on_header_field_complete(llhttp_t* p) {
  Impl& s = of(p);
  s.field_open = false;
  if (++s.fields > s.limits.max_header_fields) {
    return s.fail(431, s.phase == Phase::trailer_section ? "too many trailer fields" : "too many header fields");
  }
  return 0;
}

int RequestParser::Impl::on_header_value(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  const bool trailer = s.phase == Phase::trailer_section;
  if (s.section_over(s.offset_of(at + n))) {
    return s.fail(431, trailer ? "trailer section too large" : "header section too large");
  }
  if (!trailer) s.cur.headers.back().value.append(at, n);
  return 0;
}

// llhttp strips the whitespace before a value but keeps the whitespace after it; the
// value is trimmed here, then the fields whose meaning is ours are noted. Their verdict
// waits for the end of the head, so that it does not depend on the order of fields.
int RequestParser::Impl::on_header_value_complete(llhttp_t* p) {
  Impl& s = of(p);
  if (s.phase != Phase::header_section) return 0;
  Header& h = s.cur.headers.back();
  while (!h.value.empty() && (h.value.back() == ' ' || h.value.back() == '\t')) {
    h.value.pop_back();
  }
  if (ascii_iequals(h.name, "transfer-encoding")) {
    ++s.te_fields;
    s.te_chunked = ascii_iequals(h.value, "chunked");
  } else if (ascii_iequals(h.name, "expect")) {
    s.expect_header = ascii_iequals(h.value, "100-continue");
  }
  return 0;
}

int RequestParser::Impl::on_headers_complete(llhttp_t* p) {
  Impl& s = of(p);
  // llhttp takes "GET /" without a version as HTTP/0.9: no version, no headers, ever.
  if (s.phase != Phase::header_section) return s.fail(400, "HTTP/0.9 request");
  s.pause = Pause::head_end;  // judged in finish_head(), at the exact end offset
  return HPE_PAUSED;
}

int RequestParser::Impl::on_chunk_extension(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  (void)at;
  s.expect_continue = false;
  if (n > s.limits.max_body_bytes - s.cur.body.size() - s.extension_bytes) {
    return s.fail(413, "chunk extensions too large");
  }
  s.extension_bytes += n;
  return 0;
}

// Called after each chunk-size line, with the chunk's size in content_length: a chunk
// that would take the body past the limit is refused before its data arrives.
int RequestParser::Impl::on_chunk_header(llhttp_t* p) {
  Impl& s = of(p);
  s.expect_continue = false;
  if (p->content_length == 0) {  // the last chunk: trailer fields may follow
    s.phase = Phase::trailer_section;
    s.section_known = false;
    s.fields = 0;
    return 0;
  }
  if (p->content_length > s.limits.max_body_bytes - s.cur.body.size() - s.extension_bytes) {
    return s.fail(413, "body too large");
  }
  return 0;
}

int RequestParser::Impl::on_body(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  s.expect_continue = false;
  if (n > s.limits.max_body_bytes - s.cur.body.size()) return s.fail(413, "body too large");
  s.cur.body.append(at, n);
  return 0;
}

// An upgrade (or CONNECT) is served as an ordinary request after which the connection
// closes: we never switch protocols, so what follows it is not ours to parse.
int RequestParser::Impl::on_message_complete(llhttp_t* p) {
  Impl& s = of(p);
  s.cur.keep_alive = llhttp_should_keep_alive(p) != 0 && p->upgrade == 0;
  s.expect_continue = false;
  s.pause = Pause::message_end;  // finished in finish_message(), at the exact end offset
  return HPE_PAUSED;
}

RequestParser::RequestParser(Limits limits) : impl_(std::make_unique<Impl>(limits)) {}
RequestParser::~RequestParser() = default;

void RequestParser::feed(std::string_view bytes) { impl_->feed(bytes); }
std::deque<Request>& RequestParser::ready() { return impl_->ready; }
int RequestParser::error_status() const { return impl_->error_status; }
std::string_view RequestParser::error_reason() const { return impl_->error_reason; }

bool RequestParser::take_expect_continue() {
  const bool was = impl_->expect_continue;
  impl_->expect_continue = false;
  return was;
}

bool RequestParser::head_in_progress() const {
  return impl_->phase == Impl::Phase::request_line || impl_->phase == Impl::Phase::header_section;
}

bool RequestParser::request_in_progress() const { return impl_->phase != Impl::Phase::idle; }
bool RequestParser::stopped() const { return impl_->stopped; }

}  // namespace handoff::http
