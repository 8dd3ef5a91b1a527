// SPDX-License-Identifier: MIT
// The same definition of answer(), built header-only although the program links the compiled
// library (the mistake the link test makes on purpose).
#undef BATCHRPC_SEPARATE_COMPILATION
#include "answer.cpp"
