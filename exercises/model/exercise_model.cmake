# exercises/model: add_exercise_model(), the ordering exercises' second grader (issue 42).
# An exercise's model (model/<name>_model.cpp, exercises/model/exercise_model.h) is compiled
# once per file it grades, with that file as EXERCISE_LEARNER_FILE, on Relacy's atomics: the
# learner's starter, the solution and its mutants, and the exercise's corpus of a learner's
# mistakes (mistakes/*.cpp: each must fail, by the grader that catches it) and correct
# alternatives (alternatives/*.cpp: each must pass both). As code/relacy/, built and run in the
# release build only: a sanitizer cannot follow Relacy's fibers and adds nothing to its search.
#
# add_exercise_model(<NN> <slug> MODEL <model.cpp> LEARNER <file name in starter/ and solution/>
#                    [MUTANTS <NAME>...]         (each -D<NAME> on the solution's file)
#                    [TESTS_CATCH <stem>...])    (mistakes/<stem>.cpp the C++ tests fail, not the model)
# Relacy's headers, parsed once: every model target reuses this precompiled header (it is the
# first thing each model includes; its flags are the models', -O1 included, or GCC would not
# use it).
if(NOT HANDOFF_SANITIZE AND NOT TARGET exercise-model-pch)
  find_path(HANDOFF_RELACY_INCLUDE relacy/relacy.hpp)
  if(HANDOFF_RELACY_INCLUDE)
    add_library(exercise-model-pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/exercise_model_pch.cpp)
    target_include_directories(exercise-model-pch PRIVATE ${PROJECT_SOURCE_DIR}/code)
    target_include_directories(exercise-model-pch SYSTEM PRIVATE ${HANDOFF_RELACY_INCLUDE})
    handoff_target_defaults(exercise-model-pch)
    target_compile_options(exercise-model-pch PRIVATE -O1 -Wno-unused-parameter -Wno-pedantic -fno-sized-deallocation)
    target_precompile_headers(exercise-model-pch PRIVATE ${PROJECT_SOURCE_DIR}/code/relacy/relacy_atomics.h)
  endif()
endif()

function(add_exercise_model nn slug)
  cmake_parse_arguments(ARG "" "MODEL;LEARNER" "MUTANTS;TESTS_CATCH" ${ARGN})
  if(HANDOFF_SANITIZE)
    return()
  endif()
  find_path(HANDOFF_RELACY_INCLUDE relacy/relacy.hpp)
  if(NOT HANDOFF_RELACY_INCLUDE)
    message(STATUS "relacy-dev not found: ex-${nn}-${slug}'s model is not built")
    return()
  endif()
  set(base ex-${nn}-${slug})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})

  # <variant>: a target name's middle; file: the graded file; ARGN: -D names.
  function(_exercise_model_target target file)
    add_executable(${target} ${dir}/${ARG_MODEL})
    target_compile_definitions(${target} PRIVATE "EXERCISE_LEARNER_FILE=\"${file}\"" ${ARGN})
    target_include_directories(${target} PRIVATE ${dir} ${PROJECT_SOURCE_DIR}/exercises/model
                                                 ${PROJECT_SOURCE_DIR}/code)
    target_include_directories(${target} SYSTEM PRIVATE ${HANDOFF_RELACY_INCLUDE})
    handoff_target_defaults(${target})
    # As code/relacy/CMakeLists.txt: Relacy's headers trip these; and Relacy replaces
    # operator new/delete inline, which a sized delete would bypass.
    # -O1: a model's search runs in seconds either way, and -O2 nearly doubles its compile.
    target_compile_options(${target} PRIVATE -O1 -Wno-unused-parameter -Wno-pedantic -fno-sized-deallocation)
    set_property(SOURCE ${dir}/${ARG_MODEL} APPEND PROPERTY OBJECT_DEPENDS ${file})
    target_precompile_headers(${target} REUSE_FROM exercise-model-pch)
  endfunction()

  function(_exercise_model_test name target labels)
    add_test(NAME "${name}" COMMAND ${target} ${ARGN})
    set_tests_properties("${name}" PROPERTIES LABELS "${labels}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
  endfunction()

  _exercise_model_target(${base}-starter-model ${dir}/starter/${ARG_LEARNER})
  _exercise_model_test("${base} (starter): the model still refutes it until solved" ${base}-starter-model
                       "exercise;ch${nn}")
  set_tests_properties("${base} (starter): the model still refutes it until solved" PROPERTIES WILL_FAIL TRUE)
  set_property(GLOBAL APPEND PROPERTY HANDOFF_EXERCISE_STARTER_MODELS ${base}-starter-model)  # exercise-status builds it

  _exercise_model_target(${base}-solution-model ${dir}/solution/${ARG_LEARNER})
  _exercise_model_test("${base} (solution): the model holds" ${base}-solution-model
                       "solution;ch${nn}")

  foreach(m ${ARG_MUTANTS})
    string(TOLOWER ${m} _lower)
    string(REPLACE "_" "-" _lower ${_lower})
    _exercise_model_target(${base}-mutant-${_lower}-model ${dir}/solution/${ARG_LEARNER} ${m})
    _exercise_model_test("${base} (model mutant ${m}): the model catches it" ${base}-mutant-${_lower}-model
                         "solution;ch${nn}" --expect-refuted)
  endforeach()

  # The C++ tests built on one graded file, as add_exercise() builds the solution's.
  function(_exercise_tests_target target file)
    add_executable(${target} ${file})
    target_link_libraries(${target} PRIVATE ${base}-shared handoff handoff_testkit handoff_catch_main)
    target_include_directories(${target} PRIVATE ${dir})
    handoff_test_defaults(${target})
  endfunction()

  # A learner's mistakes: each must fail the grader that catches it. Those named after
  # TESTS_CATCH fail the C++ tests (WILL_FAIL); every other one must be refuted by one of the
  # model's checks (--expect-refuted), so that a mistake never passes by the wrong grader's
  # crash, and each mistake is built once.
  file(GLOB _mistakes CONFIGURE_DEPENDS ${dir}/mistakes/*.cpp)
  foreach(f ${_mistakes})
    get_filename_component(_stem ${f} NAME_WE)
    string(REPLACE "_" "-" _stem ${_stem})
    if(_stem IN_LIST ARG_TESTS_CATCH)
      _exercise_tests_target(${base}-mistake-${_stem} ${f})
      set(_name "${base} (learner mistake ${_stem}): the tests fail it")
      add_test(NAME "${_name}" COMMAND ${base}-mistake-${_stem})
      set_tests_properties("${_name}" PROPERTIES LABELS "solution;ch${nn}" TIMEOUT ${HANDOFF_TEST_TIMEOUT} WILL_FAIL TRUE)
    else()
      _exercise_model_target(${base}-mistake-${_stem}-model ${f})
      _exercise_model_test("${base} (learner mistake ${_stem}): the model fails it" ${base}-mistake-${_stem}-model
                           "solution;ch${nn}" --expect-refuted)
    endif()
  endforeach()

  # Correct answers in other styles: the model must hold, and the C++ tests must pass.
  file(GLOB _alternatives CONFIGURE_DEPENDS ${dir}/alternatives/*.cpp)
  foreach(f ${_alternatives})
    get_filename_component(_stem ${f} NAME_WE)
    string(REPLACE "_" "-" _stem ${_stem})
    _exercise_model_target(${base}-alternative-${_stem}-model ${f})
    _exercise_model_test("${base} (correct alternative ${_stem}): the model holds" ${base}-alternative-${_stem}-model
                         "solution;ch${nn}")
    _exercise_tests_target(${base}-alternative-${_stem} ${f})
    add_test(NAME "${base} (correct alternative ${_stem}): the tests pass it" COMMAND ${base}-alternative-${_stem})
    set_tests_properties("${base} (correct alternative ${_stem}): the tests pass it" PROPERTIES
      LABELS "solution;ch${nn}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
  endforeach()
endfunction()
