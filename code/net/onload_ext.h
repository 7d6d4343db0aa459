// net/onload_ext: the two Onload extension calls a stack per worker needs, looked up at run
// time (chapter 05).
// Role: let a worker name a thread-scope Onload stack for itself and move each socket it
// adopts into that stack before the socket's first read (seed 004's fix), when the process
// runs under Onload (LD_PRELOAD=libonload.so), and do nothing at all when it does not.
#pragma once

namespace handoff::net {

/// Onload's extension calls, when Onload is loaded.
///
/// Onload's onload_set_stackname and onload_move_fd, found with dlsym(RTLD_DEFAULT, ...) in
/// whatever the process has loaded. Nothing links against Onload: without it both pointers
/// stay null, available() is false and every call returns -1 without calling anything.
///
/// Guarantee: a call reaches Onload only if both symbols were found. Cost: two dlsym
/// lookups per OnloadExt::lookup() (once per worker, at construction); afterwards an
/// indirect call per use. Onload moves a TCP socket only while it is freshly accepted (or
/// closed) with nothing read or sent yet, so move_fd must come before the first recv/send.
class OnloadExt {
 public:
  /// Look both symbols up now. Call it after any dlopen(RTLD_GLOBAL) that should count.
  static OnloadExt lookup() noexcept;

  /// Whether both extension calls were found (the process runs under Onload).
  bool available() const noexcept { return set_stackname_ != nullptr && move_fd_ != nullptr; }

  /// onload_set_stackname(ONLOAD_THIS_THREAD, ONLOAD_SCOPE_THREAD, name): sockets this
  /// thread creates or moves from now on go to a stack named `name`, private to the thread.
  /// Returns Onload's answer (0 on success), or -1 without calling anything if unavailable.
  int name_thread_stack(const char* name) const noexcept;

  /// onload_move_fd(fd): move `fd` into the calling thread's current stack. Returns 0 if it
  /// moved (Onload says -1 otherwise, and the socket stays a good socket where it was), or
  /// -1 without calling anything if unavailable.
  int move_fd(int fd) const noexcept;

 private:
  using SetStackname = int (*)(int who, int scope, const char* name);
  using MoveFd = int (*)(int fd);
  SetStackname set_stackname_ = nullptr;
  MoveFd move_fd_ = nullptr;
};

}  // namespace handoff::net
