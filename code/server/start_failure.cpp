// server/start_failure: a start that fails says one line and exits with a status (chapter 01).
#include "server/start_failure.h"

#include <cerrno>
#include <cstdio>
#include <system_error>

namespace handoff::server {

ExitStatus exit_status_for_errno(int err) noexcept {
  switch (err) {
    case EACCES:
    case EPERM:
      return ExitStatus::no_permission;
    case EADDRINUSE:
    case EADDRNOTAVAIL:
    case EAFNOSUPPORT:
      return ExitStatus::unavailable;
    default:
      return ExitStatus::os_error;
  }
}

StartFailure describe_start_failure(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const StartFailure& e) {
    return e;
  } catch (const std::system_error& e) {
    return StartFailure(exit_status_for_errno(e.code().value()), std::string("cannot start: ") + e.what());
  } catch (const std::exception& e) {
    return StartFailure(ExitStatus::internal, std::string("cannot start: ") + e.what());
  } catch (...) {
    return StartFailure(ExitStatus::internal, "cannot start: an unknown exception");
  }
}

int exit_on_start_failure(const std::function<int()>& start) noexcept {
  try {
    return start();
  } catch (...) {
    try {
      const StartFailure failure = describe_start_failure(std::current_exception());
      std::fprintf(stderr, "handoff: %s\n", failure.what());
      std::fflush(stderr);
      return static_cast<int>(failure.status());
    } catch (...) {  // no memory for the line: the status still says it
      return static_cast<int>(ExitStatus::internal);
    }
  }
}

}  // namespace handoff::server
