// SPDX-License-Identifier: MIT
// The one translation unit that compiles batchrpc's bodies, for a program built from the headers
// alone in compiled mode (link.src_header).
#include <batchrpc/src.hpp>
