// http/request: one parsed HTTP/1.1 request (chapter 01).
// Role: the small read-only views a handler needs over a parsed request: the path (of any
// request-target form), the authority of an absolute-form target, one query parameter,
// one header. None of them allocates; each returns a view into the request (or a
// literal), valid while the request lives and is not modified.
#include "http/request.h"

#include "http/ascii.h"

namespace handoff::http {

namespace {

/// Where an absolute-form target's authority lies.
///
/// An absolute-form target is `scheme "://" authority [path] ["?" query]` (RFC 9112 3.2.2;
/// llhttp has checked its characters). Returns where the authority begins and ends, or
/// {0, 0} for the other forms: origin ("/..."), authority ("host:port"), asterisk ("*").
struct AuthoritySpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

AuthoritySpan authority_span(std::string_view t) {
  if (t.empty() || t.front() == '/') return {};
  const std::size_t sep = t.find("://");
  if (sep == std::string_view::npos) return {};
  const std::size_t end = t.find_first_of("/?#", sep + 3);
  return {sep + 3, end == std::string_view::npos ? t.size() : end};
}

}  // namespace

std::string_view Request::path() const {
  std::string_view t = target;
  const std::size_t origin = authority_span(t).end;  // 0 unless absolute-form
  t = t.substr(origin);
  t = t.substr(0, t.find('?'));
  return origin != 0 && t.empty() ? std::string_view("/") : t;
}

std::string_view Request::authority() const {
  const AuthoritySpan a = authority_span(target);
  return std::string_view(target).substr(a.begin, a.end - a.begin);
}

// The query is split on '&'; each piece is `name=value` or a bare `name` (value "").
// The first piece whose name matches exactly wins. Nothing is percent-decoded.
std::string_view Request::query(std::string_view name) const {
  std::string_view t = target;
  const std::size_t q = t.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view rest = t.substr(q + 1);
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view piece = rest.substr(0, amp);
    const std::size_t eq = piece.find('=');
    const std::string_view key = piece.substr(0, eq);
    if (key == name) {
      return eq == std::string_view::npos ? std::string_view{} : piece.substr(eq + 1);
    }
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return {};
}

const std::string* Request::header(std::string_view name) const {
  for (const Header& h : headers) {
    if (ascii_iequals(h.name, name)) return &h.value;
  }
  return nullptr;
}

}  // namespace handoff::http
