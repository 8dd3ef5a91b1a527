// SPDX-License-Identifier: MIT
// Parses one message in place, enforcing the limits while it reads: as a list of requests
// (the server's path) or into a plain RapidJSON DOM (any other JSON).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include "../config.hpp"
#include "../json.hpp"
#include "../limits.hpp"
#include "insitu_stream.hpp"
#include "message_builder.hpp"
#include "request_reader.hpp"
#include "utf8.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Owns everything one parse needs and keeps it between messages, so that a warmed-up parser
// allocates nothing per message. Not thread-safe: one per thread (see Workspace).
class MessageParser {
 public:
  // Memory is taken on the first parse, so idle parsers cost nothing. Up to `retain` bytes of
  // pool are kept between messages (more only while a message needs them).
  explicit MessageParser(std::size_t retain = kMaxRetainedPoolBytes) : retain_(retain) {}
  MessageParser(const MessageParser&) = delete;
  MessageParser& operator=(const MessageParser&) = delete;

  // Parses `text` (size bytes, text[size] == '\0') in place as a message of requests. On ok,
  // is_batch() and requests() are valid until release().
  ParseOutcome parse_requests(char* text, std::size_t size, const Limits& limits) {
    requests_.clear();
    ParseOutcome outcome = run<RequestReader>(text, size, limits, requests_, names_);
    if (outcome.status != ParseStatus::ok) return outcome;
    const Value& params = *doc_;
    for (ParsedRequest& p : requests_) {
      if (p.params_index != ParsedRequest::no_params) p.request.params = &params[p.params_index];
      if (p.answer_index != ParsedRequest::no_params) p.answer = &params[p.answer_index];
    }
    return outcome;
  }

  // Parses `text` (size bytes, text[size] == '\0') in place into a document. On ok, root() is
  // valid until release().
  ParseOutcome parse(char* text, std::size_t size, const Limits& limits) {
    return run<MessageBuilder>(text, size, limits, nullptr);
  }

  // After parse_requests: whether the message is a batch, and its members.
  bool is_batch() const { return batch_; }
  std::span<const ParsedRequest> requests() const { return requests_; }

  const Value& root() const { return *doc_; }

  // Drops the parsed message; memory is kept for the next one (up to a bound).
  void release() {
    if (!doc_) return;
    doc_->SetNull();
    const std::size_t used = value_pool_->Capacity();
    if (used > pool_bytes_ && used <= retain_) {
      make_pools(used);  // grow the reusable buffer to what this message needed
    } else {
      value_pool_->Clear();
    }
    stack_.trim(retain_ / 4);
    if (requests_.capacity() > kMaxRetainedIds) std::vector<ParsedRequest>().swap(requests_);
    if (names_.capacity() > kMaxRetainedIds) std::vector<std::string_view>().swap(names_);
  }

 private:
  template <class Builder, class... Out>
  ParseOutcome run(char* text, std::size_t size, const Limits& limits, Out&&... out) {
    // UTF-8 is checked over the whole message first (ASCII eight bytes at a time), which is
    // much faster than RapidJSON's per-character check inside strings.
    if (const std::size_t bad = first_invalid_utf8(std::string_view(text, size)); bad != size) {
      return {ParseStatus::syntax_error, bad, "Invalid UTF-8."};
    }
    if (!doc_) make_pools(kInitialPoolBytes);
    // Without a backslash nothing needs unescaping, and strings are read where they lie.
    const bool escapes = std::memchr(text, '\\', size) != nullptr;
    Builder builder(*doc_, out..., limits, size, escapes);
    // The builder stops the parse at max_depth, so a recursive parse never goes deeper than
    // that on the machine stack; past a depth a small thread stack could not take, parsing
    // is iterative (slower, but its depth costs heap only). That rare case always reads
    // through the decoding stream, which is right with or without escapes, so that only
    // three instances of RapidJSON's parser are compiled, not four.
    if (limits.max_depth > kMaxRecursiveDepth) {
      return read<kFlags | rapidjson::kParseIterativeFlag>(InsituStream<true>(text), text, size, builder);
    }
    if (escapes) return read<kFlags>(InsituStream<true>(text), text, size, builder);
    return read<kFlags>(InsituStream<false>(text), text, size, builder);
  }

  template <unsigned kParseFlags, class Stream, class Builder>
  ParseOutcome read(Stream stream, const char* text, std::size_t size, Builder& builder) {
    rapidjson::ParseResult result;
    auto generate = [&](Document& doc) {
      constexpr bool kRequests = std::is_same_v<Builder, RequestReader>;
      if constexpr (kRequests) doc.StartArray();  // the root holds the params values
      result = reader_.Parse<kParseFlags>(stream, builder);
      if (result.IsError() || !builder.built()) return false;
      if constexpr (kRequests) {
        batch_ = builder.is_batch();
        if (!builder.close_params()) return false;
        doc.EndArray(builder.params_count());
      }
      return true;
    };
    doc_->Populate(generate);
    stack_.trim(retain_ / 4);  // a large parse stack is not kept while the handlers run

    // The stream's positions as offsets into the text.
    const auto offset = [text](std::size_t tell) { return Stream::offset(tell, text); };
    if (builder.status() == ParseStatus::too_deep) return {ParseStatus::too_deep};
    if (builder.status() == ParseStatus::too_costly) {
      return {.status = ParseStatus::too_costly, .budget = builder.budget()};
    }
    if (builder.escape_rejected()) {
      return {ParseStatus::syntax_error, offset(result.Offset()), "Invalid UTF-8 from an escape (a lone surrogate)."};
    }
    if (builder.number_rejected()) {
      return {ParseStatus::syntax_error, offset(result.Offset()), "Number too big to be stored in double."};
    }
    // The stream reads a NUL byte as the end. A NUL inside the message therefore either stops
    // a parse that succeeds early or makes RapidJSON report what an end there would break (a
    // string never closed, an empty document): name the NUL in both cases.
    const std::size_t stopped = offset(result.IsError() ? result.Offset() : stream.Tell());
    if (stopped < size && text[stopped] == '\0') {
      return {ParseStatus::syntax_error, stopped, "Unexpected NUL byte."};
    }
    if (result.IsError()) {
      return {ParseStatus::syntax_error, stopped, rapidjson::GetParseError_En(result.Code())};
    }
    if (builder.status() == ParseStatus::batch_too_large) return {ParseStatus::batch_too_large};
    return {};
  }

  // Numbers arrive as text so that ids can be echoed byte for byte.
  static constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag;
  static constexpr std::size_t kMaxRecursiveDepth = 256;
  // Small, so that an idle session (one per network connection) costs little: the pool grows
  // to what a message needed and keeps that for the next (release()).
  static constexpr std::size_t kInitialPoolBytes = std::size_t{4} << 10;
  static constexpr std::size_t kMaxRetainedPoolBytes = std::size_t{8} << 20;
  static constexpr std::size_t kMaxRetainedIds = std::size_t{1} << 16;

  void make_pools(std::size_t bytes) {
    doc_.reset();
    value_pool_.reset();
    // The pool starts on a max_align_t boundary: RapidJSON puts its chunk header there.
    constexpr std::size_t align = alignof(std::max_align_t);
    bytes = (bytes + align - 1) / align * align;
    pool_bytes_ = bytes;
    buffer_ = std::make_unique<std::max_align_t[]>(bytes / sizeof(std::max_align_t) + 1);
    value_pool_.emplace(buffer_.get(), bytes);
    doc_.emplace(&*value_pool_, kStackCapacity, &stack_);
  }

  static constexpr std::size_t kStackCapacity = 4096;

  std::size_t retain_;
  std::unique_ptr<std::max_align_t[]> buffer_;
  std::size_t pool_bytes_ = 0;
  StackArena stack_;  // declared before doc_, which uses it
  std::optional<Pool> value_pool_;
  std::optional<Document> doc_;
  rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>> reader_;
  std::vector<ParsedRequest> requests_;
  std::vector<std::string_view> names_;  // the current request's member names, for duplicates
  bool batch_ = false;
};

}  // namespace rpc::detail
