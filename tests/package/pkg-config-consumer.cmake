# SPDX-License-Identifier: MIT
# Builds a program against an installed batchrpc with nothing but pkg-config and the compiler,
# as a Makefile would, then runs it:
#   c++ -std=c++20 -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags MODULE) main.cpp \
#       $(pkg-config --libs MODULE)
#   cmake -DPKG_CONFIG=<pkg-config> -DPC_DIR=<prefix>/<libdir>/pkgconfig -DMODULE=batchrpc
#         -DVERSION=<x.y.z> -DCXX=<compiler> -DSOURCE=<main.cpp> -DOUTPUT=<program>
#         [-DEXTRA_FLAGS=a|b] -P pkg-config-consumer.cmake
# -I (not -isystem) is what pkg-config gives, so batchrpc's headers themselves must compile
# without a warning under -Werror here.

cmake_minimum_required(VERSION 3.21...3.25)

include("${CMAKE_CURRENT_LIST_DIR}/script-steps.cmake")
require_arguments(pkg-config-consumer PKG_CONFIG PC_DIR MODULE VERSION CXX SOURCE OUTPUT)

# Our prefix first; the system's directories stay searchable for RapidJSON.pc.
if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "")
  set(ENV{PKG_CONFIG_PATH} "${PC_DIR}:$ENV{PKG_CONFIG_PATH}")
else()
  set(ENV{PKG_CONFIG_PATH} "${PC_DIR}")
endif()

function(_pkg_config out)
  execute_process(COMMAND "${PKG_CONFIG}" ${ARGN}
                  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc STREQUAL "0")
    message(FATAL_ERROR "pkg-config-consumer: `pkg-config ${ARGN}` failed (${_rc}): ${_err}")
  endif()
  set(${out} "${_out}" PARENT_SCOPE)
endfunction()

_pkg_config(_path --variable=pcfiledir ${MODULE})
file(REAL_PATH "${_path}" _path)
file(REAL_PATH "${PC_DIR}" _expected_path)
if(NOT _path STREQUAL _expected_path)
  message(FATAL_ERROR "pkg-config-consumer: ${MODULE}.pc was found in ${_path}, not in the "
                      "prefix under test (${PC_DIR})")
endif()
_pkg_config(_version --modversion ${MODULE})
if(NOT _version STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config-consumer: ${MODULE} is version '${_version}', expected ${VERSION}")
endif()
_pkg_config(_ignored --exists --print-errors "${MODULE} >= ${VERSION}")
_pkg_config(_cflags --cflags ${MODULE})
_pkg_config(_libs --libs ${MODULE})
separate_arguments(_cflags UNIX_COMMAND "${_cflags}")
separate_arguments(_libs UNIX_COMMAND "${_libs}")
set(_extra "")
if(EXTRA_FLAGS)
  string(REPLACE "|" ";" _extra "${EXTRA_FLAGS}")
endif()

set(_compile "${CXX}" -std=c++20 -Wall -Wextra -Wpedantic -Werror ${_cflags} "${SOURCE}"
             -o "${OUTPUT}" ${_libs} ${_extra})
string(REPLACE ";" " " _shown "${_compile}")
message(STATUS "pkg-config-consumer: ${_shown}")
file(REMOVE "${OUTPUT}")
execute_process(COMMAND ${_compile} RESULT_VARIABLE _rc)
if(NOT _rc STREQUAL "0")
  message(FATAL_ERROR "pkg-config-consumer: compiling with the flags of ${MODULE}.pc failed")
endif()
execute_process(COMMAND "${OUTPUT}" RESULT_VARIABLE _rc)
if(NOT _rc STREQUAL "0")
  message(FATAL_ERROR "pkg-config-consumer: the program built with ${MODULE}.pc failed (${_rc})")
endif()
