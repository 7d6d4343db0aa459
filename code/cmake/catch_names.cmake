# catch_names.cmake: list a Catch2 binary's TEST_CASE names into a CMake file (chapter 01;
# build-once registration since chapter 05).
# Role: runs after each test binary links (cmake -DBINARY=... -DOUT=... -P catch_names.cmake);
# OUT holds `set(_handoff_names [==[name]==] ...)`, which every registration of the binary
# (code/cmake/handoff.cmake, _handoff_register) reads when CTest starts. One listing per
# binary, however many stages run it.
execute_process(COMMAND ${BINARY} --list-test-names-only
                OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
# Catch2 v2 exits with the number of tests it listed; a negative or non-numeric result is a crash.
if(NOT _rc MATCHES "^[0-9]+$" OR _rc EQUAL 0)
  message(FATAL_ERROR "${BINARY} --list-test-names-only: ${_rc} (no tests, or it did not run)\n${_out}")
endif()
if(_out MATCHES ";")
  message(FATAL_ERROR "${BINARY}: a test name holds ';', which a CMake list cannot carry; rename it")
endif()
string(REPLACE "\n" ";" _lines "${_out}")
set(_script "set(_handoff_names\n")
foreach(_line IN LISTS _lines)
  if(NOT _line STREQUAL "")
    string(APPEND _script "  [==[${_line}]==]\n")
  endif()
endforeach()
string(APPEND _script ")\n")
file(WRITE ${OUT} "${_script}")
