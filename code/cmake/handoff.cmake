# The project's CMake vocabulary. A chapter says add_stage(), an exercise says
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

# Register every TEST_CASE of a Catch2 binary as a CTest test with `labels` and the default
# TIMEOUT. catch_discover_tests(PROPERTIES ...) flattens a list of labels and drops what
# follows, so the properties are set by a small script CTest runs after the discovery.
function(_handoff_discover target prefix labels)
  catch_discover_tests(${target} TEST_PREFIX "${prefix}" TEST_LIST ${target}_TESTS)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_properties.cmake)
  file(WRITE ${script}
    "set_tests_properties(\${${target}_TESTS} PROPERTIES LABELS \"${labels}\" TIMEOUT ${HANDOFF_TEST_TIMEOUT})\n")
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
  handoff_target_defaults(${name})
  set(_labels ${ARG_LABELS})
  if(ARG_CHAPTER)
    list(APPEND _labels ch${ARG_CHAPTER})
  endif()
  _handoff_discover(${name} "${name}: " "${_labels}")
endfunction()

# add_stage(<NN> <slug> [EARLIER <chapter-dir>...]) inside chapters/NN-slug: builds the
# stage binary `handoff-NN` from stage.cpp and its end-to-end tests from tests/*.cpp, and
# the attacks in tests/adversarial/*.cpp into a second test binary labelled `adversarial`
# besides `stage`. The tests find the binary through the HANDOFF_STAGE_BINARY definition.
# EARLIER names earlier chapters whose end-to-end tests must keep passing against this
# stage: their tests are compiled again against this binary (tests every stage forever).
function(_handoff_stage_tests nn slug bin suffix labels)
  if(ARGN)
    add_executable(${bin}-${suffix} ${ARGN})
    target_link_libraries(${bin}-${suffix} PRIVATE handoff handoff_testkit handoff_catch_main)
    target_compile_definitions(${bin}-${suffix} PRIVATE
      HANDOFF_STAGE_BINARY="$<TARGET_FILE:${bin}>")
    add_dependencies(${bin}-${suffix} ${bin})
    handoff_target_defaults(${bin}-${suffix})
    _handoff_discover(${bin}-${suffix} "${nn}-${slug}: " "${labels}")
  endif()
endfunction()

function(add_stage nn slug)
  cmake_parse_arguments(ARG "" "" "EARLIER" ${ARGN})
  set(bin handoff-${nn})
  add_executable(${bin} stage.cpp)
  target_link_libraries(${bin} PRIVATE handoff)
  handoff_target_defaults(${bin})
  set_target_properties(${bin} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  set(_tests "")
  set(_attacks "")
  foreach(dir ${CMAKE_CURRENT_SOURCE_DIR} ${ARG_EARLIER})
    if(NOT IS_ABSOLUTE ${dir})
      set(dir ${PROJECT_SOURCE_DIR}/chapters/${dir})
    endif()
    file(GLOB _found CONFIGURE_DEPENDS ${dir}/tests/*.cpp)
    list(APPEND _tests ${_found})
    file(GLOB _found CONFIGURE_DEPENDS ${dir}/tests/adversarial/*.cpp)
    list(APPEND _attacks ${_found})
  endforeach()
  _handoff_stage_tests(${nn} ${slug} ${bin} tests "stage;ch${nn}" ${_tests})
  _handoff_stage_tests(${nn} ${slug} ${bin} adversarial "stage;adversarial;ch${nn}" ${_attacks})
endfunction()

# add_exercise(<NN> <slug> STARTER <src>... SOLUTION <src>... TESTS <src>...
#              [TSAN] [STAGE <NN>] [MUTANTS <NAME>...]
#              [MODEL <file.pml> [MODEL_MUTANTS <NAME>...]])
# The same tests are built twice: against the solution (label `solution`, each TEST_CASE a
# CTest test, must pass) and against the starter (label `exercise`, one CTest test over the
# whole binary, WILL_FAIL). The starter's run is excluded from the default run; CI runs it
# (`ctest --preset exercises`) to prove the starter still fails, so an exercise can neither
# be solved by accident nor go vacuous. A learner asks `exercises/status.py` (the target
# `exercise-status`), which says plainly which starters are still unsolved.
#   TSAN     builds starter, solution and mutants with ThreadSanitizer even in the release
#            build (a race the tests provoke is then a failure on any processor); skipped
#            under ASan, which cannot be combined with it.
#   STAGE    the tests run stage NN's binary: HANDOFF_STAGE_BINARY names it.
#   MUTANTS  negative controls: the solution built again with -D<NAME>, which weakens it
#            the way a learner might; each must fail the tests (label `solution`), or the
#            tests do not grade what the exercise teaches. With TSAN, failing means a
#            data race reported; without, any failure (WILL_FAIL).
#   MODEL    a spin model (label `model`) whose `#include "park.pml"`-style includes are
#            found in starter/ or solution/: the solution's must verify, the starter's must
#            still fail (`exercise`, WILL_FAIL), and each MODEL_MUTANTS define must yield a
#            counterexample (`solution;model`).
function(add_exercise nn slug)
  cmake_parse_arguments(ARG "TSAN" "STAGE;MODEL" "STARTER;SOLUTION;TESTS;MUTANTS;MODEL_MUTANTS" ${ARGN})
  set(base ex-${nn}-${slug})
  set(_tsan_flags)
  set(_tsan_on FALSE)
  if(ARG_TSAN)
    if(NOT HANDOFF_SANITIZE)
      set(_tsan_flags -fsanitize=thread -fno-omit-frame-pointer)
      set(_tsan_on TRUE)
    elseif(HANDOFF_SANITIZE STREQUAL "thread")
      set(_tsan_on TRUE)  # the whole build already is
    endif()
  endif()
  set(_variants starter solution)
  if(_tsan_on OR NOT ARG_TSAN)
    foreach(m ${ARG_MUTANTS})
      list(APPEND _variants ${m})
    endforeach()
  endif()
  foreach(kind ${_variants})
    if(kind STREQUAL "starter" OR kind STREQUAL "solution")
      string(TOUPPER ${kind} KIND)
      set(target ${base}-${kind})
      set(_srcs ${ARG_${KIND}})
    else()
      string(TOLOWER ${kind} _lower)
      string(REPLACE "_" "-" _lower ${_lower})
      set(target ${base}-mutant-${_lower})
      set(_srcs ${ARG_SOLUTION})
    endif()
    add_executable(${target} ${_srcs} ${ARG_TESTS})
    target_link_libraries(${target} PRIVATE handoff handoff_testkit handoff_catch_main)
    target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    handoff_target_defaults(${target})
    if(_tsan_flags)
      target_compile_options(${target} PRIVATE ${_tsan_flags})
      target_link_options(${target} PRIVATE -fsanitize=thread)
    endif()
    if(ARG_STAGE)
      target_compile_definitions(${target} PRIVATE HANDOFF_STAGE_BINARY="$<TARGET_FILE:handoff-${ARG_STAGE}>")
      add_dependencies(${target} handoff-${ARG_STAGE})
    endif()
    if(NOT kind STREQUAL "starter" AND NOT kind STREQUAL "solution")
      target_compile_definitions(${target} PRIVATE ${kind})
      set(_name "${base} (mutant ${kind}): the tests catch it")
      add_test(NAME "${_name}" COMMAND ${target})
      set_tests_properties("${_name}" PROPERTIES LABELS "solution;ch${nn}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
      if(_tsan_on)
        # Caught means a race reported, not any failure (a crash would pass WILL_FAIL too).
        set_tests_properties("${_name}" PROPERTIES ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1"
          PASS_REGULAR_EXPRESSION "WARNING: ThreadSanitizer: data race")
      else()
        set_tests_properties("${_name}" PROPERTIES WILL_FAIL TRUE)
      endif()
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY HANDOFF_EXERCISE_STARTERS ${base}-starter)
  _handoff_discover(${base}-solution "${base} (solution): " "solution;ch${nn}")
  add_test(NAME "${base} (starter): still fails until solved"
           COMMAND ${base}-starter)
  set_tests_properties("${base} (starter): still fails until solved" PROPERTIES
    LABELS "exercise;ch${nn}" WILL_FAIL TRUE TIMEOUT ${HANDOFF_TEST_TIMEOUT})
  if(ARG_MODEL)
    _handoff_model_test("${base} (solution): the model finds no counterexample" ${ARG_MODEL}
      ${CMAKE_CURRENT_SOURCE_DIR}/solution "" "solution;model;ch${nn}" FALSE)
    _handoff_model_test("${base} (starter): the model still finds a counterexample until solved" ${ARG_MODEL}
      ${CMAKE_CURRENT_SOURCE_DIR}/starter "" "exercise;ch${nn}" TRUE)
    foreach(m ${ARG_MODEL_MUTANTS})
      set(_name "${base} (model mutant ${m}): the model catches it")
      _handoff_model_test("${_name}" ${ARG_MODEL} ${CMAKE_CURRENT_SOURCE_DIR}/solution "${m}" "solution;model;ch${nn}" FALSE)
      # Caught means a counterexample, not any failure (a model that does not parse fails too).
      set_tests_properties("${_name}" PROPERTIES PASS_REGULAR_EXPRESSION "spin found a counterexample")
    endforeach()
  endif()
endfunction()

# One spin check (code/cmake/model_check.cmake) as a CTest test in its own work directory.
function(_handoff_model_test name model include_dir defines labels will_fail)
  string(MAKE_C_IDENTIFIER "${name}" _dir)
  add_test(NAME "${name}" COMMAND ${CMAKE_COMMAND}
    -DMODEL=${CMAKE_CURRENT_SOURCE_DIR}/${model} -DINCLUDE_DIR=${include_dir} "-DDEFINES=${defines}"
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/spin/${_dir} -DCC=${CMAKE_C_COMPILER}
    -P ${PROJECT_SOURCE_DIR}/code/cmake/model_check.cmake)
  set_tests_properties("${name}" PROPERTIES LABELS "${labels}" WILL_FAIL ${will_fail} TIMEOUT ${HANDOFF_TEST_TIMEOUT})
endfunction()
