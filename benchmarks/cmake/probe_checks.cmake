# benchmarks/cmake/probe_checks: the vocabulary of a probe's smoke tests (chapter 01; one
# home since issue 26). A probe (or a peer, or the oracle) writes a results JSON and judges
# one with --check; its smoke tests are a short run and the check of it, negative controls
# (a partial run the judge must reject) and forgeries (the short run's JSON with one row
# forged, which the judge must name), so that no check passes vacuously. Every test is
# labelled bench-smoke and chNN, with a TIMEOUT (60 s unless given).

set(_probe_checks_dir ${CMAKE_CURRENT_LIST_DIR})

# add_probe(<name> <source>...): the probe binary `name` in bin/, on the
# library and the probes' common part (probes/probe_main, probes/probe_report).
function(add_probe name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE handoff probe_main)
  handoff_target_defaults(${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endfunction()

# add_run_check(<name> <tag> CHAPTER <NN> RUN <what the run does> ARGS <arg>...
#               CHECK <what the check says> [COMMAND <cmd>...] [RUN_TIMEOUT <s>]
#               [REJECTED | EXPECT <regex>])
# Two tests, "<name>: <RUN>" (the command with ARGS and --json <name>-<tag>.json) and
# "<name>: <CHECK>" (the command with --check on that file, after it). COMMAND defaults to
# the target `name`. REJECTED: the check must fail (a negative control); EXPECT: the check's
# output must match (a control that must fail for a named reason).
function(add_run_check name tag)
  cmake_parse_arguments(ARG "REJECTED" "CHAPTER;RUN;CHECK;RUN_TIMEOUT;EXPECT" "ARGS;COMMAND" ${ARGN})
  if(NOT ARG_COMMAND)
    set(ARG_COMMAND ${name})
  endif()
  if(NOT ARG_RUN_TIMEOUT)
    set(ARG_RUN_TIMEOUT 60)
  endif()
  _probe_fixture(fixture ${name} ${tag})
  set(json ${CMAKE_CURRENT_BINARY_DIR}/${name}-${tag}.json)
  set(labels "bench-smoke;ch${ARG_CHAPTER}")
  add_test(NAME "${name}: ${ARG_RUN}" COMMAND ${ARG_COMMAND} ${ARG_ARGS} --json ${json})
  add_test(NAME "${name}: ${ARG_CHECK}" COMMAND ${ARG_COMMAND} --check ${json})
  set_tests_properties("${name}: ${ARG_RUN}" PROPERTIES
    LABELS "${labels}" TIMEOUT ${ARG_RUN_TIMEOUT} FIXTURES_SETUP ${fixture})
  set_tests_properties("${name}: ${ARG_CHECK}" PROPERTIES
    LABELS "${labels}" TIMEOUT 60 FIXTURES_REQUIRED ${fixture})
  if(ARG_REJECTED)
    set_tests_properties("${name}: ${ARG_CHECK}" PROPERTIES WILL_FAIL TRUE)
  elseif(ARG_EXPECT)
    set_tests_properties("${name}: ${ARG_CHECK}" PROPERTIES PASS_REGULAR_EXPRESSION "${ARG_EXPECT}")
  endif()
endfunction()

# add_forged_check(<name> CHAPTER <NN> WRITE <what the forgery claims> CHECK <what the check
#                  says> MATCH <key> <value>... EDIT <path> <value>... EXPECT <regex>
#                  [FROM <tag>] [COMMAND <cmd>...])
# The run <FROM> (default smoke) wrote <name>-<FROM>.json; "<name>: <WRITE>" copies it with
# the first row of "results" that has every MATCH key's value edited by EDIT
# (forge_row.cmake), and "<name>: <CHECK>" must name it: its output matches EXPECT.
function(add_forged_check name)
  cmake_parse_arguments(ARG "" "CHAPTER;WRITE;CHECK;EXPECT;FROM" "MATCH;EDIT;COMMAND" ${ARGN})
  if(NOT ARG_COMMAND)
    set(ARG_COMMAND ${name})
  endif()
  if(NOT ARG_FROM)
    set(ARG_FROM smoke)
  endif()
  _probe_fixture(from ${name} ${ARG_FROM})
  _probe_fixture(fixture ${name} ${ARG_FROM}-forged)
  set(in ${CMAKE_CURRENT_BINARY_DIR}/${name}-${ARG_FROM}.json)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}-${ARG_FROM}-forged.json)
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${name}-${ARG_FROM}-forge.cmake)
  set(body "set(MATCH")
  foreach(item ${ARG_MATCH})
    string(APPEND body " [==[${item}]==]")
  endforeach()
  string(APPEND body ")\nset(EDIT")
  foreach(item ${ARG_EDIT})
    string(APPEND body " [==[${item}]==]")
  endforeach()
  string(APPEND body ")\ninclude(${_probe_checks_dir}/forge_row.cmake)\n")
  file(WRITE ${script} "${body}")
  set(labels "bench-smoke;ch${ARG_CHAPTER}")
  add_test(NAME "${name}: ${ARG_WRITE}" COMMAND ${CMAKE_COMMAND} -DIN=${in} -DOUT=${out} -P ${script})
  add_test(NAME "${name}: ${ARG_CHECK}" COMMAND ${ARG_COMMAND} --check ${out})
  set_tests_properties("${name}: ${ARG_WRITE}" PROPERTIES
    LABELS "${labels}" TIMEOUT 60 FIXTURES_REQUIRED ${from} FIXTURES_SETUP ${fixture})
  set_tests_properties("${name}: ${ARG_CHECK}" PROPERTIES
    LABELS "${labels}" TIMEOUT 60 FIXTURES_REQUIRED ${fixture} PASS_REGULAR_EXPRESSION "${ARG_EXPECT}")
endfunction()

# The fixture a run of `name` tagged `tag` sets up: handoff_probe_smoke_json.
function(_probe_fixture out name tag)
  string(MAKE_C_IDENTIFIER "${name}_${tag}_json" id)
  set(${out} ${id} PARENT_SCOPE)
endfunction()
