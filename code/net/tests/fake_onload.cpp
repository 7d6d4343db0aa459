// net/tests/fake_onload: a fake Onload that exports the two extension calls the shim looks
// up and records each call, so a test can check the arguments (chapter 05, tests only).
// Not Onload: it moves nothing and names nothing; both calls answer 0 (success), except
// that with HANDOFF_FAKE_ONLOAD_REFUSE_STACKNAME=1 in the environment onload_set_stackname
// answers -1 with errno EBUSY (a stage's failed start, chapters/05-stack-lock/tests/onload).
#include "fake_onload.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {
std::mutex mu;
}  // namespace

extern "C" {

FakeOnloadRecord fake_onload_record{};

namespace {
void record(const FakeOnloadCall& call) {
  std::lock_guard lock(mu);
  if (fake_onload_record.count < sizeof fake_onload_record.calls / sizeof fake_onload_record.calls[0]) {
    fake_onload_record.calls[fake_onload_record.count++] = call;
  }
}
}  // namespace

__attribute__((visibility("default"))) int onload_set_stackname(int who, int scope, const char* name) {
  FakeOnloadCall call{};
  call.kind = 1;
  call.who = who;
  call.scope = scope;
  call.fd = -1;
  if (name != nullptr) std::strncpy(call.name, name, sizeof call.name - 1);
  record(call);
  const char* refuse = std::getenv("HANDOFF_FAKE_ONLOAD_REFUSE_STACKNAME");
  if (refuse != nullptr && std::strcmp(refuse, "1") == 0) {
    errno = EBUSY;
    return -1;
  }
  return 0;
}

__attribute__((visibility("default"))) int onload_move_fd(int fd) {
  FakeOnloadCall call{};
  call.kind = 2;
  call.fd = fd;
  // What a socket moved before its first read still holds: the bytes the client sent.
  char buf[256];
  const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_PEEK | MSG_DONTWAIT);
  call.unread = n >= 0 ? static_cast<int>(n) : -1;
  record(call);
  return 0;
}

}  // extern "C"
