// testkit/forked_child: run part of a test in a forked child and report how the child ended
// and what it wrote to stderr (chapter 04).
// Role: a test that must watch the program end itself (a debug build's contract check,
// which aborts) runs the offending code in a child, so that the test's own process lives to
// assert the signal and the message. The child is bounded twice: an alarm ends it from
// inside, and the parent kills it if its stderr has not closed by the limit.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>

namespace handoff::testkit {

/// How a forked child ended.
struct ChildEnd {
  std::optional<int> status;  ///< its exit status, -signal if a signal ended it; nullopt: killed at the limit
  std::string err;            ///< everything it wrote to stderr
};

/// Run `body` in a forked child, which exits 0 when `body` returns (never back into the
/// test runner: so no Catch2 assertion in `body`; an exception ends it with status 2). The
/// caller must be single-threaded (the child starts its own threads, and ThreadSanitizer
/// refuses a child's threads after a multi-threaded fork): so no Watchdog around this call;
/// `limit` bounds it instead. Throws std::runtime_error if the child cannot be started.
inline ChildEnd run_in_forked_child(const std::function<void()>& body, std::chrono::seconds limit) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("run_in_forked_child: pipe2 failed");
  std::fflush(nullptr);  // nothing buffered before the fork is written twice
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("run_in_forked_child: fork failed");
  }
  if (pid == 0) {
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    // The child ends as the program would, not through the test runner's handlers (Catch2
    // catches SIGABRT and the like, and reports from inside the handler).
    for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTERM, SIGALRM}) ::signal(sig, SIG_DFL);
    ::alarm(static_cast<unsigned>(limit.count()));  // a hung child ends by SIGALRM
    try {
      body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "run_in_forked_child: the child threw: %s\n", e.what());
      std::_Exit(2);
    } catch (...) {
      std::fprintf(stderr, "run_in_forked_child: the child threw\n");
      std::_Exit(2);
    }
    std::fflush(stderr);
    std::_Exit(0);
  }
  ::close(fds[1]);
  ChildEnd end;
  const auto deadline = std::chrono::steady_clock::now() + limit + std::chrono::seconds(5);
  bool killed = false;
  for (;;) {  // read until the child's stderr closes (it ended), or kill it at the deadline
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;  // the deadline check above decides
    char buf[4096];
    const ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    end.err.append(buf, static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (killed) return end;
  if (WIFEXITED(st)) end.status = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) end.status = -WTERMSIG(st);
  return end;
}

}  // namespace handoff::testkit
