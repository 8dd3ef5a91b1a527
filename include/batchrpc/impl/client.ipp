// SPDX-License-Identifier: MIT
// Non-template bodies of client.hpp: writing the message, parsing and matching the reply.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/encodings.h>
#include <rapidjson/reader.h>
#include <rapidjson/stream.h>

#include "../client.hpp"
#include "../config.hpp"
#include "../detail/error_object.hpp"
#include "../detail/member_names.hpp"
#include "../detail/message_parser.hpp"
#include "../detail/params_text.hpp"
#include "../detail/request.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

// The reply, parsed in place: strings in `doc` and the number ids in `raw_ids` are views into
// `text`, so the three live and move together (behind a shared_ptr, which keeps addresses).
struct ReplyDocument {
  std::string text;
  Document doc;
  std::vector<std::string_view> raw_ids;
};

// JSON whitespace (RFC 8259 §2); Json::parse keeps any that surrounds the value.
// Checks one element of a reply against JSON-RPC 2.0 §5; nullptr when it is a valid Response,
// else why not (in the words the router uses for requests).
inline const char* check_response(const Value& v, std::vector<std::string_view>& scratch) {
  if (!v.IsObject()) return "a response must be an object";
  if (has_duplicate_names(v, scratch)) return "member names must be unique";
  const auto version = v.FindMember("jsonrpc");
  if (version == v.MemberEnd()) return "missing \"jsonrpc\"";
  if (!version->value.IsString() || name_of(version->value) != "2.0") {
    return "\"jsonrpc\" must be exactly \"2.0\"";
  }
  const auto id = v.FindMember("id");
  if (id == v.MemberEnd()) return "missing \"id\"";
  if (!id->value.IsString() && !id->value.IsNumber() && !id->value.IsNull()) {
    return "\"id\" must be a string, a number or null";
  }
  const bool has_result = v.HasMember("result");
  const auto error = v.FindMember("error");
  const bool has_error = error != v.MemberEnd();
  if (has_result && has_error) return "a response must not have both \"result\" and \"error\"";
  if (!has_result && !has_error) return "missing \"result\" or \"error\"";
  if (has_error) {
    const Value& e = error->value;
    if (!e.IsObject()) return "\"error\" must be an object";
    if (has_duplicate_names(e, scratch)) return "member names must be unique in \"error\"";
    const auto code = e.FindMember("code");
    if (code == e.MemberEnd() || !code->value.IsInt()) return "\"error.code\" must be an integer";
    const auto message = e.FindMember("message");
    if (message == e.MemberEnd() || !message->value.IsString()) {
      return "\"error.message\" must be a string";
    }
  }
  return nullptr;
}

// The error object of a valid error response, as the exception a caller would have thrown.
inline Error error_of(const Value& response) { return error_from_object(response["error"]); }

// An id as JSON text: numbers exactly as received, strings re-escaped.
inline std::string id_text(const Value& id, std::string_view raw_number) {
  if (id.IsNumber()) return std::string(raw_number);
  if (id.IsNull()) return "null";
  return std::string(to_json(id).text());
}

}  // namespace detail

BATCHRPC_DECL void BatchBuilder::add(std::string_view method, Json params, std::int64_t id) {
  const std::string_view structured = detail::checked_params(method, params);
  if (structured.size() != params.text().size()) params = Json::trusted(std::string(structured));
  items_.push_back(Item{std::string(method), std::move(params), id});
}

BATCHRPC_DECL std::int64_t BatchBuilder::call(std::string_view method, Json params) {
  const std::int64_t id = first_id_ + requests_;
  add(method, std::move(params), id);
  ++requests_;
  return id;
}

BATCHRPC_DECL void BatchBuilder::notify(std::string_view method, Json params) {
  add(method, std::move(params), 0);
}

BATCHRPC_DECL std::string BatchBuilder::text() const {
  if (items_.empty()) {
    throw std::logic_error("batchrpc: an empty BatchBuilder has no message (an empty batch is "
                           "invalid, JSON-RPC 2.0 section 6)");
  }
  Buffer buffer;
  ResultWriter w(buffer);
  const bool batch = is_batch();
  if (batch) w.start_array();
  for (const Item& item : items_) {
    w.start_object();
    w.key("jsonrpc");
    w.string("2.0");
    w.key("method");
    w.string(item.method);
    if (!item.params.empty()) {
      w.key("params");
      w.raw(item.params);
    }
    if (item.id != 0) {
      w.key("id");
      w.integer(item.id);
    }
    w.end_object();
  }
  if (batch) w.end_array();
  return buffer.str();
}

BATCHRPC_DECL const Value& Replies::result_value(std::int64_t id) const {
  const detail::Outcome* o = outcome(id);
  if (o == nullptr) {
    throw std::invalid_argument("batchrpc: id " + std::to_string(id) +
                                " is not a request of this batch");
  }
  if (o->error) throw *o->error;
  if (o->result == nullptr) {
    std::string why = "batchrpc: no response for id " + std::to_string(id);
    if (message_error_) {
      why += " (the server rejected the whole message: " + std::to_string(message_error_->code()) +
             " " + std::string(message_error_->message()) + ")";
    }
    throw std::invalid_argument(why);
  }
  return *o->result;
}

BATCHRPC_DECL Json Replies::result_json(std::int64_t id) const { return result<Json>(id); }

BATCHRPC_DECL Replies correlate(const BatchBuilder& batch, std::optional<std::string_view> reply,
                                const Limits& limits) {
  Replies out;
  out.first_id_ = batch.first_id();
  out.outcomes_.resize(static_cast<std::size_t>(batch.requests()));

  // Ids are matched by integer value; anything else with a valid shape is unexpected.
  const auto match = [&](const Value& response, std::string_view raw_id) {
    const Value& id = response["id"];
    if (id.IsInt64() && id.GetInt64() >= batch.first_id() &&
        id.GetInt64() - batch.first_id() < batch.requests()) {
      detail::Outcome& o = out.outcomes_[static_cast<std::size_t>(id.GetInt64() - batch.first_id())];
      if (++o.responses == 2) out.duplicate_.push_back(id.GetInt64());
      if (o.responses > 1) return;
      const auto result = response.FindMember("result");
      if (result != response.MemberEnd()) {
        o.result = &result->value;
      } else {
        o.error.emplace(detail::error_of(response));
      }
    } else {
      out.unexpected_.push_back(detail::id_text(id, raw_id));
    }
  };

  const auto parse = [&](std::string_view text) -> const Value* {
    if (text.size() > limits.max_message_bytes) {
      out.problems_.push_back("the reply is larger than max_message_bytes (" +
                              std::to_string(limits.max_message_bytes) + ")");
      return nullptr;
    }
    auto doc = std::make_shared<detail::ReplyDocument>();
    doc->text.assign(text);
    // In place: strings and raw number ids are views into doc->text, which it NUL-terminates.
    constexpr unsigned flags = rapidjson::kParseInsituFlag | rapidjson::kParseIterativeFlag |
                               rapidjson::kParseValidateEncodingFlag |
                               rapidjson::kParseNumbersAsStringsFlag;
    Limits bounds = limits;
    bounds.max_batch = Limits::unlimited;        // a long reply is matched, not refused
    bounds.max_parse_ratio = Limits::unlimited;  // and costs what the calls asked for
    rapidjson::InsituStringStream stream(doc->text.data());
    detail::MessageBuilder builder(doc->doc, &doc->raw_ids, bounds, text.size());
    rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>> reader;
    rapidjson::ParseResult result;
    auto generate = [&](detail::Document&) {
      result = reader.Parse<flags>(stream, builder);
      return !result.IsError() && builder.built();
    };
    doc->doc.Populate(generate);
    const auto not_json = [&](std::size_t offset, const char* reason) {
      out.problems_.push_back("the reply is not JSON: " + std::string(reason) + " (offset " +
                              std::to_string(offset) + ")");
      return nullptr;
    };
    if (builder.status() == detail::ParseStatus::too_deep) {
      out.problems_.push_back("the reply nests deeper than max_depth (" +
                              std::to_string(limits.max_depth) + ")");
      return nullptr;
    }
    if (builder.number_rejected()) {
      return not_json(result.Offset(), "Number too big to be stored in double.");
    }
    if (result.IsError()) {
      return not_json(result.Offset(), rapidjson::GetParseError_En(result.Code()));
    }
    if (stream.Tell() != text.size()) return not_json(stream.Tell(), "Unexpected NUL byte.");
    out.document_ = doc;
    return &doc->doc;
  };

  const Value* root = reply ? parse(*reply) : nullptr;
  std::vector<std::string_view> scratch;
  const auto raw_id = [&](std::size_t index) {
    const auto& ids = out.document_->raw_ids;
    return index < ids.size() ? ids[index] : std::string_view{};
  };
  if (root == nullptr) {
    // Nothing came, or nothing readable: every id is missing (problems_ says why, if anything).
  } else if (root->IsArray()) {
    if (root->Empty()) out.problems_.emplace_back("the reply is an empty array");
    if (!root->Empty() && !batch.is_batch()) {
      out.problems_.emplace_back("the reply is an array, but the message was a single request");
    }
    for (rapidjson::SizeType i = 0; i < root->Size(); ++i) {
      const Value& response = (*root)[i];
      if (const char* why = detail::check_response(response, scratch)) {
        out.problems_.push_back("reply[" + std::to_string(i) + "]: " + why);
      } else {
        match(response, raw_id(i));
      }
    }
  } else if (const char* why = detail::check_response(*root, scratch)) {
    out.problems_.push_back(std::string("reply: ") + why);
  } else if ((*root)["id"].IsNull() && root->HasMember("error")) {
    out.message_error_.emplace(detail::error_of(*root));  // §5: the id could not be determined
  } else {
    if (batch.is_batch()) {
      out.problems_.emplace_back("the reply is a single response, but the message was a batch");
    }
    match(*root, raw_id(0));
  }

  for (std::size_t i = 0; i < out.outcomes_.size(); ++i) {
    if (out.outcomes_[i].responses == 0) {
      out.missing_.push_back(batch.first_id() + static_cast<std::int64_t>(i));
    }
  }
  std::sort(out.duplicate_.begin(), out.duplicate_.end());
  return out;
}

BATCHRPC_DECL Replies detail::failed_replies(const BatchBuilder& batch, std::string problem) {
  Replies out = correlate(batch, std::nullopt);
  out.problems_.push_back(std::move(problem));
  return out;
}

}  // namespace rpc
