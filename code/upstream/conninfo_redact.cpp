// upstream/conninfo_redact: a libpq connection string with its password hidden (chapter 06).
#include "upstream/conninfo_redact.h"

#include <cctype>
#include <cstddef>
#include <utility>
#include <vector>

namespace handoff::upstream {

namespace {

constexpr const char* kHidden = "***";

// A password's span [begin, end) in the conninfo, and its value as libpq would read it.
struct Span {
  std::size_t begin;
  std::size_t end;
  std::string value;
};

bool is_uri(const std::string& s) { return s.rfind("postgresql://", 0) == 0 || s.rfind("postgres://", 0) == 0; }

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

std::string percent_decoded(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// URI form: the user info's password (between the first ':' and the last '@' before the
// host) and each `password=` query parameter.
std::vector<Span> uri_passwords(const std::string& s) {
  std::vector<Span> out;
  const std::size_t authority = s.find("://") + 3;
  const std::size_t authority_end = s.find_first_of("/?", authority);
  const std::size_t at = s.rfind('@', authority_end == std::string::npos ? std::string::npos : authority_end);
  if (at != std::string::npos && at >= authority) {
    const std::size_t colon = s.find(':', authority);
    if (colon != std::string::npos && colon < at)
      out.push_back({colon + 1, at, percent_decoded(s.substr(colon + 1, at - colon - 1))});
  }
  const std::size_t query = s.find('?', authority);
  for (std::size_t p = query; p != std::string::npos && p < s.size();) {
    const std::size_t key = p + 1;
    const std::size_t next = s.find('&', key);
    const std::size_t end = next == std::string::npos ? s.size() : next;
    const std::size_t eq = s.find('=', key);
    if (eq != std::string::npos && eq < end && s.compare(key, eq - key, "password") == 0) {
      out.push_back({eq + 1, end, percent_decoded(s.substr(eq + 1, end - eq - 1))});
    }
    p = next;
  }
  return out;
}

// Keyword form: `key = value` pairs separated by spaces; a value bare (up to a space) or
// single-quoted with \' and \\ escapes, as libpq's conninfo_parse reads it.
std::vector<Span> keyword_passwords(const std::string& s) {
  std::vector<Span> out;
  std::size_t i = 0;
  auto skip_space = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  while (true) {
    skip_space();
    if (i >= s.size()) break;
    const std::size_t key_begin = i;
    while (i < s.size() && s[i] != '=' && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::string key = s.substr(key_begin, i - key_begin);
    skip_space();
    if (i >= s.size() || s[i] != '=') break;  // libpq refuses it; nothing more to find
    ++i;
    skip_space();
    const std::size_t value_begin = i;
    std::string value;
    if (i < s.size() && s[i] == '\'') {
      ++i;
      while (i < s.size() && s[i] != '\'') {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value += s[i++];
      }
      if (i < s.size()) ++i;  // the closing quote
    } else {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) {
        if (s[i] == '\\' && i + 1 < s.size()) ++i;
        value += s[i++];
      }
    }
    if (key == "password") out.push_back({value_begin, i, value});
  }
  return out;
}

std::vector<Span> passwords(const std::string& conninfo) {
  return is_uri(conninfo) ? uri_passwords(conninfo) : keyword_passwords(conninfo);
}

void replace_all(std::string& text, const std::string& what) {
  if (what.empty()) return;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 3)) {
    text.replace(p, what.size(), kHidden);
  }
}

}  // namespace

std::string redact_conninfo(const std::string& conninfo) {
  std::string out = conninfo;
  auto spans = passwords(conninfo);
  // Right to left, so that each span's offsets still hold when it is replaced.
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) out.replace(it->begin, it->end - it->begin, kHidden);
  // A value that also stands elsewhere (quoted into an option, say) goes too.
  for (const Span& span : spans) replace_all(out, span.value);
  return out;
}

std::string scrub_password(const std::string& text, const std::string& conninfo) {
  std::string out = text;
  for (const Span& span : passwords(conninfo)) {
    replace_all(out, conninfo.substr(span.begin, span.end - span.begin));  // as written
    replace_all(out, span.value);                                          // as libpq reads it
  }
  return out;
}

}  // namespace handoff::upstream
