# exercises/learner_answers.cmake: each exercise's corpus of learners' answers (issue 42),
# graded by the exercise's own tests beside the author's mutants.
#
# A mutant is the solution with one -D<NAME> switch: the author's idea of a mistake. A
# learner's answer is a whole file written as a learner would write it, without the
# solution: the steps in another order, a check too weak, a count not undone. Each wrong
# one must fail the tests and each right one (another valid way) must pass, or the tests
# grade the author's code and not the lesson.
#
# add_learner_answers(<NN> <slug> [WRONG <src>...] [RIGHT <src>...])
#   Call after add_exercise(<NN> <slug> ...). Each <src> stands in for the solution's own
#   file (the one the starter replaces) and is linked with the tests add_exercise compiled
#   (its object library ex-NN-slug-shared). A WRONG answer's test is
#   "ex-NN-slug (learner's wrong answer <stem>): the tests fail it" (WILL_FAIL), a RIGHT
#   answer's "ex-NN-slug (learner's right answer <stem>): the tests pass it"; both labelled
#   `solution`, so they run wherever the solutions do. Built only without a sanitizer: one
#   build grades the graders, and the release preset is that build.
function(add_learner_answers nn slug)
  cmake_parse_arguments(ARG "" "" "WRONG;RIGHT" ${ARGN})
  if(HANDOFF_SANITIZE)
    return()
  endif()
  set(base ex-${nn}-${slug})
  get_test_property("${base} (starter): still fails until solved" ENVIRONMENT _env)
  if(NOT _env)
    set(_env "")
  endif()
  foreach(kind WRONG RIGHT)
    foreach(src ${ARG_${kind}})
      get_filename_component(_stem ${src} NAME_WE)
      string(REGEX REPLACE "^(wrong|right)_" "" _stem ${_stem})
      string(TOLOWER ${kind} _kind)
      set(target ${base}-${_kind}-${_stem})
      add_executable(${target} ${src})
      target_link_libraries(${target} PRIVATE ${base}-shared handoff handoff_testkit handoff_catch_main)
      target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
      handoff_test_defaults(${target})
      get_target_property(_deps ${base}-starter MANUALLY_ADDED_DEPENDENCIES)
      if(_deps)
        add_dependencies(${target} ${_deps})
      endif()
      if(kind STREQUAL "WRONG")
        set(_name "${base} (learner's wrong answer ${_stem}): the tests fail it")
      else()
        set(_name "${base} (learner's right answer ${_stem}): the tests pass it")
      endif()
      add_test(NAME "${_name}" COMMAND ${target})
      set_tests_properties("${_name}" PROPERTIES LABELS "solution;ch${nn}" TIMEOUT ${HANDOFF_TEST_TIMEOUT}
        ENVIRONMENT "${_env}")
      if(kind STREQUAL "WRONG")
        set_tests_properties("${_name}" PROPERTIES WILL_FAIL TRUE)
      endif()
    endforeach()
  endforeach()
endfunction()
