# SPDX-License-Identifier: MIT
# The BATCHRPC_FETCH_DEPS fallback (OFF by default): when find_package() cannot find RapidJSON,
# download a pinned snapshot with FetchContent. Needs network access at configure time.
#
# RapidJSON's last release, v1.1.0 (2016), does not build with current compilers (GCC 14), so
# the pin is the commit Conan Center packages as rapidjson/cci.20250205, checked by its hash.
# Only the headers are used: RapidJSON's own CMakeLists.txt (tests, docs, examples) is never
# added. A parent project may FetchContent_Declare(rapidjson ...) first to choose another copy,
# or set FETCHCONTENT_SOURCE_DIR_RAPIDJSON to a local checkout.
#
# Installing a batchrpc built this way does not install RapidJSON: its users still need
# RapidJSON themselves (the installed package calls find_dependency(RapidJSON)).

include_guard(GLOBAL)

function(batchrpc_fetch_rapidjson)
  if(TARGET RapidJSON::RapidJSON)
    return()
  endif()
  include(FetchContent)
  message(STATUS "batchrpc: RapidJSON not found; BATCHRPC_FETCH_DEPS is ON, so fetching it")
  FetchContent_Declare(rapidjson
    URL "https://github.com/Tencent/rapidjson/archive/24b5e7a8b27f42fa16b96fc70aade9106cf7102f.tar.gz"
    URL_HASH SHA256=2d2601a82d2d3b7e143a3c8d43ef616671391034bc46891a9816b79cf2d3e7a8
    # A folder that does not exist: FetchContent_MakeAvailable() downloads but adds nothing.
    SOURCE_SUBDIR batchrpc-headers-only)
  FetchContent_MakeAvailable(rapidjson)
  if(NOT EXISTS "${rapidjson_SOURCE_DIR}/include/rapidjson/rapidjson.h")
    message(FATAL_ERROR "batchrpc: the fetched RapidJSON (${rapidjson_SOURCE_DIR}) has no "
                        "include/rapidjson/rapidjson.h")
  endif()
  add_library(RapidJSON::RapidJSON INTERFACE IMPORTED GLOBAL)
  set_property(TARGET RapidJSON::RapidJSON PROPERTY
               INTERFACE_INCLUDE_DIRECTORIES "${rapidjson_SOURCE_DIR}/include")
endfunction()
