# SPDX-License-Identifier: MIT
# Installs a batchrpc build tree into a fresh prefix and checks what landed there:
#   cmake -DBUILD=<build dir> -DPREFIX=<prefix> [-DCONFIG=<config>] -DVERSION=<x.y.z>
#         -DINCLUDEDIR=... -DLIBDIR=... -DBINDIR=... -DDOCDIR=... -DCMAKEDIR=...
#         -P install.cmake
# (the directories are the build's relative CMAKE_INSTALL_* and BATCHRPC_INSTALL_CMAKEDIR)
# Every installed file must be one of batchrpc's (headers, the compiled library, the CMake
# package, the pkg-config files, the licence): an example, test, benchmark or the embed plugin
# turning up in the prefix fails the test. The version file must be SameMajorVersion.

cmake_minimum_required(VERSION 3.21...3.25)

include("${CMAKE_CURRENT_LIST_DIR}/script-steps.cmake")
require_arguments(install.cmake BUILD PREFIX VERSION INCLUDEDIR LIBDIR BINDIR DOCDIR CMAKEDIR)

file(REMOVE_RECURSE "${PREFIX}")
set(_install "${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${PREFIX}")
if(CONFIG)
  list(APPEND _install --config "${CONFIG}")
endif()
execute_process(COMMAND ${_install} RESULT_VARIABLE _rc)
if(NOT _rc STREQUAL "0")
  message(FATAL_ERROR "install.cmake: `cmake --install` failed (exit status ${_rc})")
endif()

# ---- Nothing but batchrpc's own files ----------------------------------------------------------
function(_escape text out)
  string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
foreach(_dir IN ITEMS INCLUDEDIR LIBDIR BINDIR DOCDIR CMAKEDIR)
  _escape("${${_dir}}" _${_dir})
endforeach()
set(_allowed
  "^${_INCLUDEDIR}/batchrpc/([A-Za-z0-9_]+/)*[A-Za-z0-9_]+\\.(hpp|ipp)$"
  "^${_LIBDIR}/(lib)?batchrpc_compiled(\\.[a-z]+)?(\\.[0-9]+)*$"
  "^${_LIBDIR}/(lib)?batchrpc_net_compiled\\.(a|lib)$"
  "^${_BINDIR}/(lib)?batchrpc_compiled\\.dll$"
  "^${_CMAKEDIR}/batchrpc(Config|ConfigVersion|Targets|Targets-[a-z]+|NetTargets|NetTlsTargets)\\.cmake$"
  "^${_CMAKEDIR}/batchrpcNetCompiledTargets(-[a-z]+)?\\.cmake$"
  "^${_CMAKEDIR}/rapidjson-target\\.cmake$"
  "^${_LIBDIR}/pkgconfig/batchrpc(-compiled)?\\.pc$"
  "^${_DOCDIR}/LICENSE$")
set(_required
  "${INCLUDEDIR}/batchrpc/batchrpc.hpp" "${INCLUDEDIR}/batchrpc/version.hpp"
  "${CMAKEDIR}/batchrpcConfig.cmake" "${CMAKEDIR}/batchrpcConfigVersion.cmake"
  "${CMAKEDIR}/batchrpcTargets.cmake" "${CMAKEDIR}/rapidjson-target.cmake"
  "${LIBDIR}/pkgconfig/batchrpc.pc" "${LIBDIR}/pkgconfig/batchrpc-compiled.pc")

file(GLOB_RECURSE _files LIST_DIRECTORIES FALSE RELATIVE "${PREFIX}" "${PREFIX}/*")
list(SORT _files)
set(_problems "")
set(_library_found FALSE)
foreach(_file IN LISTS _files)
  set(_ok FALSE)
  foreach(_pattern IN LISTS _allowed)
    if(_file MATCHES "${_pattern}")
      set(_ok TRUE)
      break()
    endif()
  endforeach()
  if(NOT _ok)
    string(APPEND _problems "  installed but not batchrpc's: ${_file}\n")
  endif()
  if(_file MATCHES "batchrpc_compiled")
    set(_library_found TRUE)
  endif()
endforeach()
foreach(_file IN LISTS _required)
  if(NOT EXISTS "${PREFIX}/${_file}")
    string(APPEND _problems "  missing: ${_file}\n")
  endif()
endforeach()
if(NOT _library_found)
  string(APPEND _problems "  missing: the compiled variant's library (batchrpc_compiled)\n")
endif()

# ---- Version compatibility: SameMajorVersion ---------------------------------------------------
function(_compatible request out)
  set(PACKAGE_FIND_VERSION "${request}")
  string(REPLACE "." ";" _parts "${request}.0.0")
  list(GET _parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET _parts 1 PACKAGE_FIND_VERSION_MINOR)
  list(GET _parts 2 PACKAGE_FIND_VERSION_PATCH)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
  include("${PREFIX}/${CMAKEDIR}/batchrpcConfigVersion.cmake")
  set(${out} "${PACKAGE_VERSION_COMPATIBLE}" PARENT_SCOPE)
endfunction()
if(EXISTS "${PREFIX}/${CMAKEDIR}/batchrpcConfigVersion.cmake")
  string(REPLACE "." ";" _parts "${VERSION}")
  list(GET _parts 0 _major)
  list(GET _parts 1 _minor)
  math(EXPR _next_major "${_major} + 1")
  foreach(_case IN ITEMS "${_major}.0:TRUE" "${_major}.${_minor}:TRUE" "${VERSION}:TRUE"
                         "${_next_major}.0:FALSE")
    string(REPLACE ":" ";" _case "${_case}")
    list(GET _case 0 _request)
    list(GET _case 1 _expected)
    _compatible("${_request}" _got)
    if(NOT (_got AND _expected) AND NOT (NOT _got AND NOT _expected))
      string(APPEND _problems "  batchrpcConfigVersion.cmake: a request for ${_request} gives "
                              "compatible=${_got}, expected ${_expected} (SameMajorVersion)\n")
    endif()
  endforeach()
endif()

if(_problems)
  string(REPLACE ";" "\n  " _listing "${_files}")
  message(FATAL_ERROR "install.cmake: the installed tree in ${PREFIX} is wrong:\n${_problems}"
                      "installed files:\n  ${_listing}")
endif()
list(LENGTH _files _count)
message(STATUS "install.cmake: ${_count} files in ${PREFIX}, all batchrpc's; version ${VERSION} "
               "accepts requests for ${_major}.x up to ${VERSION}")
