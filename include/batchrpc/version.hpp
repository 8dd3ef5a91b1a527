// SPDX-License-Identifier: MIT
/// @file version.hpp
/// The library version; CMake and the Conan recipe read it from here.
#pragma once

#define BATCHRPC_VERSION_MAJOR 0
#define BATCHRPC_VERSION_MINOR 1
#define BATCHRPC_VERSION_PATCH 0

namespace rpc {

/// The library version as "major.minor.patch".
inline constexpr const char* version_string = "0.1.0";

}  // namespace rpc
