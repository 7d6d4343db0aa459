// net/tests/onload_fake_test: with a fake Onload loaded (RTLD_GLOBAL) before the shim looks,
// the shim finds both calls and passes Onload's arguments (chapter 05): a thread-scope stack
// name for this thread, and the descriptor to move.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <string>

#include "fake_onload.h"
#include "net/onload_ext.h"

using handoff::net::OnloadExt;

TEST_CASE("onload: with a fake Onload loaded the shim calls it with Onload's arguments", "[onload][ch05]") {
  // Looked up before the fake is loaded: nothing found, whatever happens later.
  const OnloadExt before = OnloadExt::lookup();
  CHECK_FALSE(before.available());

  void* lib = ::dlopen(HANDOFF_FAKE_ONLOAD, RTLD_NOW | RTLD_GLOBAL);
  INFO((lib == nullptr ? ::dlerror() : "loaded"));
  REQUIRE(lib != nullptr);
  auto* record = static_cast<FakeOnloadRecord*>(::dlsym(lib, "fake_onload_record"));
  REQUIRE(record != nullptr);

  const OnloadExt ext = OnloadExt::lookup();
  REQUIRE(ext.available());
  CHECK(ext.name_thread_stack("w1") == 0);
  CHECK(ext.move_fd(42) == 0);
  CHECK(before.move_fd(43) == -1);  // the earlier lookup still calls nothing

  REQUIRE(record->count == 2);
  CHECK(record->calls[0].kind == 1);
  CHECK(record->calls[0].who == 0);    // ONLOAD_THIS_THREAD
  CHECK(record->calls[0].scope == 1);  // ONLOAD_SCOPE_THREAD
  CHECK(std::string(record->calls[0].name) == "w1");
  CHECK(record->calls[1].kind == 2);
  CHECK(record->calls[1].fd == 42);
}
