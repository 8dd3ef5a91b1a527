// SPDX-License-Identifier: MIT
/// @file batchrpc.hpp
/// Everything batchrpc offers, in one include.
#pragma once

#include "batch_call.hpp"
#include "buffer.hpp"
#include "builtins.hpp"
#include "client.hpp"
#include "context.hpp"
#include "error.hpp"
#include "executor.hpp"
#include "handler.hpp"
#include "json.hpp"
#include "json_traits.hpp"
#include "limits.hpp"
#include "log.hpp"
#include "method_options.hpp"
#include "names.hpp"
#include "params.hpp"
#include "peer.hpp"
#include "progress.hpp"
#include "responder.hpp"
#include "result_writer.hpp"
#include "router.hpp"
#include "session.hpp"
#include "stream.hpp"
#include "tools.hpp"
#include "version.hpp"
