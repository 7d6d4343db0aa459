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

# add_exercise(<NN> <slug> STARTER <src>... SOLUTION <src>... TESTS <src>...)
# The same tests are built twice: against the solution (label `solution`, must pass)
# and against the starter (label `exercise`, WILL_FAIL). The starter's run is one CTest
# test over the whole binary, excluded from the default run; CI checks that it still
# fails, so an exercise can neither be solved by accident nor go vacuous.
function(add_exercise nn slug)
  cmake_parse_arguments(ARG "" "" "STARTER;SOLUTION;TESTS" ${ARGN})
  set(base ex-${nn}-${slug})
  foreach(kind starter solution)
    string(TOUPPER ${kind} KIND)
    add_executable(${base}-${kind} ${ARG_${KIND}} ${ARG_TESTS})
    target_link_libraries(${base}-${kind} PRIVATE handoff handoff_testkit handoff_catch_main)
    target_include_directories(${base}-${kind} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    handoff_target_defaults(${base}-${kind})
  endforeach()
  _handoff_discover(${base}-solution "${base} (solution): " "solution;ch${nn}")
  add_test(NAME "${base} (starter): still fails until solved"
           COMMAND ${base}-starter)
  set_tests_properties("${base} (starter): still fails until solved" PROPERTIES
    LABELS "exercise;ch${nn}" WILL_FAIL TRUE TIMEOUT ${HANDOFF_TEST_TIMEOUT})
endfunction()
