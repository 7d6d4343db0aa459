# models/handoff_model: one spin check of a wake model as a CTest test (chapter 03; in the
# models' shared home, models/, since issue 26).
# Role: the one definition of handoff_model(), which every chapter's models directory
# includes: one CTest test per (model, variant), run by run_model.py beside this file
# (spin -a, cc -O0, pan), with tso.pml beside it for every model's #include. A correct protocol must hold; a
# broken one is a negative control whose test passes only when pan finds the lost wake,
# and whose shortest counter-example, rendered as a timeline, must equal the committed one
# under the including directory's trails/. `cmake --build --preset release --target
# models-trails` rewrites every models directory's trails.
#
# The including CMakeLists.txt sets, before its first handoff_model():
#   HANDOFF_MODEL_CHAPTER  its chapter's number (the tests' label chNN)
#   HANDOFF_MODEL_WORKERS  optional: the trail's name for columns 1.. (default "pool":
#                          pool-1, pool-2; column 0 is always the loop)
include_guard(GLOBAL)

find_program(HANDOFF_SPIN spin REQUIRED)
find_program(HANDOFF_MODEL_CC NAMES cc gcc REQUIRED)

# handoff_model(<model> <variant> PASS|FAIL "<sentence>" [NAME=VALUE...])
# <model>.pml lies in the calling directory; a FAIL variant's trail is trails/<model>-<variant>.md there.
function(handoff_model model variant expect sentence)
  set(test "model ${model} (${variant}): ${sentence}")
  set(defines "")
  foreach(d ${ARGN})
    list(APPEND defines -D ${d})
  endforeach()
  if(NOT HANDOFF_MODEL_WORKERS)
    set(HANDOFF_MODEL_WORKERS pool)
  endif()
  set(run ${HANDOFF_PYTHON} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/run_model.py --spin ${HANDOFF_SPIN} --cc ${HANDOFF_MODEL_CC})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${model}-${variant})
  set(args ${CMAKE_CURRENT_SOURCE_DIR}/${model}.pml ${defines} --workdir ${work} --workers ${HANDOFF_MODEL_WORKERS})
  if(expect STREQUAL "PASS")
    add_test(NAME "${test}" COMMAND ${run} ${args} --expect pass)
  else()
    set(trail ${CMAKE_CURRENT_SOURCE_DIR}/trails/${model}-${variant}.md)
    add_test(NAME "${test}" COMMAND ${run} ${args} --expect fail --trail ${trail} --title "${sentence}")
    set_property(GLOBAL APPEND PROPERTY HANDOFF_MODEL_TRAIL_COMMANDS
      COMMAND ${run} ${args} --expect fail --trail ${trail} --title "${sentence}" --write-trail)
  endif()
  set_tests_properties("${test}" PROPERTIES LABELS "model;ch${HANDOFF_MODEL_CHAPTER}" TIMEOUT ${HANDOFF_TEST_TIMEOUT})
endfunction()

# models-trails: every broken variant's trail, from every models directory, rewritten;
# made at the end of the top-level directory, once every handoff_model() has run.
function(_handoff_model_trails_target)
  get_property(commands GLOBAL PROPERTY HANDOFF_MODEL_TRAIL_COMMANDS)
  add_custom_target(models-trails ${commands}
    COMMENT "Rewriting the models' trails/ from the broken variants' counter-examples"
    VERBATIM)
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _handoff_model_trails_target)
