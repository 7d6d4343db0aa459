// testkit/requests: the small request builders and timers stage tests share (chapter 01).
// Role: one spelling of "a GET", "n of them pipelined", "milliseconds since" and "a stage
// with this dispatch", so the end-to-end tests of every chapter read alike.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace handoff::testkit {

/// A keep-alive GET of `target` with the Host header HTTP/1.1 requires.
inline std::string get(const std::string& target) { return "GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n"; }

/// `s` written `n` times back to back: that many requests pipelined in one send.
inline std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

/// Whole milliseconds from `since` to now on the steady clock.
inline long elapsed_ms(std::chrono::steady_clock::time_point since) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - since).count());
}

/// A stage's arguments: `--dispatch D --blocking-threads 2`, then `extra`.
inline std::vector<std::string> dispatch_args(const std::string& dispatch, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"--dispatch", dispatch, "--blocking-threads", "2"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

}  // namespace handoff::testkit
