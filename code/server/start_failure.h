// server/start_failure: a start that fails says one line and exits with a status (chapter 01).
// Changed in chapter 06: a settings file that cannot be used (exit 78).
// Role: the one home of every stage's start-up errors: what each failure class exits with
// (README.md lists them), the exception that carries a failure's line to the top, and the
// top-level handler every stage's main runs its start inside, so that no error after the
// flags are parsed reaches std::terminate.
#pragma once

#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

namespace handoff::server {

/// A stage's exit statuses after its flags are parsed, from sysexits(3) so a service
/// manager or a script can tell the classes apart. (A refused setting keeps
/// CLI11's statuses, 100-115: 105 for a value out of range, 109 for an unknown flag, from
/// any source; a settings file that cannot be used gives `config`: config/command_line.)
enum class ExitStatus : int {
  ok = 0,              ///< served, then drained on SIGINT/SIGTERM
  usage = 64,          ///< EX_USAGE: a value the flags took that the start cannot use (`--host 300.1.1.1`)
  no_host = 68,        ///< EX_NOHOST: a host name the resolver does not know
  unavailable = 69,    ///< EX_UNAVAILABLE: the address is taken or not this machine's (EADDRINUSE,
                       ///< EADDRNOTAVAIL, EAFNOSUPPORT: no IPv6)
  internal = 70,       ///< EX_SOFTWARE: anything else thrown at start (a bug: please report the line)
  os_error = 71,       ///< EX_OSERR: another system call failed at start (socket, listen, eventfd, a
                       ///< thread, an Onload call)
  no_permission = 77,  ///< EX_NOPERM: a port this user may not bind (EACCES, EPERM)
  config = 78,         ///< EX_CONFIG: a settings file that cannot be used (chapter 06; given by
                       ///< config/command_line's parse, which sits below server/)
};

/// A failed start: the line to print (without the `handoff: ` prefix), and its status.
class StartFailure : public std::runtime_error {
 public:
  StartFailure(ExitStatus status, const std::string& line) : std::runtime_error(line), status_(status) {}
  ExitStatus status() const noexcept { return status_; }

 private:
  ExitStatus status_;
};

/// The status of a system call's failure at start: EACCES/EPERM → no_permission,
/// EADDRINUSE/EADDRNOTAVAIL/EAFNOSUPPORT → unavailable, the rest → os_error.
ExitStatus exit_status_for_errno(int err) noexcept;

/// `error` as one start-up line and its status: a StartFailure as it is; a
/// std::system_error as "cannot start: WHAT" (its errno's status); anything else as
/// internal. (A setting refused, from a flag, a file or the environment, never gets here:
/// config/command_line refuses it while parsing.)
StartFailure describe_start_failure(const std::exception_ptr& error);

/// The top-level handler of every stage: run `start` (everything after the flags are
/// parsed, until the server has drained) and return its status; if it throws, print
/// `handoff: LINE` on stderr, once, and return the failure's status instead.
int exit_on_start_failure(const std::function<int()>& start) noexcept;

}  // namespace handoff::server
