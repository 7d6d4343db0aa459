// testkit/stage_process: run a stage binary as a child process for end-to-end tests
// (chapter 01).
#include "testkit/stage_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace handoff::testkit {

std::string stage_binary() {
  const char* path = std::getenv("HANDOFF_STAGE_BINARY");
  if (path == nullptr || *path == '\0')
    throw std::runtime_error(
        "HANDOFF_STAGE_BINARY is not set: run this test through ctest, or set it to a stage binary "
        "(build/release/bin/handoff-NN)");
  if (::access(path, X_OK) != 0)
    throw std::runtime_error(std::string("HANDOFF_STAGE_BINARY=") + path +
                             " is not an executable file: build that stage first");
  return path;
}

namespace {
/// `127.0.0.1:8080` or `[::1]:8080` (then a newline) into host and port; false if neither.
bool parse_host_port(const std::string& text, std::string& host, int& port) {
  std::size_t port_at = 0;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') return false;
    host = text.substr(1, close - 1);
    port_at = close + 2;
  } else {
    const auto colon = text.find(':');
    if (colon == std::string::npos) return false;
    host = text.substr(0, colon);
    port_at = colon + 1;
  }
  port = std::atoi(text.c_str() + port_at);
  return !host.empty() && port > 0;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A temporary file for a child's output: its descriptor and path.
int temp_output(std::string& path) {
  char tmpl[] = "/tmp/handoff-stage-output-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  path = tmpl;
  return fd;
}
}  // namespace

StageProcess::StageProcess(const std::string& binary, std::vector<std::string> args,
                           std::chrono::milliseconds ready_within) {
  bool has_port = false;
  for (const auto& a : args) has_port = has_port || a == "--port";
  if (!has_port) {
    args.emplace_back("--port");
    args.emplace_back("0");
  }
  char tmpl[] = "/tmp/handoff-stage-stderr-XXXXXX";
  const int err_fd = ::mkstemp(tmpl);
  if (err_fd < 0) throw std::runtime_error("mkstemp failed");
  stderr_path_ = tmpl;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(binary.c_str()));
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    std::_Exit(127);
  }
  ::close(out[1]);
  ::close(err_fd);
  // Read the readiness line, bounded.
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + ready_within;
  while (line.find('\n') == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{out[0], POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[256];
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);  // later stdout writes go nowhere; the server writes only this line
  const std::string prefix = "handoff: listening on http://";
  if (line.rfind(prefix, 0) != 0 || !parse_host_port(line.substr(prefix.size()), host_, port_)) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    throw std::runtime_error("stage did not become ready: '" + line + "' stderr: " + stderr_text());
  }
}

StageProcess::~StageProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (!stderr_path_.empty()) ::unlink(stderr_path_.c_str());
}

void StageProcess::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> StageProcess::wait_exit(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (pid_ > 0) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return std::nullopt;
}

std::string StageProcess::stderr_text() const { return read_all(stderr_path_); }

long StageProcess::rss_kib() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace handoff::testkit

namespace handoff::testkit {

FinishedRun run_to_exit(const std::string& binary, const std::vector<std::string>& args,
                        std::chrono::milliseconds limit, const std::vector<std::string>& wrapper) {
  std::string out_path, err_path;
  const int out_fd = temp_output(out_path);
  const int err_fd = temp_output(err_path);
  std::vector<std::string> words = wrapper;
  words.push_back(binary);
  words.insert(words.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::close_range(3, ~0U, 0);  // the child starts with stdin, stdout and stderr only
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    std::_Exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  FinishedRun run;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  run.out = read_all(out_path);
  run.err = read_all(err_path);
  ::unlink(out_path.c_str());
  ::unlink(err_path.c_str());
  return run;
}

}  // namespace handoff::testkit
