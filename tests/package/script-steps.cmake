# SPDX-License-Identifier: MIT
# Shared by the package tests' `cmake -P` scripts: checking their -D arguments and running
# their steps, each failure naming the script.

# Fails unless every named variable was given a non-empty value with -D.
function(require_arguments script)
  foreach(_var IN LISTS ARGN)
    if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
      message(FATAL_ERROR "${script}: -D${_var}=... is required")
    endif()
  endforeach()
endfunction()

# Runs a command as step `what`, showing it first; fails on a non-zero exit status.
function(run_step script what)
  string(REPLACE ";" " " _shown "${ARGN}")
  message(STATUS "${script}: ${what}: ${_shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${script}: ${what} failed (exit status ${rc})")
  endif()
endfunction()
