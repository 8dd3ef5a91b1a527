// SPDX-License-Identifier: MIT
// Writes response objects (JSON-RPC 2.0 §5) straight into the reply buffer.
#pragma once

#include <charconv>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "../buffer.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../error.hpp"
#include "../result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// The last resort when memory runs out: a fixed reply that needs no allocation to build.
inline constexpr std::string_view out_of_memory_reply =
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}})";
// Writes it into `out`; false when not even that fits in memory.
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

// Writes the id as the client sent it: numbers byte for byte, strings re-escaped.
inline void write_id(Buffer& out, ResultWriter& w, const RequestId& id) {
  switch (id.kind) {
    case RequestId::Kind::number:
      out.append(id.text);
      return;
    case RequestId::Kind::string:
      WriterAccess::reset(w, out);
      w.string(id.text);  // decoded from validated UTF-8, so it cannot fail
      return;
    case RequestId::Kind::none:
    case RequestId::Kind::null:
      out.append("null");
      return;
  }
}

// `{"jsonrpc":"2.0","id":<id>,"result":` — the handler's value and `}` follow.
inline void begin_result(Buffer& out, ResultWriter& w, const RequestId& id) {
  out.append(R"({"jsonrpc":"2.0","id":)");
  write_id(out, w, id);
  out.append(R"(,"result":)");
}

inline void append_int(Buffer& out, long long value) {
  char text[24];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  out.append(std::string_view(text, static_cast<std::size_t>(end - text)));
}

struct NoData {
  void operator()(ResultWriter&) const {}
};

// The data writer of an error response, without its type: one body of write_error serves
// every kind of data (each template instance of it was ~1 KB of code in every user's file).
class DataWriterRef {
 public:
  template <class DataWriter>
  explicit DataWriterRef(DataWriter& data)
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(data)))),
        write_([](void* object, ResultWriter& w) { (*static_cast<DataWriter*>(object))(w); }) {}
  void operator()(ResultWriter& w) const { write_(object_, w); }

 private:
  void* object_;  // the caller's writer, alive for the call that was given this
  void (*write_)(void*, ResultWriter&);
};

// A complete error response. `data(w)` writes the data value, or nothing to omit it. If the
// message or data cannot be written (invalid UTF-8, a throwing data writer), the error is sent
// with the standard message for its code and no data rather than not at all.
inline void write_error_with(Buffer& out, ResultWriter& w, const RequestId& id, int code,
                             std::string_view message, DataWriterRef data) {
  const std::size_t start = out.size();
  const auto head = [&] {
    out.append(R"({"jsonrpc":"2.0","id":)");
    write_id(out, w, id);
    out.append(R"(,"error":{"code":)");
    append_int(out, code);
    out.append(R"(,"message":)");
  };
  head();
  try {
    WriterAccess::reset(w, out);
    w.string(message);
    const std::size_t before_data = out.size();
    out.append(R"(,"data":)");
    WriterAccess::reset(w, out);
    data(w);
    if (w.empty()) {
      out.truncate(before_data);
    } else if (!w.complete()) {
      throw std::logic_error("batchrpc: incomplete error data");
    }
  } catch (...) {
    out.truncate(start);
    head();
    out.append("\"");
    out.append(default_message(static_cast<ErrorCode>(code)));
    out.append("\"");
  }
  out.append("}}");
}

template <class DataWriter = NoData>
void write_error(Buffer& out, ResultWriter& w, const RequestId& id, int code,
                 std::string_view message, DataWriter&& data = {}) {
  write_error_with(out, w, id, code, message, DataWriterRef(data));
}

template <class DataWriter = NoData>
void write_error(Buffer& out, ResultWriter& w, const RequestId& id, ErrorCode code,
                 DataWriter&& data = {}) {
  write_error_with(out, w, id, static_cast<int>(code), default_message(code), DataWriterRef(data));
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

// The id of a response to something that is not a valid request (JSON-RPC 2.0 §5).
inline constexpr RequestId null_id{RequestId::Kind::null, {}};

}  // namespace rpc::detail
