# SPDX-License-Identifier: MIT
# Fails when a header or .ipp of the core includes a POSIX header outside the files that may:
# the file-descriptor streams (impl/stream_posix.ipp, included only where
# BATCHRPC_HAS_FD_STREAMS) and detail/stack_arena.hpp (under __linux__). Package managers build
# the core on Windows too.
#   cmake -DINCLUDE_DIR=<include/batchrpc> -P posix_headers.cmake
cmake_minimum_required(VERSION 3.25)
set(_allowed "impl/stream_posix.ipp" "detail/stack_arena.hpp")
file(GLOB_RECURSE _files RELATIVE "${INCLUDE_DIR}" "${INCLUDE_DIR}/*.hpp" "${INCLUDE_DIR}/*.ipp")
set(_found "")
foreach(_file IN LISTS _files)
  if(_file IN_LIST _allowed OR _file MATCHES "^(net|impl/net|detail/net)")
    continue()  # the network transports stand on Boost.Asio, which has its own ports
  endif()
  file(STRINGS "${INCLUDE_DIR}/${_file}" _lines
       REGEX "^[ \t]*#[ \t]*include[ \t]*<(unistd|poll|signal|pthread|fcntl|dlfcn|sys/[a-z_]+)\\.h>")
  foreach(_line IN LISTS _lines)
    string(APPEND _found "  ${_file}: ${_line}\n")
  endforeach()
endforeach()
if(_found)
  message(FATAL_ERROR "POSIX headers outside stream_posix.ipp and stack_arena.hpp:\n${_found}")
endif()
message(STATUS "no POSIX header in the core outside stream_posix.ipp and stack_arena.hpp")
