// net/tests/onload_absent_test: without Onload in the process, the shim finds nothing and
// calls nothing (chapter 05). Its own binary: the fake's test loads a fake Onload, which no
// later lookup in that process could un-see.
#include <dlfcn.h>

#include <catch2/catch.hpp>

#include "net/onload_ext.h"

using handoff::net::OnloadExt;

TEST_CASE("onload: without Onload loaded the shim reports unavailable and calls nothing", "[onload][ch05]") {
  // Nothing in this process exports the extension calls (the premise of the test).
  REQUIRE(::dlsym(RTLD_DEFAULT, "onload_set_stackname") == nullptr);
  REQUIRE(::dlsym(RTLD_DEFAULT, "onload_move_fd") == nullptr);
  const OnloadExt ext = OnloadExt::lookup();
  CHECK_FALSE(ext.available());
  // Both calls answer "not done" without a call through a null pointer (which would crash).
  CHECK(ext.name_thread_stack("w0") == -1);
  CHECK(ext.move_fd(0) == -1);
}
