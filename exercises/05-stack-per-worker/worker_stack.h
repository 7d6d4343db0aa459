// exercises/05-stack-per-worker: chapter 05's stack per worker cut down to a worker's two
// Onload calls; the worker's start and its adoption of a socket, to write.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace exercise {

/// The two Onload extension calls a stack per worker needs, as net::OnloadExt
/// (code/net/onload_ext.h) offers them; a fake in the tests.
class OnloadCalls {
 public:
  virtual ~OnloadCalls() = default;
  /// Whether the process runs under Onload (both symbols found).
  virtual bool available() const = 0;
  /// onload_set_stackname(ONLOAD_THIS_THREAD, ONLOAD_SCOPE_THREAD, name): sockets this
  /// thread creates or moves from now on go to a stack named `name`, private to the thread.
  /// 0 on success.
  virtual int name_thread_stack(const char* name) = 0;
  /// onload_move_fd(fd): move `fd` into the calling thread's current stack. 0 if it moved;
  /// -1 if Onload refused (it refuses a socket that has been read from or written to), and
  /// the socket stays a good socket in the stack it was in.
  virtual int move_fd(int fd) = 0;
};

struct AdoptCounts {
  std::uint64_t adopted = 0;        ///< sockets adopt() was given (every one is served)
  std::uint64_t stack_moves = 0;    ///< sockets Onload moved into this worker's own stack
  std::uint64_t moves_refused = 0;  ///< moves Onload refused (the socket stayed where it was)
};

/// One worker's side of seed 004's fix: a stack of its own, and every socket it adopts
/// moved into that stack before the socket's first read. All calls on the worker's thread.
class WorkerStack {
 public:
  /// `serve` stands for the rest of adoption: make the connection and read from it (the
  /// socket's first I/O). Given.
  WorkerStack(int index, OnloadCalls& onload, std::function<void(int fd)> serve)
      : index_(index), onload_(onload), serve_(std::move(serve)) {}

  bool own_stack() const { return own_stack_; }
  const AdoptCounts& counts() const { return counts_; }
  /// The name of this worker's stack: "w" and its index, as code/server/worker.cpp names it.
  std::string stack_name() const { return "w" + std::to_string(index_); }

  // ---- the exercise (worker_stack.cpp)

  /// On the worker's thread, before it adopts any socket: if Onload is available, name a
  /// stack for this thread (stack_name()); own_stack() is true only if Onload said yes.
  /// Without Onload, or if it refuses the name, nothing more is called: the sockets stay in
  /// the listener's stack, as before chapter 05.
  void start();
  /// Adopt an accepted socket: with a stack of its own, move the socket into it before its
  /// first read (serve), counting the move or the refusal; then serve it, moved or not.
  /// Count every socket adopted.
  void adopt(int fd);

 private:
  const int index_;
  OnloadCalls& onload_;
  std::function<void(int fd)> serve_;
  bool own_stack_ = false;
  AdoptCounts counts_;
};

}  // namespace exercise
