# Runs the corpus tool twice with the same arguments (-DTOOL, -DARGS) and fails unless both runs
# succeed against the golden file and write byte-identical corpora (-DOUT_DIR/run1.json, run2.json).
file(MAKE_DIRECTORY ${OUT_DIR})
foreach(i 1 2)
  execute_process(COMMAND ${TOOL} ${ARGS} --out ${OUT_DIR}/run${i}.json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${i} of the corpus tool failed (exit ${rc}):\n${out}\n${err}")
  endif()
endforeach()
file(SHA256 ${OUT_DIR}/run1.json h1)
file(SHA256 ${OUT_DIR}/run2.json h2)
if(NOT h1 STREQUAL h2)
  message(FATAL_ERROR "two runs wrote different corpora: run1.json sha256 ${h1}, run2.json ${h2}")
endif()
file(SIZE ${OUT_DIR}/run1.json size)
message(STATUS "two runs wrote the same ${size}-byte corpus (sha256 ${h1})")
