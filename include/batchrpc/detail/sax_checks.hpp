// SPDX-License-Identifier: MIT
// What every SAX handler between RapidJSON's reader and a document checks as it reads: the
// depth limit, the batch cap, the parse budget, numbers within double range and strings whose
// escapes decode to valid UTF-8.
#pragma once

#include <cstddef>
#include <string_view>

#include "../config.hpp"
#include "../limits.hpp"
#include "document.hpp"
#include "json_number.hpp"
#include "utf8.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class SaxChecks {
 public:
  using Ch = char;

  // `escapes`: whether the message holds a backslash at all; without one no string needs the
  // escape check.
  SaxChecks(const Limits& limits, bool escapes, std::size_t size)
      : max_depth_(limits.max_depth), max_batch_(limits.max_batch),
        budget_(limits.parse_budget(size)), escapes_(escapes) {}

  ParseStatus status() const { return status_; }
  std::size_t budget() const { return budget_; }
  bool built() const { return status_ == ParseStatus::ok; }
  bool number_rejected() const { return number_rejected_; }
  bool escape_rejected() const { return escape_rejected_; }

 protected:
  // False once past the batch cap: from there on only syntax and depth are checked, so that
  // hostile input costs bounded work and memory.
  bool checking() const { return status_ == ParseStatus::ok; }

  bool enter() {
    if (++depth_ <= max_depth_) return true;
    status_ = ParseStatus::too_deep;
    return false;
  }

  // Counts one more batch member; false (and the batch refused) past the cap.
  bool admit_member() {
    if (++members_ <= max_batch_) return true;
    status_ = ParseStatus::batch_too_large;
    return false;
  }

  // The message's bytes are checked as UTF-8 before parsing, but an escape decodes to new
  // bytes: RapidJSON accepts a lone low surrogate (\udc00) and writes it as invalid UTF-8.
  bool valid_escapes(const char* text, std::size_t length) {
    if (!escapes_ || first_invalid_utf8(std::string_view(text, length)) == length) return true;
    escape_rejected_ = true;
    return false;
  }

  // The document's memory as RapidJSON lays it out, counted as it is built: every value is
  // pushed on the parse stack (16 bytes); a closed container moves its elements (16 bytes each,
  // 32 per object member) from the stack into the pool. The stack's buffer grows in steps of
  // half its size, so it is counted at 1.5 times its peak. Parsing stops as soon as the total
  // passes the budget, before RapidJSON allocates it.
  bool push_value() {
    stack_bytes_ += sizeof(rapidjson::Value);
    if (stack_bytes_ > stack_peak_) stack_peak_ = stack_bytes_;
    return affordable();
  }
  bool close_container(std::size_t count, bool object) {
    const std::size_t bytes = count * (object ? sizeof(rapidjson::Value::Member) : sizeof(rapidjson::Value));
    stack_bytes_ -= bytes;
    pool_bytes_ += bytes;
    return affordable();
  }

  bool number_fits(const char* text, std::size_t length) {
    if (number_in_range(text, length)) return true;
    number_rejected_ = true;
    return false;
  }

  template <class Handler>
  bool put(Handler& out, const char* text, std::size_t length) {
    return put_number(out, text, length, number_rejected_);
  }

  std::size_t depth_ = 0;  // arrays and objects open around the next event
  ParseStatus status_ = ParseStatus::ok;

 private:
  bool affordable() {
    if (pool_bytes_ + stack_peak_ + stack_peak_ / 2 <= budget_) return true;
    status_ = ParseStatus::too_costly;
    return false;
  }

  std::size_t max_depth_;
  std::size_t max_batch_;
  std::size_t budget_;
  std::size_t stack_bytes_ = 0;
  std::size_t stack_peak_ = 0;
  std::size_t pool_bytes_ = 0;
  std::size_t members_ = 0;
  bool escapes_;
  bool number_rejected_ = false;
  bool escape_rejected_ = false;
};

}  // namespace rpc::detail
