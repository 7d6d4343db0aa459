// testkit/stage_process: run a stage binary as a child process for end-to-end tests
// (chapter 01).
// Role: start the real server on port 0, learn its port from the readiness line, signal
// it, and bound every wait so that a hung server is a failed test, never a stuck run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace handoff::testkit {

/// The stage binary an end-to-end test runs against: the environment's HANDOFF_STAGE_BINARY,
/// which CTest sets per registration, so one test binary serves every later stage (chapter 05's
/// run of chapter 01's tests is `05-stack-lock: ...`). Throws, naming the variable, when it is
/// unset or names no executable file.
std::string stage_binary();

/// A stage binary run as a child process on port 0.
class StageProcess {
 public:
  /// Start `binary` with `args` (plus `--port 0` unless args name a port) and wait up to
  /// `ready_within` for `handoff: listening on http://HOST:PORT` (an IPv6 HOST bracketed,
  /// `http://[::1]:PORT`). Throws on failure, with the child's stderr in the message.
  StageProcess(const std::string& binary, std::vector<std::string> args,
               std::chrono::milliseconds ready_within = std::chrono::seconds(10));
  ~StageProcess();  // SIGKILLs a child that is still running
  StageProcess(const StageProcess&) = delete;
  StageProcess& operator=(const StageProcess&) = delete;

  int port() const noexcept { return port_; }
  /// The host of the readiness line, without brackets (`127.0.0.1`, `::1`), for a Client.
  const std::string& host() const noexcept { return host_; }
  pid_t pid() const noexcept { return pid_; }
  void signal(int sig) const;
  /// The exit status once the child exits within `limit` (-signal if killed), else nullopt.
  std::optional<int> wait_exit(std::chrono::milliseconds limit);
  /// Everything the child wrote to stderr so far (it goes to a temporary file).
  std::string stderr_text() const;
  /// The child's resident memory in KiB (VmRSS in /proc/PID/status), or -1.
  long rss_kib() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string host_;
  std::string stderr_path_;
};

/// What a stage binary did when it was expected to end by itself (a start that fails).
struct FinishedRun {
  std::optional<int> status;  ///< exit status, -signal if killed by one; nullopt: still running at the limit
  std::string out;            ///< everything it wrote to stdout
  std::string err;            ///< everything it wrote to stderr
};

/// Run `binary` with exactly `args` (no `--port` added) and wait up to `limit` for it to
/// exit; one still running then is SIGKILLed (status nullopt). With `wrapper`, run
/// `wrapper... binary args...` instead (e.g. setpriv, to start it as another user).
FinishedRun run_to_exit(const std::string& binary, const std::vector<std::string>& args,
                        std::chrono::milliseconds limit, const std::vector<std::string>& wrapper = {});

}  // namespace handoff::testkit
