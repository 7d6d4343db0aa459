// http/ascii: case-insensitive ASCII comparison for header names and tokens (chapter 01).
// Role: HTTP field names and codings compare without regard to ASCII case; this is the one
// place that says how, with no locale involved.
#pragma once

#include <string_view>

namespace handoff::http {

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

/// True when `a` and `b` are equal ignoring ASCII case.
constexpr bool ascii_iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

}  // namespace handoff::http
