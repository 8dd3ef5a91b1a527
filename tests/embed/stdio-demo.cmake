# SPDX-License-Identifier: MIT
# The README's demo as a test: runs `PROGRAM --stdio` with INPUT on standard input and compares
# its standard output with EXPECTED, byte for byte (the actual output is kept in ACTUAL).
#   cmake -DPROGRAM=<embed_server> -DINPUT=<jsonl> -DEXPECTED=<file> -DACTUAL=<file> -P stdio-demo.cmake
cmake_minimum_required(VERSION 3.21)

execute_process(COMMAND "${PROGRAM}" --stdio
                INPUT_FILE "${INPUT}"
                OUTPUT_VARIABLE _actual
                RESULT_VARIABLE _rc)
file(WRITE "${ACTUAL}" "${_actual}")
if(NOT _rc STREQUAL "0")
  message(FATAL_ERROR "stdio-demo: ${PROGRAM} failed (exit status: ${_rc})")
endif()
file(READ "${EXPECTED}" _expected)
if(NOT _actual STREQUAL _expected)
  message(FATAL_ERROR "stdio-demo: the replies to ${INPUT} differ from ${EXPECTED}; see ${ACTUAL} "
                      "(to bless a deliberate change: cp ${ACTUAL} ${EXPECTED})")
endif()
message(STATUS "stdio-demo: the replies match ${EXPECTED}")
