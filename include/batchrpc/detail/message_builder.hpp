// SPDX-License-Identifier: MIT
// A SAX handler that builds any JSON message into a document, with the checks of SaxChecks.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <rapidjson/reader.h>

#include "../config.hpp"
#include "sax_checks.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Numbers arrive as text (kParseNumbersAsStringsFlag); when `raw_ids` is given, the text of
// each top-level object's (or each batch member's) numeric "id" is kept in it, one slot per
// member, so ids can be echoed byte for byte. Past the batch cap nothing more is built.
class MessageBuilder : public SaxChecks {
 public:
  // `size`: the message's length, which sets its parse budget.
  MessageBuilder(Document& doc, std::vector<std::string_view>* raw_ids, const Limits& limits,
                 std::size_t size, bool escapes = true)
      : SaxChecks(limits, escapes, size), doc_(doc), raw_ids_(raw_ids) {}

  bool Null() {
    note_value();
    return !checking() || (push_value() && doc_.Null());
  }
  bool Bool(bool b) {
    note_value();
    return !checking() || (push_value() && doc_.Bool(b));
  }
  // Not called with kParseNumbersAsStringsFlag; present to satisfy the Handler concept.
  bool Int(int i) {
    note_value();
    return !checking() || (push_value() && doc_.Int(i));
  }
  bool Uint(unsigned u) {
    note_value();
    return !checking() || (push_value() && doc_.Uint(u));
  }
  bool Int64(std::int64_t i) {
    note_value();
    return !checking() || (push_value() && doc_.Int64(i));
  }
  bool Uint64(std::uint64_t u) {
    note_value();
    return !checking() || (push_value() && doc_.Uint64(u));
  }
  bool Double(double d) {
    note_value();
    return !checking() || (push_value() && doc_.Double(d));
  }
  bool RawNumber(const char* text, rapidjson::SizeType length, bool) {
    const bool is_id = pending_id_;
    note_value();
    if (!checking()) return true;
    if (is_id && raw_ids_ != nullptr) raw_ids_->back() = std::string_view(text, length);
    return push_value() && put(doc_, text, length);
  }
  bool String(const char* text, rapidjson::SizeType length, bool copy) {
    note_value();
    return !checking() || (valid_escapes(text, length) && push_value() && doc_.String(text, length, copy));
  }
  bool Key(const char* text, rapidjson::SizeType length, bool copy) {
    pending_id_ = depth_ == request_depth() && length == 2 && text[0] == 'i' && text[1] == 'd';
    return !checking() || (valid_escapes(text, length) && push_value() && doc_.Key(text, length, copy));
  }
  bool StartObject() {
    note_value();
    if (!enter()) return false;
    return !checking() || (push_value() && doc_.StartObject());
  }
  bool EndObject(rapidjson::SizeType count) {
    --depth_;
    return !checking() || (close_container(count, true) && doc_.EndObject(count));
  }
  bool StartArray() {
    if (depth_ == 0) {
      root_is_array_ = true;
    } else {
      note_value();
    }
    if (!enter()) return false;
    return !checking() || (push_value() && doc_.StartArray());
  }
  bool EndArray(rapidjson::SizeType count) {
    --depth_;
    return !checking() || (close_container(count, false) && doc_.EndArray(count));
  }

 private:
  std::size_t request_depth() const { return root_is_array_ ? 2 : 1; }

  // Before every value: counts batch members and gives each one a slot for its raw id.
  void note_value() {
    pending_id_ = false;
    const bool member = depth_ == 0 || (depth_ == 1 && root_is_array_ && checking() && admit_member());
    if (member && raw_ids_ != nullptr) raw_ids_->emplace_back();
  }

  Document& doc_;
  std::vector<std::string_view>* raw_ids_;  // nullptr: ids are not kept
  bool root_is_array_ = false;
  bool pending_id_ = false;
};

}  // namespace rpc::detail
