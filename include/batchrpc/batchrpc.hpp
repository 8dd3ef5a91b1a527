// SPDX-License-Identifier: MIT
/// @file batchrpc.hpp
/// Everything batchrpc offers, in one include.
#pragma once

#include "buffer.hpp"
#include "context.hpp"
#include "error.hpp"
#include "handler.hpp"
#include "json.hpp"
#include "json_traits.hpp"
#include "limits.hpp"
#include "names.hpp"
#include "params.hpp"
#include "result_writer.hpp"
#include "router.hpp"
#include "version.hpp"
