# SPDX-License-Identifier: MIT
# What `conan create . -o batchrpc/*:shared=True` does, without Conan: configure the recipe's
# exported sources alone (check_conanfile.py copied them) with the cache variables the recipe's
# generate() sets, build, and install into a fresh prefix; the library must be a shared one.
#   cmake -DSOURCE=<exported sources> -DBINARY=<build dir> -DPREFIX=<prefix>
#         -DCACHE_VARS=<file of -DNAME=VALUE lines> -DGENERATOR=<generator> [-DMAKE_PROGRAM=...]
#         [-DCXX_COMPILER=...] [-DCONFIG=<build type>] -DLIBDIR=<libdir> -P conan-like-build.cmake

cmake_minimum_required(VERSION 3.21...3.25)

include("${CMAKE_CURRENT_LIST_DIR}/script-steps.cmake")
require_arguments(conan-like-build SOURCE BINARY PREFIX CACHE_VARS GENERATOR LIBDIR)

file(STRINGS "${CACHE_VARS}" _recipe_options REGEX "^-D")
file(REMOVE_RECURSE "${BINARY}" "${PREFIX}")
set(_configure "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BINARY}" -G "${GENERATOR}"
               ${_recipe_options} -DBUILD_SHARED_LIBS=ON "-DCMAKE_INSTALL_LIBDIR=${LIBDIR}")
if(MAKE_PROGRAM)
  list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND _configure "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
set(_config_args "")
if(CONFIG)
  list(APPEND _configure "-DCMAKE_BUILD_TYPE=${CONFIG}")
  set(_config_args --config "${CONFIG}")
endif()

run_step(conan-like-build configure ${_configure})
run_step(conan-like-build build "${CMAKE_COMMAND}" --build "${BINARY}" ${_config_args} --parallel 2)
run_step(conan-like-build install "${CMAKE_COMMAND}" --install "${BINARY}" --prefix "${PREFIX}" ${_config_args})

file(GLOB _shared "${PREFIX}/${LIBDIR}/*batchrpc_compiled*.so*"
                  "${PREFIX}/${LIBDIR}/*batchrpc_compiled*.dylib" "${PREFIX}/bin/*batchrpc_compiled*.dll")
if(NOT _shared)
  message(FATAL_ERROR "conan-like-build: BUILD_SHARED_LIBS=ON installed no shared library in "
                      "${PREFIX}/${LIBDIR}")
endif()
message(STATUS "conan-like-build: installed ${_shared}")
