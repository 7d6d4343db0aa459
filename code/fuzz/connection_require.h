// fuzz/connection_require: how the connection target reports a broken invariant (chapter 01).
// Role: one line on stderr naming the invariant, then abort(), which libFuzzer records as
// a crash with the input that did it.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace handoff::fuzz {

[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "connection fuzz: %s\n", what);
  std::abort();
}

inline void require(bool ok, const char* what) {
  if (!ok) fail(what);
}

}  // namespace handoff::fuzz
