# SPDX-License-Identifier: MIT
# The embed plugin (examples/embed/embed/) as a static library, for the examples, the tests and
# the benchmarks. Eigen is the plugin's dependency only: batchrpc::batchrpc never sees it.
#
#   batchrpc_embed_library(<target> <batchrpc target>)
#
# defines <target> (unless it exists) on top of <batchrpc target> (batchrpc::compiled or the
# header-only batchrpc::batchrpc: one program must not mix the two). Sets BATCHRPC_EMBED_FOUND
# in the caller's scope to whether Eigen (>= 3.4, Debian: libeigen3-dev) was found; without it
# no target is defined. 3.4: embed/ordered_product.cpp runs Eigen's matrix-product routine with
# blocks of its own, through that routine's 3.4 signature.

set(_batchrpc_embed_dir "${CMAKE_CURRENT_LIST_DIR}")

function(batchrpc_embed_library target core)
  if(NOT TARGET Eigen3::Eigen)
    find_package(Eigen3 3.4 CONFIG QUIET)
  endif()
  if(NOT TARGET Eigen3::Eigen)
    message(STATUS "batchrpc: Eigen3 not found: the embed plugin (${target}) is not built "
                   "(Debian: libeigen3-dev)")
    set(BATCHRPC_EMBED_FOUND FALSE PARENT_SCOPE)
    return()
  endif()
  set(BATCHRPC_EMBED_FOUND TRUE PARENT_SCOPE)
  if(TARGET ${target})
    return()
  endif()
  add_library(${target} STATIC
    "${_batchrpc_embed_dir}/embed/backend_checks.cpp"
    "${_batchrpc_embed_dir}/embed/hashing_model.cpp"
    "${_batchrpc_embed_dir}/embed/methods.cpp"
    "${_batchrpc_embed_dir}/embed/ordered_product.cpp"
    "${_batchrpc_embed_dir}/embed/params.cpp")
  # Consumers include "embed/methods.hpp", "embed/hashing_model.hpp", ...
  target_include_directories(${target} PUBLIC "${_batchrpc_embed_dir}")
  target_link_libraries(${target} PUBLIC ${core} PRIVATE Eigen3::Eigen batchrpc_dev_flags)
  target_compile_features(${target} PUBLIC cxx_std_20)
endfunction()
