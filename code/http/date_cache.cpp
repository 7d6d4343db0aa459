// http/date_cache: the Date header, formatted once a second (chapter 01).
#include "http/date_cache.h"

namespace handoff::http {

void DateCache::refresh() noexcept {
  const std::time_t now = std::time(nullptr);
  if (now == second_) return;
  second_ = now;
  std::tm tm{};
  gmtime_r(&now, &tm);
  len_ = std::strftime(buf_, sizeof buf_, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

}  // namespace handoff::http
