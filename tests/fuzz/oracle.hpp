// SPDX-License-Identifier: MIT
// The fuzz targets' oracle: re-parses messages and replies on its own (RapidJSON's SAX reader
// into a small tree of its own, strict UTF-8 checked by its own code) and checks every reply
// against the rules of design.md, so a target finds wrong answers, not only crashes.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <rapidjson/reader.h>

namespace batchrpc_fuzz {

// ---- Failing loudly ----------------------------------------------------------------------------

// Prints `bytes` as a C string literal (at most `limit` bytes), so a report can be pasted back.
inline void print_escaped(std::FILE* f, std::string_view bytes, std::size_t limit = 4096) {
  std::fputc('"', f);
  const std::size_t n = bytes.size() < limit ? bytes.size() : limit;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '"' || c == '\\') {
      std::fprintf(f, "\\%c", c);
    } else if (c >= 0x20 && c < 0x7f) {
      std::fputc(c, f);
    } else {
      std::fprintf(f, "\\x%02x\"\"", c);  // "" keeps a following hex digit out of the escape
    }
  }
  std::fputc('"', f);
  if (n < bytes.size()) std::fprintf(f, " ... (%zu bytes in all)", bytes.size());
}

// What is being checked, for the report an oracle failure prints before it aborts (libFuzzer
// and the replay main both treat the abort as a failure and keep the input).
struct Report {
  const char* target = "";
  std::string_view input;
  std::string_view reply;
  std::string_view where;  // which router/session/framing produced the reply

  [[noreturn]] void fail(std::string_view what) const {
    std::fprintf(stderr, "\n==== batchrpc oracle failure (%s, %.*s): %.*s\ninput: ", target,
                 static_cast<int>(where.size()), where.data(), static_cast<int>(what.size()),
                 what.data());
    print_escaped(stderr, input);
    std::fprintf(stderr, "\nreply: ");
    print_escaped(stderr, reply);
    std::fprintf(stderr, "\n");
    std::fflush(stderr);
    std::abort();
  }
  void check(bool ok, std::string_view what) const {
    if (!ok) fail(what);
  }
};

// ---- Strict UTF-8 (Unicode 15, table 3-7), written independently of the library's ----------------

inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const auto in = [](unsigned char c, unsigned lo, unsigned hi) { return c >= lo && c <= hi; };
  while (i < n) {
    const unsigned char c = at(i);
    if (c < 0x80) {
      ++i;
    } else if (in(c, 0xC2, 0xDF)) {
      if (i + 1 >= n || !in(at(i + 1), 0x80, 0xBF)) return false;
      i += 2;
    } else if (in(c, 0xE0, 0xEF)) {
      if (i + 2 >= n) return false;
      const unsigned lo = c == 0xE0 ? 0xA0 : 0x80;
      const unsigned hi = c == 0xED ? 0x9F : 0xBF;
      if (!in(at(i + 1), lo, hi) || !in(at(i + 2), 0x80, 0xBF)) return false;
      i += 3;
    } else if (in(c, 0xF0, 0xF4)) {
      if (i + 3 >= n) return false;
      const unsigned lo = c == 0xF0 ? 0x90 : 0x80;
      const unsigned hi = c == 0xF4 ? 0x8F : 0xBF;
      if (!in(at(i + 1), lo, hi) || !in(at(i + 2), 0x80, 0xBF) || !in(at(i + 3), 0x80, 0xBF)) {
        return false;
      }
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

// ---- A tree of the shallow part of a JSON text ---------------------------------------------------

struct Field;

struct Node {
  enum class Kind : unsigned char { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  std::string text;       // numbers as written, strings decoded, booleans "true"/"false"
  std::size_t size = 0;   // elements or members, also those too deep to be kept
  std::vector<Node> elements;
  std::vector<Field> members;

  [[nodiscard]] bool is(Kind k) const { return kind == k; }
  // The first member named `key`, or nullptr.
  [[nodiscard]] const Node* find(std::string_view key) const;
  [[nodiscard]] bool has_duplicate_keys() const;
  // Same JSON value for the purpose of echoing an id: same type, same text as written.
  [[nodiscard]] bool same_scalar(const Node& other) const { return kind == other.kind && text == other.text; }
};

// One member of an object (not a std::pair: with Clang, std::pair<std::string, Node> needs Node
// complete before its closing brace).
struct Field {
  std::string name;
  Node value;
};

inline const Node* Node::find(std::string_view key) const {
  for (const auto& member : members) {
    if (member.name == key) return &member.value;
  }
  return nullptr;
}

inline bool Node::has_duplicate_keys() const {
  for (std::size_t a = 0; a < members.size(); ++a) {
    for (std::size_t b = a + 1; b < members.size(); ++b) {
      if (members[a].name == members[b].name) return true;
    }
  }
  return false;
}

// How a JSON number reads as a double, the way a careful parser should: false only when its
// magnitude is beyond the range of double (a tiny number is 0 or subnormal, not an error).
inline bool number_fits_double(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double d = std::strtod(text.c_str(), &end);
  if (errno == ERANGE) return !(d > 1.0 || d < -1.0);  // +-HUGE_VAL on overflow, tiny on underflow
  return true;
}

// SAX handler: keeps values up to `keep` levels deep (the root is level 0), counts the rest,
// and stops at the first problem in reading order, as the library reads: more than `max_depth`
// open containers, or a number out of range (one in a batch member past `max_batch` is only
// noted, since a parser that has stopped building an oversized batch may not look at it).
class TreeBuilder {
 public:
  using Ch = char;
  TreeBuilder(std::size_t keep, std::size_t max_depth, std::size_t max_batch)
      : keep_(keep), max_depth_(max_depth), max_batch_(max_batch) {}

  bool Null() { return scalar(Node::Kind::null, {}); }
  bool Bool(bool b) { return scalar(Node::Kind::boolean, b ? "true" : "false"); }
  bool Int(int) { return false; }  // never called: numbers arrive as text
  bool Uint(unsigned) { return false; }
  bool Int64(std::int64_t) { return false; }
  bool Uint64(std::uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    std::string text(s, n);
    if (!number_fits_double(text)) {
      if (past_cap(1)) {
        problem_past_cap_ = true;
      } else {
        number_stopped_ = true;
        return false;
      }
    }
    return scalar(Node::Kind::number, std::move(text));
  }
  // A \u escape of a lone surrogate decodes to no character at all; RapidJSON 1.1.0 lets a
  // lone low surrogate (\udc00-\udfff) through as invalid UTF-8 bytes. Not JSON text a
  // careful parser accepts: -32700.
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (!valid_utf8(std::string_view(s, n)) && !note_past_cap(1)) return bad_string_ = true, false;
    return scalar(Node::Kind::string, std::string(s, n));
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (!valid_utf8(std::string_view(s, n)) && !note_past_cap(0)) return bad_string_ = true, false;
    ++items_;
    if (depth_ - 1 <= keep_) stack_.back().key.assign(s, n);
    return true;
  }
  bool StartObject() { return open(Node::Kind::object); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(Node::Kind::array); }
  bool EndArray(rapidjson::SizeType) { return close(); }

  Node root;
  // Values and member names read, at every depth.
  [[nodiscard]] std::size_t items() const { return items_; }
  [[nodiscard]] bool too_deep() const { return too_deep_; }
  // Stopped at a number beyond the range of double.
  [[nodiscard]] bool number_stopped() const { return number_stopped_; }
  // Saw such a problem (number, lone surrogate) only in batch members past max_batch.
  [[nodiscard]] bool problem_past_cap() const { return problem_past_cap_; }
  // Stopped at a string or member name escaping a lone surrogate.
  [[nodiscard]] bool bad_string() const { return bad_string_; }

 private:
  struct Frame {
    Node node;
    std::string key;
  };
  // True when the value about to be read (`starting` = 1: a scalar not counted yet; 0: inside
  // a member already counted) belongs to a batch member past max_batch.
  bool past_cap(std::size_t starting) const {
    const bool member = starting != 0 && depth_ == 1 && !stack_.empty() && stack_.front().node.is(Node::Kind::array);
    return top_level_array_members_ + (member ? 1 : 0) > max_batch_;
  }
  bool note_past_cap(std::size_t starting) {
    const bool past = past_cap(starting);
    if (past) problem_past_cap_ = true;
    return past;
  }
  void begin_value() {
    ++items_;
    if (depth_ >= 1 && depth_ - 1 <= keep_) ++stack_.back().node.size;
    if (depth_ == 1 && !stack_.empty() && stack_.front().node.is(Node::Kind::array)) {
      ++top_level_array_members_;
    }
  }
  void finish(Node&& n, std::size_t level) {
    if (level > keep_) return;
    if (level == 0) {
      root = std::move(n);
      return;
    }
    Frame& parent = stack_.back();
    if (parent.node.is(Node::Kind::array)) {
      parent.node.elements.push_back(std::move(n));
    } else {
      parent.node.members.push_back(Field{std::move(parent.key), std::move(n)});
    }
  }
  bool scalar(Node::Kind kind, std::string text) {
    begin_value();
    if (depth_ <= keep_) {
      Node n;
      n.kind = kind;
      n.text = std::move(text);
      finish(std::move(n), depth_);
    }
    return true;
  }
  bool open(Node::Kind kind) {
    begin_value();
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    if (depth_ - 1 <= keep_) {
      stack_.emplace_back();
      stack_.back().node.kind = kind;
    }
    return true;
  }
  bool close() {
    const std::size_t level = --depth_;
    if (level <= keep_) {
      Node n = std::move(stack_.back().node);
      stack_.pop_back();
      finish(std::move(n), level);
    }
    return true;
  }

  std::size_t keep_;
  std::size_t max_depth_;
  std::size_t max_batch_;
  std::size_t depth_ = 0;
  std::size_t top_level_array_members_ = 0;
  std::size_t items_ = 0;
  bool too_deep_ = false;
  bool number_stopped_ = false;
  bool bad_string_ = false;
  bool problem_past_cap_ = false;
  std::vector<Frame> stack_;
};

// The outcome of reading one JSON text.
struct Parsed {
  enum class Status : unsigned char { ok, not_utf8, syntax, too_deep, number_range };
  Status status = Status::ok;
  Node root;
  bool problem_past_cap = false;  // see TreeBuilder::problem_past_cap
  std::size_t items = 0;          // see TreeBuilder::items
  [[nodiscard]] bool ok() const { return status == Status::ok; }
};

inline constexpr std::size_t no_limit = static_cast<std::size_t>(-1);

// Reads `text` as exactly one JSON value (a NUL byte anywhere is an error, as is anything after
// the value), keeping `keep` levels.
inline Parsed parse(std::string_view text, std::size_t keep, std::size_t max_depth = no_limit,
                    std::size_t max_batch = no_limit) {
  Parsed out;
  if (!valid_utf8(text)) {
    out.status = Parsed::Status::not_utf8;
    return out;
  }
  const std::string copy(text);  // NUL-terminated: the stream ends at the first NUL byte
  rapidjson::StringStream stream(copy.c_str());
  TreeBuilder builder(keep, max_depth, max_batch);
  rapidjson::Reader reader;
  constexpr unsigned flags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                             rapidjson::kParseNumbersAsStringsFlag;
  const rapidjson::ParseResult result = reader.Parse<flags>(stream, builder);
  if (builder.too_deep()) {
    out.status = Parsed::Status::too_deep;
  } else if (builder.number_stopped()) {
    out.status = Parsed::Status::number_range;
  } else if (builder.bad_string()) {
    out.status = Parsed::Status::not_utf8;
  } else if (result.IsError() || stream.Tell() != text.size()) {
    out.status = Parsed::Status::syntax;
  }
  out.problem_past_cap = builder.problem_past_cap();
  out.items = builder.items();
  out.root = std::move(builder.root);
  return out;
}

// ---- The rules -----------------------------------------------------------------------------------

// Every code a reply may carry (design.md, error.hpp): JSON-RPC 2.0's and batchrpc's own.
// (batchrpc's client_unavailable -32094 and client_timeout -32095 are never sent.)
inline bool documented_code(long long code) {
  switch (code) {
    case -32700: case -32600: case -32601: case -32602: case -32603:
    case -32090: case -32091: case -32092: case -32093: case -32800:
      return true;
    default:
      return false;
  }
}

inline bool integer_text(std::string_view t) {
  if (!t.empty() && t.front() == '-') t.remove_prefix(1);
  if (t.empty()) return false;
  for (const char c : t) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// A checked response object.
struct Response {
  const Node* id = nullptr;
  const Node* result = nullptr;  // exactly one of result and error
  long long code = 0;
  const Node* message = nullptr;
  const Node* data = nullptr;
};

// Checks one response object (JSON-RPC 2.0 §5): members, id type, result xor error, and an error
// object with an integer code from the documented set and a string message.
inline Response check_response(const Report& r, const Node& n) {
  r.check(n.is(Node::Kind::object), "a response is not an object");
  r.check(!n.has_duplicate_keys(), "a response repeats a member name");
  Response out;
  const Node* version = n.find("jsonrpc");
  r.check(version != nullptr && version->is(Node::Kind::string) && version->text == "2.0",
          "a response lacks \"jsonrpc\":\"2.0\"");
  out.id = n.find("id");
  r.check(out.id != nullptr, "a response has no id");
  r.check(out.id->is(Node::Kind::string) || out.id->is(Node::Kind::number) || out.id->is(Node::Kind::null),
          "a response id is not a string, number or null");
  out.result = n.find("result");
  const Node* error = n.find("error");
  r.check((out.result == nullptr) != (error == nullptr), "a response needs exactly one of result and error");
  r.check(n.members.size() == 3, "a response has members other than jsonrpc, id and result/error");
  if (error != nullptr) {
    r.check(error->is(Node::Kind::object), "an error is not an object");
    r.check(!error->has_duplicate_keys(), "an error object repeats a member name");
    const Node* code = error->find("code");
    r.check(code != nullptr && code->is(Node::Kind::number) && integer_text(code->text),
            "an error code is not an integer");
    out.code = std::strtoll(code->text.c_str(), nullptr, 10);
    r.check(documented_code(out.code), "an error code is not one of the documented ones");
    out.message = error->find("message");
    r.check(out.message != nullptr && out.message->is(Node::Kind::string) && !out.message->text.empty(),
            "an error message is not a non-empty string");
    out.data = error->find("data");
    r.check(error->members.size() == 2u + (out.data != nullptr ? 1u : 0u),
            "an error object has members other than code, message and data");
  }
  return out;
}

// Who reads the message. A Router answers every member. A Session also takes the client's
// Responses (answers to the session's own requests, design.md §9) and never answers them.
enum class Reader : unsigned char { router, session };

// What a message member is, by the rules of design.md §2 and §9 (before any method is looked up).
struct Member {
  enum class Kind : unsigned char { invalid, notification, request, response };
  Kind kind = Kind::invalid;
  const Node* id = nullptr;       // for requests
  std::string_view method;        // for requests and notifications
  const Node* params = nullptr;   // nullptr: absent
};

inline bool valid_id(const Node& id) {
  return id.is(Node::Kind::string) || id.is(Node::Kind::number) || id.is(Node::Kind::null);
}

// A Response object (§5): an id, exactly one of result and error, no method and no params. Other
// members are ignored, as in a request.
inline bool is_response(const Node& m) {
  const Node* id = m.find("id");
  return id != nullptr && valid_id(*id) && (m.find("result") == nullptr) != (m.find("error") == nullptr) &&
         m.find("method") == nullptr && m.find("params") == nullptr;
}

inline Member classify(const Node& m, Reader reader = Reader::router) {
  Member out;
  if (!m.is(Node::Kind::object) || m.has_duplicate_keys()) return out;
  const Node* version = m.find("jsonrpc");
  if (version == nullptr || !version->is(Node::Kind::string) || version->text != "2.0") return out;
  if (reader == Reader::session && is_response(m)) {
    out.kind = Member::Kind::response;
    return out;
  }
  const Node* method = m.find("method");
  if (method == nullptr || !method->is(Node::Kind::string)) return out;
  const Node* params = m.find("params");
  if (params != nullptr && !params->is(Node::Kind::array) && !params->is(Node::Kind::object)) return out;
  const Node* id = m.find("id");
  if (id != nullptr && !valid_id(*id)) return out;
  out.kind = id == nullptr ? Member::Kind::notification : Member::Kind::request;
  out.id = id;
  out.method = method->text;
  out.params = params;
  return out;
}

// The limits a router was made with (mirrors rpc::Limits, kept apart so the oracle does not
// take the library's word for them).
struct Limits {
  std::size_t max_batch = 1000;
  std::size_t max_message_bytes = std::size_t{16} << 20;
  std::size_t max_depth = 128;
  std::size_t max_response_bytes = std::size_t{64} << 20;
  std::size_t max_parse_ratio = 8;  // parse memory per message byte, at least 64 KiB a message
};

// A message refused for what parsing it would cost (design: Limits::max_parse_ratio). The
// oracle does not model the library's memory layout; it checks the budget is the documented one
// and that the message could cost that much: a parsed value or member name takes at most 16
// bytes in the pool and 16 on the parse stack, which may grow half as much again (40 in all).
inline bool parse_budget_refusal(const Report& r, const Response& resp, const Limits& limits, std::size_t items) {
  const Node* reason = resp.data != nullptr && resp.data->is(Node::Kind::object) ? resp.data->find("reason") : nullptr;
  if (resp.code != -32090 || reason == nullptr || reason->text != "its parsed form exceeds the parse budget") {
    return false;
  }
  const std::size_t floor = std::size_t{64} << 10;
  const std::size_t budget = std::max(floor, limits.max_parse_ratio * r.input.size());
  const Node* given = resp.data->find("budget");
  r.check(given != nullptr && given->is(Node::Kind::number) && given->text == std::to_string(budget),
          "a parse budget refusal's data.budget is not max(64 KiB, ratio x size)");
  r.check(40 * items >= budget, "refused for its parse cost, but it cannot cost that much");
  return true;
}

// Checks an error that answers a message as a whole: a single object, id null, this code.
inline Response check_whole_error(const Report& r, const Parsed& reply, long long code) {
  r.check(reply.root.is(Node::Kind::object), "a whole-message error must be a single object");
  const Response resp = check_response(r, reply.root);
  r.check(resp.result == nullptr, "expected an error, got a result");
  r.check(resp.id->is(Node::Kind::null), "a whole-message error must have id null");
  r.check(resp.code == code, "wrong error code for the message as a whole");
  return resp;
}

inline void check_max_data(const Report& r, const Response& resp, std::size_t max) {
  r.check(resp.data != nullptr && resp.data->is(Node::Kind::object) && resp.data->members.size() == 1,
          "a limit error needs data {\"max\": N}");
  const Node* m = resp.data->find("max");
  r.check(m != nullptr && m->is(Node::Kind::number) && m->text == std::to_string(max),
          "a limit error's data.max is not the limit");
}

// Called for each response that answers a valid request, with the member it answers; may
// check the method's own rules (known methods, exact results).
struct MemberCheck {
  virtual ~MemberCheck() = default;
  virtual void operator()(const Report& r, const Member& m, const Response& resp) const = 0;
};

// Checks `reply` (nullopt: nothing was sent) for `input` under `limits`, as `reader` answers it:
// the shape (nothing, a single object, an array) is exactly the one the rules give; a batch reply
// has one entry per request or invalid member, in order, with matching ids; every response is
// well formed.
inline void check_message(const Report& r, const Limits& limits, std::optional<std::string_view> reply,
                          const MemberCheck& member_check, Reader reader = Reader::router) {
  const std::string_view input = r.input;
  Parsed out;
  if (reply) {
    r.check(valid_utf8(*reply), "the reply is not valid UTF-8");
    out = parse(*reply, 4);
    r.check(out.ok(), "the reply is not one valid JSON value");
  }
  const auto whole = [&](long long code) -> Response {
    r.check(reply.has_value(), "no reply where the message as a whole must be answered");
    return check_whole_error(r, out, code);
  };

  if (input.size() > limits.max_message_bytes) {
    check_max_data(r, whole(-32090), limits.max_message_bytes);
    return;
  }
  const Parsed in = parse(input, 2, limits.max_depth, limits.max_batch);
  switch (in.status) {
    case Parsed::Status::ok:
      break;
    case Parsed::Status::not_utf8:
    case Parsed::Status::syntax:
    case Parsed::Status::number_range: {
      const Response resp = whole(-32700);
      r.check(resp.data != nullptr && resp.data->find("offset") != nullptr &&
                  resp.data->find("offset")->is(Node::Kind::number) && resp.data->find("reason") != nullptr &&
                  resp.data->find("reason")->is(Node::Kind::string),
              "a parse error needs data {offset, reason}");
      return;
    }
    case Parsed::Status::too_deep:
      check_max_data(r, whole(-32091), limits.max_depth);
      return;
  }

  // A valid message within the limits answered by an error for the message as a whole (a parse
  // error, a limit, the out-of-memory answer) is the first thing to name. (A request with id
  // null may well be answered -32603 with id null.)
  const bool oversized_batch = in.root.is(Node::Kind::array) && in.root.size > limits.max_batch;
  const bool null_id_request = in.root.is(Node::Kind::object) && classify(in.root).kind == Member::Kind::request &&
                               classify(in.root).id->is(Node::Kind::null);
  if (reply && !oversized_batch && !null_id_request && out.root.is(Node::Kind::object)) {
    const Node* error = out.root.find("error");
    const Node* code = error != nullptr && error->is(Node::Kind::object) ? error->find("code") : nullptr;
    const Node* id = out.root.find("id");
    if (code != nullptr && id != nullptr && id->is(Node::Kind::null) && code->text == "-32090" &&
        parse_budget_refusal(r, check_whole_error(r, out, -32090), limits, in.items)) {
      return;  // within the message limit, but too costly to parse
    }
    if (code != nullptr && id != nullptr && id->is(Node::Kind::null) &&
        (code->text == "-32700" || code->text == "-32090" || code->text == "-32091" || code->text == "-32603")) {
      const std::string what = "a valid message within the limits was refused as a whole (error " + code->text + ", id null)";
      r.fail(what);
    }
  }

  const Node& root = in.root;
  if (root.is(Node::Kind::array)) {
    if (root.size == 0) {
      whole(-32600);
      return;
    }
    if (root.size > limits.max_batch) {
      // A problem past the cap (a number out of range, a lone surrogate) may be reported
      // (-32700) or not (-32602): a parser may stop looking at values once it knows.
      if (in.problem_past_cap && reply && out.root.is(Node::Kind::object) &&
          check_response(r, out.root).code == -32700) {
        whole(-32700);
        return;
      }
      const Response resp = whole(-32602);
      r.check(resp.message->text == "Batch too large", "an oversized batch is not \"Batch too large\"");
      check_max_data(r, resp, limits.max_batch);
      return;
    }
    std::vector<std::pair<const Node*, Member>> expected;  // members that must be answered
    for (const Node& element : root.elements) {
      Member m = classify(element, reader);
      if (m.kind != Member::Kind::notification && m.kind != Member::Kind::response) expected.emplace_back(&element, m);
    }
    if (expected.empty()) {
      r.check(!reply.has_value(), "a batch of notifications and responses only must get no reply");
      return;
    }
    r.check(reply.has_value(), "a batch with requests got no reply");
    r.check(out.root.is(Node::Kind::array), "a batch reply must be an array");
    r.check(out.root.elements.size() == expected.size(),
            "a batch reply needs exactly one entry per request and invalid member");
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const Member& m = expected[i].second;
      const Response resp = check_response(r, out.root.elements[i]);
      if (m.kind == Member::Kind::invalid) {
        // Or -32092 in its place, when it would take the reply past max_response_bytes.
        r.check(resp.id->is(Node::Kind::null) && (resp.code == -32600 || resp.code == -32092),
                "an invalid batch member must be answered -32600 (or -32092) with id null");
        if (resp.code == -32092) check_max_data(r, resp, limits.max_response_bytes);
      } else {
        r.check(resp.id->same_scalar(*m.id), "a batch entry's id does not match its member's");
        member_check(r, m, resp);
      }
    }
    return;
  }
  const Member m = classify(root, reader);
  switch (m.kind) {
    case Member::Kind::response:
      r.check(!reply.has_value(), "a response from the client must get no reply");
      return;
    case Member::Kind::invalid:
      whole(-32600);
      return;
    case Member::Kind::notification:
      r.check(!reply.has_value(), "a notification must get no reply");
      return;
    case Member::Kind::request: {
      r.check(reply.has_value(), "a request got no reply");
      r.check(out.root.is(Node::Kind::object), "a single request's reply must be a single object");
      const Response resp = check_response(r, out.root);
      r.check(resp.id->same_scalar(*m.id), "the reply's id does not match the request's");
      member_check(r, m, resp);
      return;
    }
  }
}

}  // namespace batchrpc_fuzz
