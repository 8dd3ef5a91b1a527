// SPDX-License-Identifier: MIT
// The compiled variant (batchrpc::compiled): every non-template body, built once (define
// BATCHRPC_SEPARATE_COMPILATION in every translation unit that uses the library).
#include "batchrpc/src.hpp"
