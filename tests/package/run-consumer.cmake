# SPDX-License-Identifier: MIT
# Configures, builds and tests a separate CMake project from scratch, as a user would:
#   cmake -DSOURCE=<project> -DBINARY=<build dir> -DGENERATOR=<generator> [-DMAKE_PROGRAM=...]
#         [-DGENERATOR_PLATFORM=...] [-DGENERATOR_TOOLSET=...] [-DCXX_COMPILER=...]
#         [-DCONFIG=<build type>] [-DOPTIONS=-DA=1|-DB=2] [-DEXPECT_TESTS=<n>] [-DRUN=<program>]
#         [-DSTEPS=configure|build|test] [-DSANITIZE=<list>] -P run-consumer.cmake
# The build directory is deleted first so nothing stale can make a test pass. OPTIONS are extra
# configure arguments separated by '|'. With EXPECT_TESTS, the project's CTest must hold exactly
# that many tests (a vendored batchrpc adds none) and all must pass; they run the programs.
# RUN names a program of the project to run directly instead (for projects without tests).
# SANITIZE (BATCHRPC_SANITIZE of the build under test) is added to the link flags, so a program
# can link a library built with sanitizers.

cmake_minimum_required(VERSION 3.21...3.25)

include("${CMAKE_CURRENT_LIST_DIR}/script-steps.cmake")
require_arguments(run-consumer SOURCE BINARY GENERATOR)
if(NOT DEFINED STEPS OR STEPS STREQUAL "")
  set(STEPS configure build test)
else()
  string(REPLACE "|" ";" STEPS "${STEPS}")
endif()

file(REMOVE_RECURSE "${BINARY}")

set(_configure "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${BINARY}" -G "${GENERATOR}")
if(GENERATOR_PLATFORM)
  list(APPEND _configure -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
  list(APPEND _configure -T "${GENERATOR_TOOLSET}")
endif()
if(MAKE_PROGRAM)
  list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND _configure "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(CONFIG)
  list(APPEND _configure "-DCMAKE_BUILD_TYPE=${CONFIG}")
endif()
if(SANITIZE)
  list(APPEND _configure "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=${SANITIZE}"
                         "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=${SANITIZE}")
endif()
if(OPTIONS)
  string(REPLACE "|" ";" _options "${OPTIONS}")
  list(APPEND _configure ${_options})
endif()

set(_config_args "")
if(CONFIG)
  set(_config_args --config "${CONFIG}")
endif()

if("configure" IN_LIST STEPS)
  run_step(run-consumer configure ${_configure})
endif()
if("build" IN_LIST STEPS)
  run_step(run-consumer build "${CMAKE_COMMAND}" --build "${BINARY}" ${_config_args} --parallel 2)
endif()
if("test" IN_LIST STEPS)
  if(DEFINED EXPECT_TESTS)
    execute_process(COMMAND "${CMAKE_CTEST_COMMAND}" -N ${_config_args}
                    WORKING_DIRECTORY "${BINARY}" OUTPUT_VARIABLE _listing RESULT_VARIABLE rc)
    if(NOT rc STREQUAL "0" OR NOT _listing MATCHES "Total Tests: ([0-9]+)")
      message(FATAL_ERROR "run-consumer: cannot list the tests of ${BINARY}:\n${_listing}")
    endif()
    if(NOT CMAKE_MATCH_1 EQUAL EXPECT_TESTS)
      message(FATAL_ERROR "run-consumer: the project holds ${CMAKE_MATCH_1} tests, expected "
                          "${EXPECT_TESTS} (its own only):\n${_listing}")
    endif()
  endif()
  if(RUN)
    find_program(_program NAMES "${RUN}" PATHS "${BINARY}" "${BINARY}/${CONFIG}" NO_DEFAULT_PATH)
    if(NOT _program)
      message(FATAL_ERROR "run-consumer: no program ${RUN} in ${BINARY}")
    endif()
    run_step(run-consumer run "${_program}")
  else()
    run_step(run-consumer test "${CMAKE_CTEST_COMMAND}" --output-on-failure --verbose ${_config_args}
         --test-dir "${BINARY}")
  endif()
endif()
