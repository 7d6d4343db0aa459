# The project's CMake vocabulary. A chapter says add_stage(), an exercise says
# add_exercise(), a component test is one add_component_test() line. Every test gets a
# label from {unit, stage, model, solution, exercise, bench-smoke}, a chapter tag, and a
# TIMEOUT, so that a hang is a failure with a name rather than a stuck pipeline.

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
endif()

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
  catch_discover_tests(${name}
    TEST_PREFIX "${name}: "
    PROPERTIES LABELS "${_labels}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
endfunction()

# add_stage(<NN> <slug>) inside chapters/NN-slug: builds the stage binary
# `handoff-NN` from stage.cpp and its end-to-end tests from tests/*.cpp. The tests
# find the binary through the HANDOFF_STAGE_BINARY definition.
function(add_stage nn slug)
  set(bin handoff-${nn})
  add_executable(${bin} stage.cpp)
  target_link_libraries(${bin} PRIVATE handoff)
  handoff_target_defaults(${bin})
  set_target_properties(${bin} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  file(GLOB _tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/*.cpp)
  if(_tests)
    add_executable(${bin}-tests ${_tests})
    target_link_libraries(${bin}-tests PRIVATE handoff handoff_testkit handoff_catch_main)
    target_compile_definitions(${bin}-tests PRIVATE
      HANDOFF_STAGE_BINARY="$<TARGET_FILE:${bin}>")
    add_dependencies(${bin}-tests ${bin})
    handoff_target_defaults(${bin}-tests)
    catch_discover_tests(${bin}-tests
      TEST_PREFIX "${nn}-${slug}: "
      PROPERTIES LABELS "stage;ch${nn}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
  endif()
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
  catch_discover_tests(${base}-solution
    TEST_PREFIX "${base} (solution): "
    PROPERTIES LABELS "solution;ch${nn}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
  add_test(NAME "${base} (starter): still fails until solved"
           COMMAND ${base}-starter)
  set_tests_properties("${base} (starter): still fails until solved" PROPERTIES
    LABELS "exercise;ch${nn}" WILL_FAIL TRUE TIMEOUT ${HANDOFF_TEST_TIMEOUT})
endfunction()
