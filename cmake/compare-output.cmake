# SPDX-License-Identifier: MIT
# Runs a program and compares its standard output with a file, byte for byte.
#   cmake -DPROGRAM=<exe> -DEXPECTED=<file> [-DARGS=<a;b>] [-DACTUAL=<file>] -P compare-output.cmake
# Fails when the program exits non-zero or its stdout differs; the message shows the first
# differing line, and a unified diff when `diff` is available. The program's stderr passes
# through (sanitizer reports stay visible). The actual output is saved to ACTUAL (default:
# <expected name>.actual in the working directory) for inspection or to bless it.
cmake_minimum_required(VERSION 3.21)

foreach(_var IN ITEMS PROGRAM EXPECTED)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "compare-output: -D${_var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${EXPECTED}")
  message(FATAL_ERROR "compare-output: expected-output file does not exist: ${EXPECTED}")
endif()
if(NOT DEFINED ACTUAL OR ACTUAL STREQUAL "")
  get_filename_component(_name "${EXPECTED}" NAME)
  set(ACTUAL "${CMAKE_CURRENT_BINARY_DIR}/${_name}.actual")
endif()

execute_process(COMMAND "${PROGRAM}" ${ARGS}
                OUTPUT_VARIABLE _actual
                RESULT_VARIABLE _rc)
file(WRITE "${ACTUAL}" "${_actual}")
file(READ "${EXPECTED}" _expected)

if(NOT _rc STREQUAL "0")
  message(NOTICE "--- stdout of ${PROGRAM} ---\n${_actual}--- end of stdout ---")
  message(FATAL_ERROR "compare-output: ${PROGRAM} failed (exit status: ${_rc})")
endif()

if(_actual STREQUAL _expected)
  string(LENGTH "${_actual}" _len)
  message(STATUS "compare-output: stdout matches ${EXPECTED} (${_len} bytes)")
  return()
endif()

# Locate the first differing line. ';', '[' and ']' would upset CMake's list handling, so they
# are swapped for control characters while splitting.
string(ASCII 1 _semi)
string(ASCII 2 _lbr)
string(ASCII 3 _rbr)
function(_split_lines text out)
  string(REPLACE ";" "${_semi}" text "${text}")
  string(REPLACE "[" "${_lbr}" text "${text}")
  string(REPLACE "]" "${_rbr}" text "${text}")
  string(REPLACE "\n" ";" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
function(_unescape text out)
  string(REPLACE "${_semi}" ";" text "${text}")
  string(REPLACE "${_lbr}" "[" text "${text}")
  string(REPLACE "${_rbr}" "]" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

_split_lines("${_expected}" _exp_lines)
_split_lines("${_actual}" _act_lines)
list(LENGTH _exp_lines _exp_n)
list(LENGTH _act_lines _act_n)
set(_first "")
set(_i 0)
while(_i LESS _exp_n OR _i LESS _act_n)
  set(_e "<no line: end of expected output>")
  set(_a "<no line: end of actual output>")
  if(_i LESS _exp_n)
    list(GET _exp_lines ${_i} _e)
  endif()
  if(_i LESS _act_n)
    list(GET _act_lines ${_i} _a)
  endif()
  if(NOT _e STREQUAL _a)
    math(EXPR _lineno "${_i} + 1")
    _unescape("${_e}" _e)
    _unescape("${_a}" _a)
    set(_first "first difference at line ${_lineno}:\n-${_e}\n+${_a}\n")
    break()
  endif()
  math(EXPR _i "${_i} + 1")
endwhile()
if(_first STREQUAL "")
  set(_first "(could not locate the differing line)\n")
endif()

set(_diff "")
find_program(_diff_exe diff)
if(_diff_exe)
  execute_process(COMMAND "${_diff_exe}" -u "${EXPECTED}" "${ACTUAL}" OUTPUT_VARIABLE _diff)
endif()

string(LENGTH "${_expected}" _exp_len)
string(LENGTH "${_actual}" _act_len)
# FATAL_ERROR re-wraps its text, so the diff goes out verbatim first.
message(NOTICE "${_first}${_diff}")
message(FATAL_ERROR
  "compare-output: stdout of ${PROGRAM} differs from ${EXPECTED} "
  "(expected ${_exp_len} bytes, got ${_act_len}); actual output saved to ${ACTUAL}")
