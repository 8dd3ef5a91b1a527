// SPDX-License-Identifier: MIT
// Parses one message in place into a RapidJSON DOM, enforcing the limits while it reads.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include "../json.hpp"
#include "../limits.hpp"
#include "utf8.hpp"

namespace rpc::detail {

// Values and the document's parse stack both come from pools that are reset per message.
using Pool = rapidjson::MemoryPoolAllocator<>;
using Document = rapidjson::GenericDocument<rapidjson::UTF8<>, Pool, Pool>;

enum class ParseStatus : unsigned char { ok, syntax_error, too_deep, batch_too_large };

struct ParseOutcome {
  ParseStatus status = ParseStatus::ok;
  std::size_t offset = 0;        // where a syntax error was found
  const char* reason = nullptr;  // why (English), for syntax errors
};

// SAX handler between RapidJSON's reader and the document. Numbers arrive as text
// (kParseNumbersAsStringsFlag) so request ids can be echoed byte for byte; everything else is
// forwarded as is. It also stops at the depth limit and stops building (but keeps validating)
// once a batch has more members than allowed, so hostile input costs bounded memory.
class MessageBuilder {
 public:
  using Ch = char;

  MessageBuilder(Document& doc, std::vector<std::string_view>& raw_ids, const Limits& limits)
      : doc_(doc), raw_ids_(raw_ids), max_depth_(limits.max_depth), max_batch_(limits.max_batch) {}

  ParseStatus status() const { return status_; }
  bool number_rejected() const { return number_rejected_; }
  bool built() const { return status_ == ParseStatus::ok; }

  bool Null() { return note_value(), !building() || doc_.Null(); }
  bool Bool(bool b) { return note_value(), !building() || doc_.Bool(b); }
  // Not called with kParseNumbersAsStringsFlag; present to satisfy the Handler concept.
  bool Int(int i) { return note_value(), !building() || doc_.Int(i); }
  bool Uint(unsigned u) { return note_value(), !building() || doc_.Uint(u); }
  bool Int64(std::int64_t i) { return note_value(), !building() || doc_.Int64(i); }
  bool Uint64(std::uint64_t u) { return note_value(), !building() || doc_.Uint64(u); }
  bool Double(double d) { return note_value(), !building() || doc_.Double(d); }
  bool RawNumber(const char* text, rapidjson::SizeType length, bool) {
    const bool is_id = pending_id_;
    note_value();
    if (!building()) return true;
    if (is_id) raw_ids_.back() = std::string_view(text, length);
    return number(text, length);
  }
  // Past the batch cap only syntax and depth are checked, as for numbers.
  bool String(const char* text, rapidjson::SizeType length, bool copy) {
    note_value();
    if (!building()) return true;
    return valid_escapes(text, length) && doc_.String(text, length, copy);
  }
  bool Key(const char* text, rapidjson::SizeType length, bool copy) {
    pending_id_ = depth_ == request_depth() && length == 2 && text[0] == 'i' && text[1] == 'd';
    if (!building()) return true;
    return valid_escapes(text, length) && doc_.Key(text, length, copy);
  }
  bool escape_rejected() const { return escape_rejected_; }
  bool StartObject() {
    note_value();
    if (!enter()) return false;
    return !building() || doc_.StartObject();
  }
  bool EndObject(rapidjson::SizeType count) {
    --depth_;
    return !building() || doc_.EndObject(count);
  }
  bool StartArray() {
    if (depth_ == 0) {
      root_is_array_ = true;
    } else {
      note_value();
    }
    if (!enter()) return false;
    return !building() || doc_.StartArray();
  }
  bool EndArray(rapidjson::SizeType count) {
    --depth_;
    return !building() || doc_.EndArray(count);
  }

 private:
  std::size_t request_depth() const { return root_is_array_ ? 2 : 1; }
  bool building() const { return status_ == ParseStatus::ok; }

  bool enter() {
    if (++depth_ <= max_depth_) return true;
    status_ = ParseStatus::too_deep;
    return false;
  }

  // Before every value: counts batch members and gives each request a slot for its raw id.
  void note_value() {
    pending_id_ = false;
    if (depth_ == 0) {
      raw_ids_.emplace_back();
    } else if (depth_ == 1 && root_is_array_ && status_ == ParseStatus::ok) {
      if (++members_ > max_batch_) {
        status_ = ParseStatus::batch_too_large;
      } else {
        raw_ids_.emplace_back();
      }
    }
  }

  // JSON number text to a RapidJSON number: integers exactly when they fit 64 bits, otherwise
  // the correctly rounded double.
  bool number(const char* text, std::size_t length) {
    const char* end = text + length;
    bool integral = true;
    for (const char* p = text; p != end; ++p) {
      if (*p == '.' || *p == 'e' || *p == 'E') {
        integral = false;
        break;
      }
    }
    if (integral) {
      if (text[0] == '-') {
        std::int64_t i = 0;
        const auto r = std::from_chars(text, end, i);
        if (r.ec == std::errc{} && r.ptr == end) {
          return i >= std::numeric_limits<int>::min() ? doc_.Int(static_cast<int>(i)) : doc_.Int64(i);
        }
      } else {
        std::uint64_t u = 0;
        const auto r = std::from_chars(text, end, u);
        if (r.ec == std::errc{} && r.ptr == end) {
          return u <= std::numeric_limits<unsigned>::max() ? doc_.Uint(static_cast<unsigned>(u))
                                                           : doc_.Uint64(u);
        }
      }
    }
    double d = 0;
    const auto r = std::from_chars(text, end, d);
    if (r.ec == std::errc::result_out_of_range && underflows(text, end)) {
      return doc_.Double(text[0] == '-' ? -0.0 : 0.0);
    }
    if (r.ec != std::errc{} || r.ptr != end || !std::isfinite(d)) {
      number_rejected_ = true;  // beyond double range: reported as a parse error
      return false;
    }
    return doc_.Double(d);
  }

  // Out of range toward zero: with an exponent, a negative one; without, no integer digit
  // but 0 ("0.000...01"). ("0.79e309" is out of range the other way.)
  static bool underflows(const char* text, const char* end) {
    for (const char* p = text; p != end; ++p) {
      if (*p == 'e' || *p == 'E') return p + 1 != end && p[1] == '-';
    }
    const char* digits = text[0] == '-' ? text + 1 : text;
    return digits + 1 < end && digits[0] == '0' && digits[1] == '.';
  }

  // The message's bytes are checked as UTF-8 before parsing, but an escape decodes to new
  // bytes: RapidJSON accepts a lone low surrogate (\udc00) and writes it as invalid UTF-8.
  bool valid_escapes(const char* text, std::size_t length) {
    if (first_invalid_utf8(std::string_view(text, length)) == length) return true;
    escape_rejected_ = true;
    return false;
  }

  Document& doc_;
  std::vector<std::string_view>& raw_ids_;
  std::size_t max_depth_;
  std::size_t max_batch_;
  std::size_t depth_ = 0;
  std::size_t members_ = 0;
  ParseStatus status_ = ParseStatus::ok;
  bool root_is_array_ = false;
  bool pending_id_ = false;
  bool number_rejected_ = false;
  bool escape_rejected_ = false;
};

// Owns everything one parse needs and keeps it between messages, so that a warmed-up parser
// allocates nothing per message. Not thread-safe: one per thread (see Workspace).
class MessageParser {
 public:
  MessageParser() = default;  // memory is taken on the first parse, so idle parsers cost nothing
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  // Parses `text` (size bytes, text[size] == '\0') in place. On ok, root() and raw_id() are
  // valid until release().
  ParseOutcome parse(char* text, std::size_t size, const Limits& limits) {
    // UTF-8 is checked over the whole message first (ASCII eight bytes at a time), which is
    // much faster than RapidJSON's per-character check inside strings.
    if (const std::size_t bad = first_invalid_utf8(std::string_view(text, size)); bad != size) {
      return {ParseStatus::syntax_error, bad, "Invalid UTF-8."};
    }
    if (!doc_) make_pools(kInitialPoolBytes);
    raw_ids_.clear();
    rapidjson::InsituStringStream stream(text);
    MessageBuilder builder(*doc_, raw_ids_, limits);
    rapidjson::ParseResult result;
    // The builder stops the parse at max_depth, so a recursive parse never goes deeper than
    // that on the machine stack; past a depth a small thread stack could not take, parsing
    // is iterative (slower, but its depth costs heap only).
    auto generate = [&](Document&) {
      result = limits.max_depth <= kMaxRecursiveDepth ? reader_.Parse<kFlags>(stream, builder)
                                                      : reader_.Parse<kFlags | rapidjson::kParseIterativeFlag>(stream, builder);
      return !result.IsError() && builder.built();
    };
    doc_->Populate(generate);

    if (builder.status() == ParseStatus::too_deep) return {ParseStatus::too_deep};
    if (builder.escape_rejected()) {
      return {ParseStatus::syntax_error, result.Offset(), "Invalid UTF-8 from an escape (a lone surrogate)."};
    }
    if (builder.number_rejected()) {
      return {ParseStatus::syntax_error, result.Offset(), "Number too big to be stored in double."};
    }
    if (result.IsError()) {
      return {ParseStatus::syntax_error, result.Offset(), rapidjson::GetParseError_En(result.Code())};
    }
    // The stream reads a NUL byte as the end; a NUL inside the message is not JSON.
    if (stream.Tell() != size) {
      return {ParseStatus::syntax_error, stream.Tell(), "Unexpected NUL byte."};
    }
    if (builder.status() == ParseStatus::batch_too_large) return {ParseStatus::batch_too_large};
    return {};
  }

  const Value& root() const { return *doc_; }
  // The id's JSON text as sent when it is a number, for member `index` (0 for a singleton).
  std::string_view raw_id(std::size_t index) const {
    return index < raw_ids_.size() ? raw_ids_[index] : std::string_view{};
  }

  // Drops the parsed message; memory is kept for the next one (up to a bound).
  void release() {
    if (!doc_) return;
    doc_->SetNull();
    const std::size_t used = value_pool_->Capacity() + stack_pool_->Capacity();
    if (used > pool_bytes_ && used <= kMaxRetainedPoolBytes) {
      make_pools(used);  // grow the reusable buffer to what this message needed
    } else {
      value_pool_->Clear();
      stack_pool_->Clear();
    }
    if (raw_ids_.capacity() > kMaxRetainedIds) std::vector<std::string_view>().swap(raw_ids_);
  }

 private:
  static constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag;
  static constexpr std::size_t kMaxRecursiveDepth = 256;
  static constexpr std::size_t kInitialPoolBytes = std::size_t{64} << 10;
  static constexpr std::size_t kMaxRetainedPoolBytes = std::size_t{8} << 20;
  static constexpr std::size_t kMaxRetainedIds = std::size_t{1} << 16;

  void make_pools(std::size_t bytes) {
    doc_.reset();
    value_pool_.reset();
    stack_pool_.reset();
    // Both pools start on a max_align_t boundary: RapidJSON puts its chunk header there.
    constexpr std::size_t align = alignof(std::max_align_t);
    const auto round_up = [](std::size_t n) { return (n + align - 1) / align * align; };
    bytes = round_up(bytes);
    pool_bytes_ = bytes;
    const std::size_t stack_bytes = round_up(bytes / 4);  // the parse stack holds one level's values
    buffer_ = std::make_unique<std::max_align_t[]>(bytes / sizeof(std::max_align_t) + 1);
    char* base = reinterpret_cast<char*>(buffer_.get());
    value_pool_.emplace(base, bytes - stack_bytes);
    stack_pool_.emplace(base + (bytes - stack_bytes), stack_bytes);
    doc_.emplace(&*value_pool_, kStackCapacity, &*stack_pool_);
  }

  static constexpr std::size_t kStackCapacity = 4096;

  std::unique_ptr<std::max_align_t[]> buffer_;
  std::size_t pool_bytes_ = 0;
  std::optional<Pool> value_pool_;
  std::optional<Pool> stack_pool_;
  std::optional<Document> doc_;
  rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>> reader_;
  std::vector<std::string_view> raw_ids_;
};

}  // namespace rpc::detail
