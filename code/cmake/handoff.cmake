# The project's CMake vocabulary (chapter 01). A chapter says add_stage(), an exercise says
# add_exercise(), a component test is one add_component_test() line. Every test gets a
# label from {unit, stage, model, solution, exercise, bench-smoke} (attacks on a stage are
# `adversarial` as well), a chapter tag, and a TIMEOUT, so that a hang is a failure with
# a name rather than a stuck pipeline.

set(HANDOFF_TEST_TIMEOUT 60 CACHE STRING "Default CTest TIMEOUT, seconds, for every test")

# Warnings and sanitizers for every target of ours (never for llhttp's generated C).
function(handoff_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(HANDOFF_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(HANDOFF_SANITIZE)
  string(REPLACE ";" "," _handoff_san "${HANDOFF_SANITIZE}")
  add_compile_options(-fsanitize=${_handoff_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_handoff_san})
  # Tests that starve the process of descriptors read this: a sanitizer's runtime needs
  # descriptors of its own (UBSan's vptr check opens /proc/self/maps) and misreports there.
  add_compile_definitions(HANDOFF_SANITIZED=1)
endif()

# A test's own code (the library it tests stays at -O2) is compiled at -O1 in the release
# build: Catch2's assertions are large, and -O2 on them doubles the file's compile time for
# nothing a test measures.
function(handoff_test_defaults target)
  handoff_target_defaults(${target})
  target_compile_options(${target} PRIVATE $<$<CONFIG:RelWithDebInfo>:-O1>)
endfunction()

# Every Catch2 binary lists its TEST_CASE names once, right after it links
# (catch_names.cmake); each registration then adds one CTest test per case when CTest starts
# (catch_register.cmake.in), with its own prefix, labels, the default TIMEOUT and environment.
# One binary can so be registered several times: a chapter's end-to-end tests run against
# every later stage without being compiled again.
function(_handoff_list_names target)
  set(names ${PROJECT_BINARY_DIR}/test-names/${target}.cmake)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:${target}> -DOUT=${names}
            -P ${PROJECT_SOURCE_DIR}/code/cmake/catch_names.cmake
    BYPRODUCTS ${names} VERBATIM)
endfunction()

# _handoff_register(TARGET <t> PREFIX <p> LABELS <l>... [ENVIRONMENT <VAR=value>...])
function(_handoff_register)
  cmake_parse_arguments(ARG "" "TARGET;PREFIX" "LABELS;ENVIRONMENT" ${ARGN})
  set(names ${PROJECT_BINARY_DIR}/test-names/${ARG_TARGET}.cmake)
  set(labels "${ARG_LABELS}")
  set(env "${ARG_ENVIRONMENT}")
  string(MAKE_C_IDENTIFIER "${ARG_PREFIX}" _id)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/register-${ARG_TARGET}-${_id}.cmake)
  configure_file(${PROJECT_SOURCE_DIR}/code/cmake/catch_register.cmake.in ${script}.in @ONLY)
  file(GENERATE OUTPUT ${script} INPUT ${script}.in)
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()

# add_component_test(<name> <source>... [LABELS <label>...] [CHAPTER <NN>])
# One Catch2 binary over the library; each TEST_CASE becomes one CTest test.
function(add_component_test name)
  cmake_parse_arguments(ARG "" "CHAPTER" "LABELS" ${ARGN})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE handoff handoff_catch_main)
  handoff_test_defaults(${name})
  set(_labels ${ARG_LABELS})
  if(ARG_CHAPTER)
    list(APPEND _labels ch${ARG_CHAPTER})
  endif()
  _handoff_list_names(${name})
  _handoff_register(TARGET ${name} PREFIX "${name}: " LABELS ${_labels})
endfunction()

# add_stage(<NN> <slug>) inside chapters/NN-slug: builds the stage binary `handoff-NN` from
# stage.cpp; compiles this chapter's end-to-end tests (tests/*.cpp) once into handoff-NN-tests
# and its attacks (tests/adversarial/*.cpp, labelled `adversarial` besides `stage`) into
# handoff-NN-adversarial; and runs every chapter's test binaries so far against this stage.
# So chapter 01's tests run against stages 01, 02, ... each registration named after the stage
# it ran against ("05-stack-lock: serve: ...", labels `stage;ch05`), the binary chosen at run
# time through HANDOFF_STAGE_BINARY (testkit/stage_process.h): every stage passes every earlier
# chapter's tests forever, and each test source is compiled once. A test binary a chapter
# builds by hand (its own defines or dependencies) joins them through add_stage_test_binary()
# before the chapter's add_stage(). chapters/ adds the chapters in order.
function(add_stage nn slug)
  set(bin handoff-${nn})
  add_executable(${bin} stage.cpp)
  target_link_libraries(${bin} PRIVATE handoff)
  handoff_target_defaults(${bin})
  set_target_properties(${bin} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  foreach(kind tests adversarial)
    set(_glob tests/*.cpp)
    set(_extra "")
    if(kind STREQUAL "adversarial")
      set(_glob tests/adversarial/*.cpp)
      set(_extra adversarial)
    endif()
    file(GLOB _found CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${_glob})
    if(_found)
      add_executable(${bin}-${kind} ${_found})
      add_stage_test_binary(${bin}-${kind} ${_extra})
    endif()
  endforeach()
  get_property(_binaries GLOBAL PROPERTY HANDOFF_STAGE_TESTS)
  foreach(t ${_binaries})
    get_property(_extra GLOBAL PROPERTY HANDOFF_STAGE_TESTS_LABEL_${t})
    _handoff_register(TARGET ${t} PREFIX "${nn}-${slug}: " LABELS stage ${_extra} ch${nn}
                      ENVIRONMENT HANDOFF_STAGE_BINARY=$<TARGET_FILE:${bin}>)
  endforeach()
endfunction()

# add_stage_test_binary(<target> [<label>...]): a Catch2 executable of end-to-end tests that
# this chapter's add_stage() and every later one run against their stage (with `stage`, the
# stage's chNN and these labels).
function(add_stage_test_binary target)
  target_link_libraries(${target} PRIVATE handoff handoff_testkit handoff_catch_main)
  handoff_test_defaults(${target})
  _handoff_list_names(${target})
  set_property(GLOBAL APPEND PROPERTY HANDOFF_STAGE_TESTS ${target})
  set_property(GLOBAL PROPERTY HANDOFF_STAGE_TESTS_LABEL_${target} "${ARGN}")
endfunction()

# add_exercise(<NN> <slug> STARTER <src>... SOLUTION <src>... TESTS <src>...
#              [TSAN] [STAGE <NN>] [MUTANTS <NAME>...] [RACE_MUTANTS <NAME>...])
# The same tests (compiled once) are linked twice: with the solution (label `solution`, each
# TEST_CASE a CTest test, must pass) and with the starter (label `exercise`, one CTest test over the
# whole binary, WILL_FAIL). The starter's run is excluded from the default run; CI runs it
# (`ctest --preset exercises`) to prove the starter still fails, so an exercise can neither
# be solved by accident nor go vacuous. A learner asks `exercises/status.py` (the target
# `exercise-status`), which says plainly which starters are still unsolved.
#   TSAN     builds starter, solution and mutants with ThreadSanitizer even in the release
#            build (a race the tests provoke is then a failure on any processor); skipped
#            under ASan, which cannot be combined with it. (GCC's -Wtsan, which says that
#            TSan does not model a standalone fence, is off: a fence an exercise keeps orders
#            a store before a load, which no race report here depends on.)
#   STAGE    the tests run stage NN's binary: the HANDOFF_STAGE_BINARY environment names it,
#            and building any of the exercise's binaries builds that stage.
#   MUTANTS  negative controls: the solution built again with -D<NAME>, which weakens it
#            the way a learner might; each must fail the tests (label `solution`), or the
#            tests do not grade what the exercise teaches: any failure (WILL_FAIL; with TSAN
#            a race report fails the run too, halt_on_error).
#   RACE_MUTANTS (with TSAN; issue 24) negative controls of an ordering: the solution with
#            one acquire or release made relaxed, which x86 runs correctly, so failing means
#            ThreadSanitizer reported a data race, not any failure (a crash would pass
#            WILL_FAIL too). Built only where TSan is on (not under ASan).
# An exercise about an ordering is graded under the C++ memory model by
# add_exercise_model() (exercises/model/exercise_model.cmake), beside its add_exercise().
function(add_exercise nn slug)
  cmake_parse_arguments(ARG "TSAN" "STAGE" "STARTER;SOLUTION;TESTS;MUTANTS;RACE_MUTANTS" ${ARGN})
  if(ARG_RACE_MUTANTS AND NOT ARG_TSAN)
    message(FATAL_ERROR "add_exercise(${nn} ${slug}): RACE_MUTANTS needs TSAN")
  endif()
  set(base ex-${nn}-${slug})
  set(_tsan_flags)
  set(_tsan_on FALSE)
  if(ARG_TSAN)
    if(NOT HANDOFF_SANITIZE)
      set(_tsan_flags -fsanitize=thread -fno-omit-frame-pointer $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
      set(_tsan_on TRUE)
    elseif(HANDOFF_SANITIZE STREQUAL "thread")
      set(_tsan_on TRUE)  # the whole build already is
    endif()
  endif()
  set(_env)
  if(ARG_STAGE)
    set(_env HANDOFF_STAGE_BINARY=$<TARGET_FILE:handoff-${ARG_STAGE}>)
  endif()
  # What the starter and the solution share (the given files and the tests) is compiled once,
  # into an object library; each variant compiles only its own file (a mutant, the solution's
  # with its -D<NAME>).
  set(_shared ${ARG_TESTS})
  set(_own_starter)
  foreach(src ${ARG_STARTER})
    if(src IN_LIST ARG_SOLUTION)
      list(APPEND _shared ${src})
    else()
      list(APPEND _own_starter ${src})
    endif()
  endforeach()
  set(_own_solution)
  foreach(src ${ARG_SOLUTION})
    if(NOT src IN_LIST ARG_STARTER)
      list(APPEND _own_solution ${src})
    endif()
  endforeach()
  add_library(${base}-shared OBJECT ${_shared})
  set(_variants starter solution ${ARG_MUTANTS})
  if(_tsan_on)
    list(APPEND _variants ${ARG_RACE_MUTANTS})
  endif()
  foreach(target ${base}-shared ${_variants})
    if(target STREQUAL "starter" OR target STREQUAL "solution")
      set(_srcs ${_own_${target}})
      set(target ${base}-${target})
    elseif(NOT target STREQUAL "${base}-shared")
      string(TOLOWER ${target} _lower)
      string(REPLACE "_" "-" _lower ${_lower})
      set(_srcs ${_own_solution})
      set(target ${base}-mutant-${_lower})
    endif()
    if(NOT target STREQUAL "${base}-shared")
      add_executable(${target} ${_srcs})
      target_link_libraries(${target} PRIVATE ${base}-shared)
      if(ARG_STAGE)
        add_dependencies(${target} handoff-${ARG_STAGE})  # the stage the tests run, built with them
      endif()
    endif()
    target_link_libraries(${target} PRIVATE handoff handoff_testkit handoff_catch_main)
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    handoff_test_defaults(${target})
    if(_tsan_flags)
      target_compile_options(${target} PRIVATE ${_tsan_flags})
      target_link_options(${target} PRIVATE -fsanitize=thread)
    endif()
  endforeach()
  foreach(m ${ARG_MUTANTS} ${ARG_RACE_MUTANTS})
    if(NOT m IN_LIST _variants)
      continue()
    endif()
    string(TOLOWER ${m} _lower)
    string(REPLACE "_" "-" _lower ${_lower})
    set(target ${base}-mutant-${_lower})
    target_compile_definitions(${target} PRIVATE ${m})
    set(_name "${base} (mutant ${m}): the tests catch it")
    add_test(NAME "${_name}" COMMAND ${target})
    set_tests_properties("${_name}" PROPERTIES LABELS "solution;ch${nn}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
    if(m IN_LIST ARG_RACE_MUTANTS)
      # Caught means a race reported, not any failure (a crash would pass WILL_FAIL too).
      set_tests_properties("${_name}" PROPERTIES ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;${_env}"
        PASS_REGULAR_EXPRESSION "WARNING: ThreadSanitizer: data race")
    elseif(_tsan_on)
      set_tests_properties("${_name}" PROPERTIES WILL_FAIL TRUE ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1;${_env}")
    else()
      set_tests_properties("${_name}" PROPERTIES WILL_FAIL TRUE ENVIRONMENT "${_env}")
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY HANDOFF_EXERCISE_STARTERS ${base}-starter)
  _handoff_list_names(${base}-solution)
  _handoff_register(TARGET ${base}-solution PREFIX "${base} (solution): " LABELS solution ch${nn}
                    ENVIRONMENT ${_env})
  add_test(NAME "${base} (starter): still fails until solved"
           COMMAND ${base}-starter)
  set_tests_properties("${base} (starter): still fails until solved" PROPERTIES
    LABELS "exercise;ch${nn}" WILL_FAIL TRUE TIMEOUT ${HANDOFF_TEST_TIMEOUT} ENVIRONMENT "${_env}")
endfunction()
