// SPDX-License-Identifier: MIT
// Non-template bodies of router.hpp: the message pipeline (parse, classify, dispatch, write).
#pragma once

#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "../detail/message_parser.hpp"
#include "../detail/reply.hpp"
#include "../detail/request.hpp"
#include "../detail/workspace.hpp"
#include "../router.hpp"

namespace rpc {

namespace detail {

BATCHRPC_DECL Workspace& thread_workspace() {
  thread_local Workspace workspace;
  return workspace;
}

// `{"max": N}` as error data.
struct MaxData {
  std::size_t max;
  void operator()(ResultWriter& w) const {
    w.start_object();
    w.key("max");
    w.unsigned_integer(max);
    w.end_object();
  }
};

// `{"reason": "..."}` as error data.
struct ReasonData {
  std::string_view reason;
  void operator()(ResultWriter& w) const {
    w.start_object();
    w.key("reason");
    w.string(reason);
    w.end_object();
  }
};

}  // namespace detail

BATCHRPC_DECL void Router::add_handler(std::string_view name,
                                       std::unique_ptr<detail::Handler> handler) {
  if (name.empty()) throw std::invalid_argument("batchrpc: a method name cannot be empty");
  if (name.substr(0, 4) == "rpc.") {
    throw std::invalid_argument("batchrpc: method names starting with \"rpc.\" are reserved: " +
                                std::string(name));
  }
  if (!methods_.emplace(std::string(name), std::move(handler)).second) {
    throw std::invalid_argument("batchrpc: method already registered: " + std::string(name));
  }
}

namespace detail {
// The last resort when memory runs out: a fixed reply that needs no allocation to build.
inline constexpr std::string_view out_of_memory_reply =
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}})";

inline bool write_out_of_memory(Buffer& out) noexcept {
  try {
    out.clear();
    out.append(out_of_memory_reply);
    return true;
  } catch (...) {
    out.clear();
    return false;
  }
}
}  // namespace detail

BATCHRPC_DECL std::optional<std::string> Router::handle(std::string_view message) const {
  try {
    detail::WorkspaceLease ws;
    if (!handle_copy(message, *ws, ws->output)) return std::nullopt;
    return ws->output.str();
  } catch (...) {
    return std::string(detail::out_of_memory_reply);
  }
}

BATCHRPC_DECL bool Router::handle(std::string_view message, Buffer& reply) const {
  try {
    detail::WorkspaceLease ws;
    return handle_copy(message, *ws, reply);
  } catch (...) {
    return detail::write_out_of_memory(reply);
  }
}

BATCHRPC_DECL bool Router::handle_copy(std::string_view message, detail::Workspace& ws,
                                       Buffer& out) const {
  if (message.size() > options_.limits.max_message_bytes) {  // refuse before copying it
    return handle_safely(nullptr, message.size(), ws, out);
  }
  ws.input.assign(message.data(), message.size());  // in-situ parsing needs a mutable copy
  return handle_safely(ws.input.data(), message.size(), ws, out);
}

BATCHRPC_DECL bool Router::handle_insitu(std::string& message, Buffer& reply) const {
  try {
    detail::WorkspaceLease ws;
    return handle_safely(message.data(), message.size(), *ws, reply);
  } catch (...) {
    return detail::write_out_of_memory(reply);
  }
}

BATCHRPC_DECL bool Router::handle_insitu(std::span<char> message, Buffer& reply) const {
  if (message.empty() || message.back() != '\0') {
    throw std::invalid_argument("batchrpc: handle_insitu needs the message followed by a NUL byte");
  }
  try {
    detail::WorkspaceLease ws;
    return handle_safely(message.data(), message.size() - 1, *ws, reply);
  } catch (...) {
    return detail::write_out_of_memory(reply);
  }
}

BATCHRPC_DECL bool Router::handle_safely(char* text, std::size_t size, detail::Workspace& ws,
                                         Buffer& out) const noexcept {
  try {
    const bool has_reply = process(text, size, ws, out);
    ws.parser.release();
    return has_reply;
  } catch (...) {  // only allocation failure gets here: handler exceptions are caught per call
    ws.parser.release();
    return detail::write_out_of_memory(out);
  }
}

BATCHRPC_DECL bool Router::process(char* text, std::size_t size, detail::Workspace& ws,
                                   Buffer& out) const {
  using detail::null_id;
  out.clear();
  const Limits& limits = options_.limits;
  if (size > limits.max_message_bytes) {
    detail::write_error(out, ws.writer, null_id, ErrorCode::message_too_large,
                        detail::MaxData{limits.max_message_bytes});
    return true;
  }

  const detail::ParseOutcome parsed = ws.parser.parse(text, size, limits);
  switch (parsed.status) {
    case detail::ParseStatus::ok:
      break;
    case detail::ParseStatus::syntax_error:
      detail::write_error(out, ws.writer, null_id, ErrorCode::parse_error, [&](ResultWriter& w) {
        w.start_object();
        w.key("offset");
        w.unsigned_integer(parsed.offset);
        w.key("reason");
        w.string(parsed.reason);
        w.end_object();
      });
      return true;
    case detail::ParseStatus::too_deep:
      detail::write_error(out, ws.writer, null_id, ErrorCode::nesting_too_deep,
                          detail::MaxData{limits.max_depth});
      return true;
    case detail::ParseStatus::batch_too_large:
      detail::write_error(out, ws.writer, null_id, static_cast<int>(ErrorCode::invalid_params),
                          "Batch too large", detail::MaxData{limits.max_batch});
      return true;
  }

  const Value& root = ws.parser.root();
  if (!root.IsArray()) return dispatch(root, ws.parser.raw_id(0), ws, out);

  if (root.Empty()) {  // JSON-RPC 2.0 §6: an empty array is one Invalid Request, not an array
    detail::write_error(out, ws.writer, null_id, ErrorCode::invalid_request,
                        detail::ReasonData{"empty batch"});
    return true;
  }
  out.append('[');
  bool any = false;
  for (rapidjson::SizeType i = 0; i < root.Size(); ++i) {
    const std::size_t mark = out.size();
    if (any) out.append(',');
    if (dispatch(root[i], ws.parser.raw_id(i), ws, out)) {
      any = true;
    } else {
      out.truncate(mark);
    }
  }
  if (!any) {  // only notifications: nothing at all is sent
    out.clear();
    return false;
  }
  out.append(']');
  return true;
}

BATCHRPC_DECL bool Router::dispatch(const Value& message, std::string_view raw_id,
                                    detail::Workspace& ws, Buffer& out) const {
  detail::Request request;
  if (const char* why = detail::read_request(message, raw_id, request, ws.names)) {
    detail::write_error(out, ws.writer, detail::null_id, ErrorCode::invalid_request,
                        detail::ReasonData{why});
    return true;
  }
  const auto found = methods_.find(request.method);
  if (found == methods_.end()) {
    if (request.id.is_notification()) return false;
    detail::write_error(out, ws.writer, request.id, ErrorCode::method_not_found);
    return true;
  }
  return invoke(*found->second, request, ws, out);
}

BATCHRPC_DECL bool Router::invoke(const detail::Handler& handler, const detail::Request& request,
                                  detail::Workspace& ws, Buffer& out) const {
  const std::size_t start = out.size();
  const bool notification = request.id.is_notification();
  ResultWriter& w = ws.writer;
  if (!notification) detail::begin_result(out, w, request.id);
  detail::WriterAccess::reset(w, out);

  Context ctx(request.method, request.id);
  detail::ParamError param_error;
  detail::InvokeStatus status = detail::InvokeStatus::ok;
  std::optional<Error> user_error;
  std::exception_ptr unexpected;
  try {
    status = handler.invoke(Params(request.params), ctx, w, param_error);
    if (status == detail::InvokeStatus::ok) {
      if (w.empty()) {
        w.null();
      } else if (!w.complete()) {
        throw std::logic_error("batchrpc: the handler left its result incomplete");
      }
    }
  } catch (const Error& e) {
    user_error.emplace(e);
  } catch (...) {
    unexpected = std::current_exception();
  }

  if (unexpected && options_.on_exception) {
    try {
      options_.on_exception(request.method, unexpected);
    } catch (...) {  // a logging hook must not take the server down
    }
  }
  if (notification) {  // JSON-RPC 2.0 §4.1: never answered, not even with an error
    out.truncate(start);
    return false;
  }

  if (!user_error && !unexpected && status == detail::InvokeStatus::ok) {
    out.append('}');
    if (out.size() <= options_.limits.max_response_bytes) return true;
    out.truncate(start);
    detail::write_error(out, w, request.id, ErrorCode::response_too_large,
                        detail::MaxData{options_.limits.max_response_bytes});
    return true;
  }

  out.truncate(start);
  if (user_error) {
    detail::write_error(out, w, request.id, user_error->code(), user_error->message(),
                        [&](ResultWriter& dw) {
                          if (!user_error->data().empty()) dw.raw(user_error->data());
                        });
  } else if (unexpected) {
    detail::write_error(out, w, request.id, ErrorCode::internal_error, [&](ResultWriter& dw) {
      if (!options_.expose_exception_text) return;
      dw.start_object();
      dw.key("exception");
      try {
        std::rethrow_exception(unexpected);
      } catch (const std::exception& e) {
        dw.string(e.what());
      } catch (...) {
        dw.string("unknown exception");
      }
      dw.end_object();
    });
  } else {
    detail::write_error(out, w, request.id, ErrorCode::invalid_params, [&](ResultWriter& dw) {
      dw.start_object();
      if (!param_error.name.empty()) {
        dw.key("param");
        dw.string(param_error.name);
      } else if (param_error.index >= 0) {
        dw.key("param");
        dw.integer(param_error.index);
      }
      dw.key("reason");
      dw.string(param_error.reason);
      dw.end_object();
    });
  }
  return true;
}

}  // namespace rpc
