# Test rtl_lint_<config>: `verilator --lint-only -Wall` of hw/rtl with one configuration's
# generated package (built by the tessel_rtl_model_<config> target). Variables: VERILATOR, PKG,
# FILES_F. Fails (non-zero exit) on any Verilator warning or error.
if(NOT EXISTS ${PKG})
  message(FATAL_ERROR "${PKG} does not exist: build the RTL models first")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/rtl_sources.cmake)
tessel_rtl_sources(sources ${PKG} ${FILES_F})
execute_process(COMMAND ${VERILATOR} --lint-only -Wall --top-module tessel_top ${sources}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verilator --lint-only -Wall failed (${rc})")
endif()
