# SPDX-License-Identifier: MIT
# Install rules and package files for batchrpc: headers, batchrpc::batchrpc (header-only),
# batchrpc::compiled, the optional components (http, net, net_tls: only when their dependencies
# were found), a CMake package (install tree and build tree) and pkg-config files. Nothing from examples/, tests/ or
# bench/ is installed (tests/package checks the installed tree file by file).
# Included by the top-level CMakeLists.txt when BATCHRPC_INSTALL AND NOT CMAKE_SKIP_INSTALL_RULES.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# A compiled library is installed, so the package lives under LIBDIR (arch-dependent).
set(BATCHRPC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/batchrpc"
    CACHE STRING "Install directory of batchrpc's CMake package files, relative to the prefix")
mark_as_advanced(BATCHRPC_INSTALL_CMAKEDIR)

# ---- Headers and targets -----------------------------------------------------------------------
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/batchrpc"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

install(TARGETS batchrpc batchrpc_compiled
        EXPORT batchrpcTargets
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")

install(EXPORT batchrpcTargets
        NAMESPACE batchrpc::
        FILE batchrpcTargets.cmake
        DESTINATION "${BATCHRPC_INSTALL_CMAKEDIR}")

# Each optional target has an export set of its own, loaded by the config only when its
# component is requested and its dependencies are found then (Boost, OpenSSL), so that users of
# the core never need them. Its headers are installed always.
# Installed, and exported for the build tree too (batchrpc_DIR=<build dir> works uninstalled).
function(batchrpc_install_component target export_set)
  if(NOT TARGET ${target})
    return()
  endif()
  install(TARGETS ${target} EXPORT ${export_set} ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  install(EXPORT ${export_set}
          NAMESPACE batchrpc::
          FILE ${export_set}.cmake
          DESTINATION "${BATCHRPC_INSTALL_CMAKEDIR}")
  export(EXPORT ${export_set}
         NAMESPACE batchrpc::
         FILE "${PROJECT_BINARY_DIR}/${export_set}.cmake")
endfunction()
batchrpc_install_component(batchrpc_net batchrpcNetTargets)                    # component net
batchrpc_install_component(batchrpc_net_compiled batchrpcNetCompiledTargets)   # component net
batchrpc_install_component(batchrpc_net_tls batchrpcNetTlsTargets)             # component net_tls

if(EXISTS "${PROJECT_SOURCE_DIR}/LICENSE")
  install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
endif()

# ---- CMake package -----------------------------------------------------------------------------
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/batchrpc-config.cmake.in"
  "${PROJECT_BINARY_DIR}/batchrpcConfig.cmake"
  INSTALL_DESTINATION "${BATCHRPC_INSTALL_CMAKEDIR}")

# Any release with the same major version satisfies a request for an older or equal version
# (0.x included: `find_package(batchrpc 0.1)` accepts 0.2.0). Not ARCH_INDEPENDENT: the package
# holds a compiled library, so a 32-bit build does not satisfy a 64-bit consumer.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/batchrpcConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)

install(FILES
          "${PROJECT_BINARY_DIR}/batchrpcConfig.cmake"
          "${PROJECT_BINARY_DIR}/batchrpcConfigVersion.cmake"
          "${PROJECT_SOURCE_DIR}/cmake/rapidjson-target.cmake"
        DESTINATION "${BATCHRPC_INSTALL_CMAKEDIR}")

# Build tree: batchrpc_DIR=<build dir> works without installing.
export(EXPORT batchrpcTargets
       NAMESPACE batchrpc::
       FILE "${PROJECT_BINARY_DIR}/batchrpcTargets.cmake")
configure_file("${PROJECT_SOURCE_DIR}/cmake/rapidjson-target.cmake"
               "${PROJECT_BINARY_DIR}/rapidjson-target.cmake" COPYONLY)

# ---- pkg-config --------------------------------------------------------------------------------
# Two files from one template: batchrpc.pc is the header-only library; batchrpc-compiled.pc adds
# the compiled variant (its define must reach every TU, so it cannot live in batchrpc.pc, whose
# users compile the bodies inline). Paths are relative to the .pc file, so the install relocates.
set(_batchrpc_pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(BATCHRPC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _batchrpc_pc_up "/${_batchrpc_pc_dir}" "/")
  string(REGEX REPLACE "/$" "" _batchrpc_pc_up "${_batchrpc_pc_up}")
  set(BATCHRPC_PC_PREFIX "\${pcfiledir}/${_batchrpc_pc_up}")
endif()
foreach(_dir IN ITEMS INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(BATCHRPC_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(BATCHRPC_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()

set(BATCHRPC_PC_NAME "batchrpc")
set(BATCHRPC_PC_DESCRIPTION "${PROJECT_DESCRIPTION} (header-only)")
set(BATCHRPC_PC_REQUIRES "RapidJSON")
set(BATCHRPC_PC_CFLAGS "-I\${includedir}")
# rpc::ThreadPool starts threads: whatever FindThreads needed here (nothing on glibc >= 2.34).
set(BATCHRPC_PC_LIBS "${CMAKE_THREAD_LIBS_INIT}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/batchrpc.pc.in"
               "${PROJECT_BINARY_DIR}/pkgconfig/batchrpc.pc" @ONLY)

set(BATCHRPC_PC_NAME "batchrpc-compiled")
set(BATCHRPC_PC_DESCRIPTION "${PROJECT_DESCRIPTION} (compiled variant)")
set(BATCHRPC_PC_REQUIRES "batchrpc = ${PROJECT_VERSION}")
set(BATCHRPC_PC_CFLAGS "-DBATCHRPC_SEPARATE_COMPILATION")
set(BATCHRPC_PC_LIBS "-L\${libdir} -lbatchrpc_compiled")
configure_file("${PROJECT_SOURCE_DIR}/cmake/batchrpc.pc.in"
               "${PROJECT_BINARY_DIR}/pkgconfig/batchrpc-compiled.pc" @ONLY)

install(FILES "${PROJECT_BINARY_DIR}/pkgconfig/batchrpc.pc"
              "${PROJECT_BINARY_DIR}/pkgconfig/batchrpc-compiled.pc"
        DESTINATION "${_batchrpc_pc_dir}")
unset(_batchrpc_pc_dir)
unset(_batchrpc_pc_up)
