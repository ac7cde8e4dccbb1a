# Runs -DTOOL with -DARGS (a ;-list) and passes only when it exits with a non-zero status AND
# its output matches -DMESSAGE (a regex): a clear error, never a silent success or a crash
# without the message.
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "exit status 0, expected an error matching '${MESSAGE}':\n${out}\n${err}")
endif()
if(NOT "${out}${err}" MATCHES "${MESSAGE}")
  message(FATAL_ERROR "exit status ${rc}, but no message matching '${MESSAGE}':\n${out}\n${err}")
endif()
message(STATUS "exit status ${rc} with the expected message")
