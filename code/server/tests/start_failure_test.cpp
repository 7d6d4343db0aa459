// server/tests/start_failure_test: the top-level handler of every stage's start (chapter 01).
// Role: each class of error a start can throw becomes its one line and its status, and none
// escapes (exit_on_start_failure is noexcept: an escape would be std::terminate here).
#include "server/start_failure.h"


#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

using handoff::server::describe_start_failure;
using handoff::server::exit_on_start_failure;
using handoff::server::exit_status_for_errno;
using handoff::server::ExitStatus;
using handoff::server::StartFailure;

namespace {
/// `error` as exit_on_start_failure answers it: the status, and what it wrote on stderr.
std::pair<int, std::string> handled(const std::function<int()>& start) {
  char path[] = "/tmp/handoff-start-failure-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(fd, STDERR_FILENO);
  const int status = exit_on_start_failure(start);
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ::unlink(path);
  return {status, text.str()};
}
}  // namespace

TEST_CASE("start_failure: a start that returns gives its own status and prints nothing", "[start_failure][ch01]") {
  CHECK(handled([] { return 0; }) == std::pair<int, std::string>{0, ""});
}

TEST_CASE("start_failure: every class of error thrown at start is one line and its status", "[start_failure][ch01]") {
  struct Case {
    std::function<int()> start;
    int status;
    std::string line;
  };
  const std::vector<Case> cases{
      {[]() -> int {
         throw StartFailure(ExitStatus::unavailable, "cannot listen on 127.0.0.1:8080: Address already in use");
       },
       69, "handoff: cannot listen on 127.0.0.1:8080: Address already in use\n"},
      {[]() -> int { throw std::system_error(EMFILE, std::generic_category(), "eventfd"); }, 71,
       "handoff: cannot start: eventfd: Too many open files\n"},
      {[]() -> int { throw std::system_error(EACCES, std::generic_category(), "bind"); }, 77,
       "handoff: cannot start: bind: Permission denied\n"},
      {[]() -> int { throw std::invalid_argument("the pool topology needs an event loop"); }, 70,
       "handoff: cannot start: the pool topology needs an event loop\n"},
      {[]() -> int { throw 42; }, 70, "handoff: cannot start: an unknown exception\n"},
  };
  for (const auto& c : cases) {
    const auto [status, err] = handled(c.start);
    CHECK(status == c.status);
    CHECK(err == c.line);
  }
}

TEST_CASE("start_failure: a system call's errno picks permission, unavailable or an OS error",
          "[start_failure][ch01]") {
  CHECK(exit_status_for_errno(EACCES) == ExitStatus::no_permission);
  CHECK(exit_status_for_errno(EPERM) == ExitStatus::no_permission);
  CHECK(exit_status_for_errno(EADDRINUSE) == ExitStatus::unavailable);
  CHECK(exit_status_for_errno(EADDRNOTAVAIL) == ExitStatus::unavailable);
  CHECK(exit_status_for_errno(EAFNOSUPPORT) == ExitStatus::unavailable);
  CHECK(exit_status_for_errno(EMFILE) == ExitStatus::os_error);
  CHECK(describe_start_failure(std::make_exception_ptr(StartFailure(ExitStatus::config, "x"))).status() ==
        ExitStatus::config);
}
