# code/spin/spin_model: one spin check of a wake model as a CTest test (chapter 03; in Spin's
# one home, code/spin/, since issue 40).
# Role: the one definition of spin_model(), which every chapter's models directory
# includes: one CTest test per (model, variant), run by run_model.py beside this file
# (spin -a, cc -O0, pan), with tso.pml beside it for every model's #include. A correct protocol must hold; a
# broken one is a negative control whose test passes only when pan finds the lost wake,
# and whose shortest counter-example, rendered as a timeline, must equal the committed one
# under the including directory's trails/. `cmake --build --preset release --target
# spin-trails` rewrites every models directory's trails.
#
# The including CMakeLists.txt sets, before its first spin_model():
#   SPIN_MODEL_CHAPTER  its chapter's number (the tests' label chNN)
#   SPIN_MODEL_WORKERS  optional: the trail's name for columns 1.. (default "pool":
#                       pool-1, pool-2; column 0 is always the loop)
include_guard(GLOBAL)

find_program(SPIN_EXECUTABLE spin REQUIRED)
find_program(SPIN_MODEL_CC NAMES cc gcc REQUIRED)

# spin_model(<model> <variant> PASS|FAIL "<sentence>" [NAME=VALUE...])
# <model>.pml lies in the calling directory; a FAIL variant's trail is trails/<model>-<variant>.md there.
function(spin_model model variant expect sentence)
  set(test "model ${model} (${variant}): ${sentence}")
  set(defines "")
  foreach(d ${ARGN})
    list(APPEND defines -D ${d})
  endforeach()
  if(NOT SPIN_MODEL_WORKERS)
    set(SPIN_MODEL_WORKERS pool)
  endif()
  set(run ${HANDOFF_PYTHON} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/run_model.py --spin ${SPIN_EXECUTABLE} --cc ${SPIN_MODEL_CC})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${model}-${variant})
  set(args ${CMAKE_CURRENT_SOURCE_DIR}/${model}.pml ${defines} --workdir ${work} --workers ${SPIN_MODEL_WORKERS})
  if(expect STREQUAL "PASS")
    add_test(NAME "${test}" COMMAND ${run} ${args} --expect pass)
  else()
    set(trail ${CMAKE_CURRENT_SOURCE_DIR}/trails/${model}-${variant}.md)
    add_test(NAME "${test}" COMMAND ${run} ${args} --expect fail --trail ${trail} --title "${sentence}")
    set_property(GLOBAL APPEND PROPERTY SPIN_MODEL_TRAIL_COMMANDS
      COMMAND ${run} ${args} --expect fail --trail ${trail} --title "${sentence}" --write-trail)
  endif()
  set_tests_properties("${test}" PROPERTIES LABELS "model;ch${SPIN_MODEL_CHAPTER}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
endfunction()

# spin-trails: every broken variant's trail, from every models directory, rewritten;
# made at the end of the top-level directory, once every spin_model() has run.
function(_spin_model_trails_target)
  get_property(commands GLOBAL PROPERTY SPIN_MODEL_TRAIL_COMMANDS)
  add_custom_target(spin-trails ${commands}
    COMMENT "Rewriting the models' trails/ from the broken variants' counter-examples"
    VERBATIM)
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _spin_model_trails_target)
