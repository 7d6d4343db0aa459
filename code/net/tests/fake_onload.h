// net/tests/fake_onload: what the fake Onload library records (chapter 05, tests only).
// Role: the test side's view of tests/fake_onload.cpp, a shared object that exports
// onload_set_stackname and onload_move_fd as Onload does and writes down each call.
#pragma once

#include <cstddef>

extern "C" {

/// One call the fake received.
struct FakeOnloadCall {
  int kind;       ///< 1: onload_set_stackname, 2: onload_move_fd
  int who;        ///< set_stackname's first argument
  int scope;      ///< set_stackname's second argument
  int fd;         ///< move_fd's argument
  int unread;     ///< move_fd: bytes waiting unread on the socket when it was asked (MSG_PEEK), or -1
  char name[32];  ///< set_stackname's name (truncated)
};

/// The fake's record, read through dlsym(handle, "fake_onload_record"). Calls are written
/// under a lock, so a test may read it once the calling threads are done.
struct FakeOnloadRecord {
  FakeOnloadCall calls[256];
  std::size_t count;
};
}
