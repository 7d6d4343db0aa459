// net/onload_ext: the two Onload extension calls a stack per worker needs (chapter 05).
#include "net/onload_ext.h"

#include <dlfcn.h>

namespace handoff::net {

namespace {
// The values of Onload's enums, from src/include/onload/extensions.h in Xilinx-CNS/onload
// (enum onload_stackname_who: ONLOAD_THIS_THREAD is its first member, 0; enum
// onload_stackname_scope: ONLOAD_SCOPE_NOCHANGE is 0, ONLOAD_SCOPE_THREAD 1). Only the two
// used here are defined; the header is not needed to build.
constexpr int kOnloadThisThread = 0;
constexpr int kOnloadScopeThread = 1;
}  // namespace

OnloadExt OnloadExt::lookup() noexcept {
  OnloadExt ext;
  // RTLD_DEFAULT: the global scope, i.e. the executable, its libraries, an LD_PRELOADed
  // libonload.so, and anything dlopen'ed with RTLD_GLOBAL. Found only together: one without
  // the other is not an Onload we know.
  void* set = ::dlsym(RTLD_DEFAULT, "onload_set_stackname");
  void* move = ::dlsym(RTLD_DEFAULT, "onload_move_fd");
  if (set != nullptr && move != nullptr) {
    ext.set_stackname_ = reinterpret_cast<SetStackname>(set);
    ext.move_fd_ = reinterpret_cast<MoveFd>(move);
  }
  return ext;
}

int OnloadExt::name_thread_stack(const char* name) const noexcept {
  if (!available()) return -1;
  return set_stackname_(kOnloadThisThread, kOnloadScopeThread, name);
}

int OnloadExt::move_fd(int fd) const noexcept {
  if (!available()) return -1;
  return move_fd_(fd);
}

}  // namespace handoff::net
