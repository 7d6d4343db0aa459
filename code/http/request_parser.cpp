// http/request_parser: HTTP/1.1 request parsing over llhttp, with limits (chapter 01).
// Changed in chapter 06: one parsed request held at a time.
// Role: turn the bytes of one connection into complete Requests, in order, or into
// exactly one error status after which the connection closes. llhttp (strict mode) does
// every bit of tokenizing; this file only measures, collects and judges what llhttp
// reports through its callbacks, and adds the rules of RFC 9112/9110 llhttp leaves to the
// server (Host, the request-target forms, transfer codings by version and order, empty
// field names, versions, unknown methods).
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
/// The byte llhttp 8.1 swallows between a chunk extension's token value and the next
/// extension (see on_chunk_extension_value), given back to it from here.
constexpr char kExtensionSeparator = ';';

/// reg-name, IPv4address and the inside of an IP-literal are made of these (RFC 3986:
/// unreserved, sub-delims, and ':' inside brackets); '%' must start a pct-encoding.
bool host_chars(std::string_view s, bool in_brackets) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() || !ascii_hex(s[i + 1]) || !ascii_hex(s[i + 2])) return false;
      i += 2;
      continue;
    }
    if (ascii_alnum(c) || std::string_view("-._~!$&'()*+,;=").find(c) != std::string_view::npos) continue;
    if (in_brackets && c == ':') continue;
    return false;
  }
  return true;
}

/// uri-host [ ":" port ] (RFC 9112 3.2, RFC 3986 3.2.2-3.2.3): the value Host must have,
/// and the authority an absolute-form target must have. Empty is valid (no authority).
bool valid_authority(std::string_view a) {
  std::string_view rest = a;
  if (!a.empty() && a.front() == '[') {
    const std::size_t close = a.find(']');
    if (close == std::string_view::npos || close == 1 || !host_chars(a.substr(1, close - 1), true)) return false;
    rest = a.substr(close + 1);
  } else {
    const std::size_t colon = a.find(':');
    if (!host_chars(a.substr(0, colon), false)) return false;
    rest = colon == std::string_view::npos ? std::string_view{} : a.substr(colon);
  }
  if (rest.empty()) return true;
  if (rest.front() != ':') return false;
  for (char c : rest.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

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
  enum class Pause : std::uint8_t { none, head_end, message_end, extension_separator };

  explicit Impl(Limits l) : limits(l) {
    llhttp_init(&llp, HTTP_REQUEST, &settings());
    llp.data = this;
    // Strict llhttp refuses HTTP/1.2; RFC 9110 2.5 says to serve it as HTTP/1.1. With the
    // version check relaxed llhttp still reads one digit each; the major is judged here.
    llp.lenient_flags |= LENIENT_VERSION;
  }

  llhttp_t llp{};
  Limits limits;
  std::deque<Request> ready;
  Request cur;  ///< the request being parsed; moved into `ready` when complete

  // Offsets, in bytes since the connection began.
  std::uint64_t chunk_base = 0;     ///< offset of chunk_ptr[0]
  const char* chunk_ptr = nullptr;  ///< the bytes the running llhttp_execute() started at
  const char* chunk_end = nullptr;  ///< ... and where they end
  char last_byte = '\n';            ///< the last byte of the previous feed()
  std::uint64_t message_start = 0;  ///< first byte of the current (or next) message
  std::uint64_t line_end = 0;       ///< just past the version of the current message
  std::uint64_t section_start = 0;  ///< header or trailer section; valid if section_known

  std::size_t fields = 0;           ///< fields in the current header or trailer section
  std::size_t extension_bytes = 0;  ///< chunk-extension bytes of the current message
  std::size_t name_bytes = 0;       ///< bytes of the field name being received
  int te_fields = 0;                ///< Transfer-Encoding fields in the head
  int host_fields = 0;              ///< Host fields in the head
  Phase phase = Phase::idle;
  Pause pause = Pause::none;
  bool section_known = false;
  bool field_open = false;                ///< a field name is being received
  bool te_chunked = false;                ///< the (only) Transfer-Encoding value is "chunked"
  bool expect_header = false;             ///< the head carries Expect: 100-continue
  bool expect_continue = false;           ///< what take_expect_continue() reports
  bool value_ended_at_separator = false;  ///< the last extension value ended at a ';'
  bool unknown_method = false;            ///< llhttp did not know the method; scanning it here
  bool stopped = false;
  int error_status = 0;
  const char* error_reason = "";

  std::size_t feed(std::string_view bytes, std::size_t max_ready);

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
  void scan_unknown_method(const char* p, const char* end);
  bool judge_target_and_host();

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
  static int on_chunk_extension_value(llhttp_t* p, const char* at, std::size_t n);
  static int on_chunk_extension_value_complete(llhttp_t* p);
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
    t.on_chunk_extension_value = &Impl::on_chunk_extension_value;
    t.on_chunk_extension_value_complete = &Impl::on_chunk_extension_value_complete;
    t.on_chunk_header = &Impl::on_chunk_header;
    t.on_body = &Impl::on_body;
    t.on_message_complete = &Impl::on_message_complete;
    return t;
  }();
  return s;
}

// llhttp runs over the bytes until it has consumed them all, fails, or pauses at the end
// of a head or a message. After a pause the judgement that needs the exact offset is
// made here, and llhttp resumes on the rest (even when no byte is left: a head that
// ended on the last byte still has steps that consume no input, such as completing a
// request without a body), unless parsing has stopped. A third pause gives llhttp back
// the ';' it swallowed between two chunk extensions.
// With `max_ready`, it also stops at the end of a message once ready holds that many, and
// returns the bytes taken: the rest are the caller's to keep and feed again.
std::size_t RequestParser::Impl::feed(std::string_view bytes, std::size_t max_ready) {
  if (stopped || bytes.empty()) return bytes.size();
  if (ready.size() >= max_ready) return 0;
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  if (unknown_method) {
    scan_unknown_method(p, p + n);
    return bytes.size();
  }
  for (;;) {
    chunk_ptr = p;
    chunk_end = p + n;
    const llhttp_errno_t err = llhttp_execute(&llp, p, n);
    if (err == HPE_OK) {
      chunk_base += n;
      last_byte = bytes.back();
      check_at_end_of_feed(chunk_base);
      return bytes.size();
    }
    if (err != HPE_PAUSED) {
      fail_from_llhttp(err);
      return bytes.size();
    }
    const char* resume_at = llhttp_get_error_pos(&llp);
    const auto used = static_cast<std::size_t>(resume_at - p);
    chunk_base += used;
    p = resume_at;
    n -= used;
    const Pause why = pause;
    pause = Pause::none;
    if (why == Pause::extension_separator) {
      // llhttp waits in its "after the chunk size" state, where a ';' starts an extension.
      llhttp_resume(&llp);
      chunk_ptr = &kExtensionSeparator;
      chunk_end = chunk_ptr + 1;
      const llhttp_errno_t e = llhttp_execute(&llp, chunk_ptr, 1);
      if (e != HPE_OK) {
        fail_from_llhttp(e);
        return bytes.size();
      }
      continue;
    }
    if (why == Pause::head_end) {
      finish_head(chunk_base);
    } else {
      finish_message(chunk_base);
    }
    if (stopped) return bytes.size();
    llhttp_resume(&llp);
    if (why == Pause::message_end && ready.size() >= max_ready) {
      const std::size_t taken = bytes.size() - n;
      if (taken > 0) last_byte = bytes[taken - 1];
      return taken;  // between two messages: llhttp resumes on the next feed's first byte
    }
  }
}

void RequestParser::Impl::fail_from_llhttp(llhttp_errno_t err) {
  if (error_status != 0) {  // a callback of ours refused and has said why
    stopped = true;
    return;
  }
  if (err == HPE_INVALID_METHOD) {
    // llhttp knows a closed list of methods and stops at the first byte that leaves it. A
    // method it does not know is still a method if it is a token followed by SP: 501
    // (RFC 9110 9.1), decided by reading on to the SP. Anything else is 400.
    const char* at = llhttp_get_error_pos(&llp);
    const std::uint64_t at_offset = offset_of(at);
    const char before = at > chunk_ptr ? at[-1] : last_byte;
    const bool method_begun = at_offset > message_start && before != '\r' && before != '\n';
    if (is_tchar(*at)) {
      unknown_method = true;
      chunk_base = at_offset;
      scan_unknown_method(at, chunk_end);  // from the byte llhttp refused: it counts too
      return;
    }
    if (*at == ' ' && method_begun) {
      fail(501, "unknown method");
      return;
    }
  }
  // A Transfer-Encoding llhttp cannot use is one whose final coding is not chunked (e.g.
  // "chunked, gzip"): the body's length is unknown, 400 (RFC 9112 6.3).
  const char* reason = llhttp_get_error_reason(&llp);
  fail(400, reason != nullptr && *reason != '\0' ? reason : llhttp_errno_name(err));
}

// The method so far is a token; it stays one up to the SP that ends it (501), or is not
// a method at all (400). Its bytes count toward the request line like any other.
void RequestParser::Impl::scan_unknown_method(const char* p, const char* end) {
  for (; p != end; ++p) {
    ++chunk_base;
    if (line_over(chunk_base)) {
      fail(414, "request line too long");
      return;
    }
    if (*p == ' ') {
      fail(501, "unknown method");
      return;
    }
    if (!is_tchar(*p)) {
      fail(400, "invalid method");
      return;
    }
  }
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
  if (te_fields > 0) {
    // RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 is faulty framing. 6.3: chunked must be
    // the final coding, else the length is unknown. 6.1: a coding we do not know is 501.
    if (cur.version_minor == 0) {
      fail(400, "Transfer-Encoding in an HTTP/1.0 request");
      return;
    }
    if ((llp.flags & F_CHUNKED) == 0) {
      fail(400, "chunked is not the final transfer coding");
      return;
    }
    if (te_fields > 1 || !te_chunked) {
      fail(501, "Transfer-Encoding other than chunked");
      return;
    }
  }
  if (!judge_target_and_host()) return;
  if ((llp.flags & F_CONTENT_LENGTH) != 0) {
    if (llp.content_length > limits.max_body_bytes) {
      fail(413, "body too large");
      return;
    }
    const auto declared = static_cast<std::size_t>(llp.content_length);
    cur.body.reserve(declared < kMaxUpfrontBodyReserve ? declared : kMaxUpfrontBodyReserve);
  }
  const bool body_follows = (llp.flags & F_CHUNKED) != 0 || llp.content_length > 0;
  // RFC 9110 10.1.1: an HTTP/1.0 client cannot expect 100 Continue; the field is ignored.
  expect_continue = expect_header && body_follows && cur.version_minor >= 1;
  phase = Phase::body;
}

// What RFC 9112 3.2 asks of the request-target and Host, and llhttp does not check: the
// asterisk form only with OPTIONS, the authority form only (and always) with CONNECT; one
// Host, required in HTTP/1.1, a valid uri-host [":" port]; and an absolute-form target's
// authority replaces Host (3.2.2), so that the request carries the host it names.
bool RequestParser::Impl::judge_target_and_host() {
  if (cur.target == "*" && cur.method != "OPTIONS") {
    fail(400, "asterisk-form target with a method other than OPTIONS");
    return false;
  }
  if (cur.method == "CONNECT" && (cur.target.starts_with("/") || cur.target == "*")) {
    fail(400, "CONNECT without an authority-form target");
    return false;
  }
  if (host_fields > 1) {
    fail(400, "more than one Host");
    return false;
  }
  if (host_fields == 0 && cur.version_minor >= 1) {
    fail(400, "HTTP/1.1 request without Host");
    return false;
  }
  Header* host = nullptr;
  for (Header& h : cur.headers) {
    if (ascii_iequals(h.name, "host")) host = &h;
  }
  if (host != nullptr && !valid_authority(host->value)) {
    fail(400, "invalid Host");
    return false;
  }
  const std::string_view authority = cur.authority();
  if (authority.empty()) return true;
  if (!valid_authority(authority)) {
    fail(400, "invalid authority in the target");
    return false;
  }
  if (host != nullptr) {
    host->value.assign(authority);
  } else {
    cur.headers.push_back(Header{"Host", std::string(authority)});
  }
  return true;
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
  name_bytes = 0;
  te_fields = 0;
  host_fields = 0;
  te_chunked = false;
  field_open = false;
  value_ended_at_separator = false;
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
  if (p->http_major != 1) return s.fail(505, "HTTP version not supported");
  s.cur.version_minor = p->http_minor == 0 ? 0 : 1;  // HTTP/1.2 and on are served as 1.1
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
  s.name_bytes += n;
  if (trailer) return 0;
  if (!s.field_open) {
    s.cur.headers.emplace_back();
    s.field_open = true;
  }
  s.cur.headers.back().name.append(at, n);
  return 0;
}

// llhttp takes ": x" as a field with an empty name; a field name is a token (RFC 9110 5.1).
int RequestParser::Impl::on_header_field_complete(llhttp_t* p) {
  Impl& s = of(p);
  s.field_open = false;
  if (s.name_bytes == 0) return s.fail(400, "empty field name");
  s.name_bytes = 0;
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
  } else if (ascii_iequals(h.name, "host")) {
    ++s.host_fields;
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

// [request_parser.extension_separator]
// llhttp 8.1 consumes the ';' that ends a token value ("4;foo=bar;baz") and then expects
// CRLF or another ';', so it refuses the valid extension after it. When a value ends at a
// ';', its completion pauses llhttp, and feed() hands it that ';' again. (A quoted value
// ends at its closing quote, where llhttp reads the ';' itself.)
int RequestParser::Impl::on_chunk_extension_value(llhttp_t* p, const char* at, std::size_t n) {
  Impl& s = of(p);
  if (at + n < s.chunk_end) s.value_ended_at_separator = at[n] == kExtensionSeparator;
  return on_chunk_extension(p, at, n);
}

int RequestParser::Impl::on_chunk_extension_value_complete(llhttp_t* p) {
  Impl& s = of(p);
  if (!s.value_ended_at_separator) return 0;
  s.value_ended_at_separator = false;
  s.pause = Pause::extension_separator;
  return HPE_PAUSED;
}
// [request_parser.extension_separator]

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

void RequestParser::feed(std::string_view bytes) { impl_->feed(bytes, SIZE_MAX); }
std::size_t RequestParser::feed_some(std::string_view bytes, std::size_t max_ready) {
  return impl_->feed(bytes, max_ready);
}
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
