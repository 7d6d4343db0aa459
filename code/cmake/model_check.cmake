# code/cmake/model_check: run one spin model check as a CTest test (cmake -P) (chapter 02).
# Role: generate the verifier (spin -a), compile it, run an exhaustive safety search
# (assertions and invalid end states), and fail with the counterexample's trail, replayed
# step by step (spin -t -p), when the search finds one.
#   -DMODEL=<file.pml> -DWORK_DIR=<dir> -DCC=<C compiler>
#   [-DINCLUDE_DIR=<dir searched first for #include "...">] [-DDEFINES=<NAME;NAME>]
set(_pp)
if(INCLUDE_DIR)
  list(APPEND _pp "-E-I${INCLUDE_DIR}")
endif()
foreach(d ${DEFINES})
  list(APPEND _pp "-D${d}")
endforeach()

get_filename_component(_name "${MODEL}" NAME)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND spin -a ${_pp} "${MODEL}" WORKING_DIRECTORY "${WORK_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "spin -a failed:\n${out}")
endif()
execute_process(COMMAND "${CC}" -O0 -DSAFETY -o pan pan.c WORKING_DIRECTORY "${WORK_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "compiling the verifier failed:\n${out}")
endif()
execute_process(COMMAND ./pan -w16 WORKING_DIRECTORY "${WORK_DIR}" OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(out MATCHES "errors: 0\n")
  string(REGEX MATCH "[0-9]+ states, stored" states "${out}")
  message(STATUS "spin: no counterexample (${states}, exhaustive)")
  return()
endif()
string(REGEX MATCH "pan:1: [^\n]*" what "${out}")
execute_process(COMMAND spin -t -p -k "${WORK_DIR}/${_name}.trail" ${_pp} "${MODEL}" WORKING_DIRECTORY "${WORK_DIR}"
                OUTPUT_VARIABLE trail ERROR_VARIABLE trail)
message(NOTICE "spin found a counterexample (${what}). Its trail, step by step:\n${trail}")
message(FATAL_ERROR "spin: the model has a counterexample")
