cmake_policy(SET CMP0054 NEW)  # quoted if() arguments are strings, never variable names
# The gate must catch a change: copies the golden file (-DGOLDEN) with one layer line of the model
# -DMODEL on the default configuration altered (-DFIELD sha256: its hash becomes zeros; cycles:
# one cycle more), runs the tool (-DTOOL, -DARGS) against the copy in -DOUT_DIR and requires exit 1
# with a message that names the model, the configuration, the layer, its step and the field.
file(READ ${GOLDEN} text)
string(REGEX MATCH "{\"model\": \"${MODEL}\", \"config\": \"default\", \"step\": ([0-9]+), \"name\": \"([^\"]*)\"[^\n]*\"cycles\": ([0-9]+), \"sha256\": \"([0-9a-f]+)\"}"
       line "${text}")
if(NOT line)
  message(FATAL_ERROR "no layer of ${MODEL} on 'default' in ${GOLDEN}")
endif()
set(layer_step ${CMAKE_MATCH_1})
set(layer_name ${CMAKE_MATCH_2})
set(layer_cycles ${CMAKE_MATCH_3})
set(layer_hash ${CMAKE_MATCH_4})
if("${FIELD}" STREQUAL "sha256")
  string(REPLACE "\"sha256\": \"${layer_hash}\"" "\"sha256\": \"0000000000000000000000000000000000000000000000000000000000000000\"" changed "${line}")
  set(want "golden 0000000000000000000000000000000000000000000000000000000000000000, now ${layer_hash}")
elseif("${FIELD}" STREQUAL "cycles")
  math(EXPR more "${layer_cycles} + 1")
  string(REPLACE "\"cycles\": ${layer_cycles}," "\"cycles\": ${more}," changed "${line}")
  set(want "golden ${more}, now ${layer_cycles}")
else()
  message(FATAL_ERROR "FIELD must be sha256 or cycles, not '${FIELD}'")
endif()
string(REPLACE "${line}" "${changed}" text "${text}")
file(MAKE_DIRECTORY ${OUT_DIR})
file(WRITE ${OUT_DIR}/golden_${FIELD}.json "${text}")
execute_process(COMMAND ${TOOL} ${ARGS} --golden ${OUT_DIR}/golden_${FIELD}.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "the tool exited ${rc}, not 1, on a golden file with ${FIELD} of layer '${layer_name}' changed:\n${out}\n${err}")
endif()
set(expect "first: model '${MODEL}' config 'default' layer '${layer_name}' (step ${layer_step}): field '${FIELD}': ${want}")
string(FIND "${err}" "${expect}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the message does not say\n  ${expect}\nit says:\n${err}")
endif()
message(STATUS "caught: ${expect}")
