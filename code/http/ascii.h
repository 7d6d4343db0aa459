// http/ascii: ASCII character classes and case-insensitive comparison (chapter 01).
// Role: HTTP field names and codings compare without regard to ASCII case, and a token is
// made of tchars; this is the one place that says how, with no locale involved.
#pragma once

#include <string_view>

namespace handoff::http {

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool ascii_alnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

constexpr bool ascii_hex(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// A character of a token (RFC 9110 5.6.2, tchar): a letter, a digit, or one of the 15 marks below.
constexpr bool is_tchar(char c) noexcept {
  return ascii_alnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// True when `a` and `b` are equal ignoring ASCII case.
constexpr bool ascii_iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

}  // namespace handoff::http
