# SPDX-License-Identifier: MIT
# Normalises whichever RapidJSON this machine has into one INTERFACE IMPORTED target,
# RapidJSON::RapidJSON. Used by batchrpc's own build and installed next to batchrpcConfig.cmake.
#
#   target `rapidjson`                       Conan CMakeDeps, vcpkg
#   target `RapidJSON`                       upstream master's exported config
#   RAPIDJSON_INCLUDE_DIRS / RapidJSON_INCLUDE_DIRS   Debian's rapidjson-dev 1.1.0 (no target)
#   BATCHRPC_RAPIDJSON_INCLUDE_DIR           last resort: a plain header search (cache variable,
#                                            may be set by hand to a vendored copy)
#
# Imported targets' include directories are SYSTEM for consumers, which silences RapidJSON
# 1.1.0's C++20 deprecation warnings (std::iterator base) in builds using -Werror.
#
# On failure this file stops with FATAL_ERROR, unless the includer set
# BATCHRPC_RAPIDJSON_SOFT_FAIL (batchrpcConfig.cmake does): then it sets
# BATCHRPC_RAPIDJSON_NOT_FOUND_MESSAGE and returns, so find_package(batchrpc) can fail cleanly.

if(NOT TARGET RapidJSON::RapidJSON)
  unset(BATCHRPC_RAPIDJSON_NOT_FOUND_MESSAGE)

  macro(_batchrpc_rapidjson_found out)
    if(TARGET rapidjson OR TARGET RapidJSON OR RAPIDJSON_INCLUDE_DIRS OR RapidJSON_INCLUDE_DIRS)
      set(${out} TRUE)
    else()
      set(${out} FALSE)
    endif()
  endmacro()

  _batchrpc_rapidjson_found(_batchrpc_rj_found)
  if(NOT _batchrpc_rj_found)
    find_package(RapidJSON CONFIG QUIET)
    _batchrpc_rapidjson_found(_batchrpc_rj_found)
  endif()
  if(NOT _batchrpc_rj_found)
    # Some package managers spell the config file in lower case.
    find_package(rapidjson CONFIG QUIET)
    _batchrpc_rapidjson_found(_batchrpc_rj_found)
  endif()

  set(_batchrpc_rj_source "")
  set(_batchrpc_rj_includes "")
  if(TARGET rapidjson)
    set(_batchrpc_rj_source rapidjson)
  elseif(TARGET RapidJSON)
    set(_batchrpc_rj_source RapidJSON)
  elseif(RAPIDJSON_INCLUDE_DIRS)
    set(_batchrpc_rj_includes "${RAPIDJSON_INCLUDE_DIRS}")
  elseif(RapidJSON_INCLUDE_DIRS)
    set(_batchrpc_rj_includes "${RapidJSON_INCLUDE_DIRS}")
  else()
    find_path(BATCHRPC_RAPIDJSON_INCLUDE_DIR NAMES rapidjson/rapidjson.h
              DOC "Directory containing rapidjson/rapidjson.h")
    if(BATCHRPC_RAPIDJSON_INCLUDE_DIR)
      set(_batchrpc_rj_includes "${BATCHRPC_RAPIDJSON_INCLUDE_DIR}")
    endif()
  endif()

  if(_batchrpc_rj_source)
    # A GLOBAL target may not link to a directory-local imported one (Conan's CMakeDeps makes
    # those): stay local in that case, global otherwise so sibling directories see it.
    get_target_property(_batchrpc_rj_imported ${_batchrpc_rj_source} IMPORTED)
    get_target_property(_batchrpc_rj_global ${_batchrpc_rj_source} IMPORTED_GLOBAL)
    if(_batchrpc_rj_imported AND NOT _batchrpc_rj_global)
      add_library(RapidJSON::RapidJSON INTERFACE IMPORTED)
    else()
      add_library(RapidJSON::RapidJSON INTERFACE IMPORTED GLOBAL)
    endif()
    set_property(TARGET RapidJSON::RapidJSON PROPERTY
                 INTERFACE_LINK_LIBRARIES ${_batchrpc_rj_source})
  elseif(_batchrpc_rj_includes)
    add_library(RapidJSON::RapidJSON INTERFACE IMPORTED GLOBAL)
    set_property(TARGET RapidJSON::RapidJSON PROPERTY
                 INTERFACE_INCLUDE_DIRECTORIES ${_batchrpc_rj_includes})
  else()
    string(CONCAT BATCHRPC_RAPIDJSON_NOT_FOUND_MESSAGE
        "batchrpc needs RapidJSON (>= 1.1.0), which was not found. On Debian/Ubuntu install the "
        "package rapidjson-dev (apt-get install rapidjson-dev); otherwise point "
        "CMAKE_PREFIX_PATH or RapidJSON_DIR at a RapidJSON install, or set "
        "BATCHRPC_RAPIDJSON_INCLUDE_DIR to the directory containing rapidjson/rapidjson.h.")
  endif()

  unset(_batchrpc_rj_found)
  unset(_batchrpc_rj_source)
  unset(_batchrpc_rj_includes)
  unset(_batchrpc_rj_imported)
  unset(_batchrpc_rj_global)

  if(DEFINED BATCHRPC_RAPIDJSON_NOT_FOUND_MESSAGE AND NOT BATCHRPC_RAPIDJSON_SOFT_FAIL)
    # Only batchrpc's own build gets here (the installed config fails softly): it can fetch.
    message(FATAL_ERROR "${BATCHRPC_RAPIDJSON_NOT_FOUND_MESSAGE} With network access, "
                        "-DBATCHRPC_FETCH_DEPS=ON downloads a pinned copy instead.")
  endif()
endif()
