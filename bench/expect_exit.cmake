# Runs one command and checks its exit code and stderr (CTest error tests of the benchmarks:
# usage errors exit 2, run-time errors 1, each one "error: ..." line).
# Usage: cmake "-DCMD=<exe>|<arg>|..." -DRC=<expected exit code> "-DERR=<regex stderr must match>"
#              -P expect_exit.cmake   (CMD's words are separated by '|')
string(REPLACE "|" ";" words "${CMD}")
execute_process(COMMAND ${words} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "${RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${RC}")
endif()
if(NOT err MATCHES "${ERR}")
  message(FATAL_ERROR "stderr does not match '${ERR}'")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "stdout is not empty: the error must come before any benchmark output")
endif()
