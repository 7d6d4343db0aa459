// http/date_cache: the Date header, formatted once a second (chapter 01).
// Role: keep strftime and gmtime off the per-request path; each loop owns one.
#pragma once

#include <ctime>
#include <string_view>

namespace handoff::http {

/// Holds the IMF-fixdate for the current second ("Sun, 06 Nov 1994 08:49:37 GMT").
/// refresh() is cheap when the second has not changed. Not thread-safe: one per loop.
class DateCache {
 public:
  DateCache() { refresh(); }
  /// Re-format if the wall-clock second moved on since the last call.
  void refresh() noexcept;
  std::string_view get() const noexcept { return {buf_, len_}; }

 private:
  std::time_t second_ = -1;
  char buf_[40] = {};
  std::size_t len_ = 0;
};

}  // namespace handoff::http
