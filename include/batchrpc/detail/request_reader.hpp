// SPDX-License-Identifier: MIT
// Reads a message (a Request or a batch of them) straight from the parser's events: each
// member's envelope (jsonrpc, method, id) is checked and taken as it streams past, and only
// params values are built into the document. Requests, batch arrays and ignored members never
// become DOM values, which is most of the work a DOM would do for a batch of small calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include <rapidjson/reader.h>

#include "../config.hpp"
#include "member_names.hpp"
#include "request.hpp"
#include "sax_checks.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// One member of a message (the message itself when it is not a batch), as read.
struct ParsedRequest {
  static constexpr std::uint32_t no_params = static_cast<std::uint32_t>(-1);
  Request request;
  const char* invalid = nullptr;       // why it is not a valid Request (JSON-RPC 2.0 §4)
  std::uint32_t params_index = no_params;  // its params: this element of the document's root
  // A Response object (§5: an id, exactly one of result and error, no method nor params) is
  // still an invalid Request; a two-way session routes it to its own request with that id.
  bool is_response = false;
  bool answer_is_error = false;            // the answer is an "error" member, else "result"
  // Neither a Request nor a valid Response, and no "method": maybe the client's broken answer
  // to a request of ours, which then hears why instead of the client getting -32600.
  const char* broken_response = nullptr;
  std::uint32_t answer_index = no_params;  // the answer's value: this element of the root
  const Value* answer = nullptr;           // set from answer_index once the parse is done
};

// The document's root becomes an array of the params values, in member order.
class RequestReader : public SaxChecks {
 public:
  // `size`: the message's length, which sets its parse budget.
  RequestReader(Document& doc, std::vector<ParsedRequest>& requests,
                std::vector<std::string_view>& names, const Limits& limits, std::size_t size,
                bool escapes)
      : SaxChecks(limits, escapes, size), doc_(doc), requests_(requests), names_(names) {
    push_value();  // the root array that holds the params values
  }

  bool is_batch() const { return batch_; }
  rapidjson::SizeType params_count() const { return params_count_; }
  // Counts the root array closing; false when that passes the parse budget.
  bool close_params() { return close_container(params_count_, false); }

  bool Null() {
    const Place place = next_place();
    if (place == Place::answer) return keep_answer() && doc_.Null();
    return place == Place::built ? push_value() && doc_.Null() : scalar_at(place, Type::null, {});
  }
  bool Bool(bool b) {
    const Place place = next_place();
    if (place == Place::answer) return keep_answer() && doc_.Bool(b);
    return place == Place::built ? push_value() && doc_.Bool(b) : scalar_at(place, Type::other, {});
  }
  // Not called with kParseNumbersAsStringsFlag; present to satisfy the Handler concept.
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(std::int64_t) { return false; }
  bool Uint64(std::uint64_t) { return false; }
  bool Double(double) { return false; }
  bool RawNumber(const char* text, rapidjson::SizeType length, bool) {
    const Place place = next_place();
    if (place == Place::ignored) return true;
    if (place == Place::built) return push_value() && put(doc_, text, length);
    if (place == Place::answer) return keep_answer() && put(doc_, text, length);
    return number_fits(text, length) && scalar_at(place, Type::number, {text, length});
  }
  bool String(const char* text, rapidjson::SizeType length, bool copy) {
    const Place place = next_place();
    if (place == Place::ignored) return true;
    if (!valid_escapes(text, length)) return false;
    if (place == Place::built) return push_value() && doc_.String(text, length, copy);
    if (place == Place::answer) return keep_answer() && doc_.String(text, length, copy);
    return scalar_at(place, Type::string, {text, length});
  }
  bool Key(const char* text, rapidjson::SizeType length, bool copy) {
    if (!checking()) return true;
    if (!valid_escapes(text, length)) return false;
    if (sink_ == Sink::build) return push_value() && doc_.Key(text, length, copy);
    if (sink_ == Sink::skip) return true;
    name(std::string_view(text, length));  // a member of the request object
    return true;
  }
  bool StartObject() { return start(true); }
  bool StartArray() { return start(false); }
  bool EndObject(rapidjson::SizeType count) { return end(true, count); }
  bool EndArray(rapidjson::SizeType count) { return end(false, count); }

 private:
  enum class Place : unsigned char { ignored, built, skipped, root, member, field, answer };
  enum class Sink : unsigned char { none, build, skip };
  enum class Field : unsigned char { jsonrpc, method, params, id, result, error, other };
  enum class Type : unsigned char { null, number, string, object, array, other };
  static constexpr unsigned bit(Field f) { return 1u << static_cast<unsigned>(f); }

  // Where the next value goes; counts batch members (ignored past the cap).
  Place next_place() {
    if (!checking()) return Place::ignored;
    if (sink_ != Sink::none) return sink_ == Sink::build ? Place::built : Place::skipped;
    if (depth_ == 0) return Place::root;
    if (batch_ && depth_ == 1) return admit_member() ? Place::member : Place::ignored;
    if (field_ == Field::result || field_ == Field::error) return Place::answer;
    return Place::field;
  }

  // A Response's result or error value is built into the document, as params are.
  bool keep_answer() {
    requests_.back().answer_index = params_count_++;
    return push_value();
  }

  // A scalar anywhere but in params.
  bool scalar_at(Place place, Type type, std::string_view text) {
    if (place == Place::root || place == Place::member) {
      requests_.emplace_back().invalid = "a request must be an object";
    } else if (place == Place::field) {
      field_value(type, text);
    }
    return true;
  }


  bool start(bool object) {
    const Place place = next_place();
    if (!enter()) return false;
    switch (place) {
      case Place::ignored:
      case Place::skipped:
        return true;
      case Place::built:
        return push_value() && (object ? doc_.StartObject() : doc_.StartArray());
      case Place::root:
        if (object) {
          begin_request();
          return true;
        }
        batch_ = true;
        return true;
      case Place::member:
        if (object) {
          begin_request();
          return true;
        }
        requests_.emplace_back().invalid = "a request must be an object";
        open_sink(Sink::skip);
        return true;
      case Place::answer:
        open_sink(Sink::build);
        return keep_answer() && (object ? doc_.StartObject() : doc_.StartArray());
      case Place::field:
        break;
    }
    field_value(object ? Type::object : Type::array, {});
    if (field_ == Field::params && error_ == nullptr) {
      requests_.back().params_index = params_count_++;
      open_sink(Sink::build);
      return push_value() && (object ? doc_.StartObject() : doc_.StartArray());
    }
    open_sink(Sink::skip);
    return true;
  }

  bool end(bool object, rapidjson::SizeType count) {
    --depth_;
    if (!checking()) return true;
    if (sink_ != Sink::none) {
      const bool build = sink_ == Sink::build;
      if (depth_ < sink_depth_) sink_ = Sink::none;  // the sink's own container closes
      if (!build) return true;
      return close_container(count, object) && (object ? doc_.EndObject(count) : doc_.EndArray(count));
    }
    if (object) finish_request();  // else the batch array closes
    return true;
  }

  void open_sink(Sink sink) {
    sink_ = sink;
    sink_depth_ = depth_;
  }

  void begin_request() {
    requests_.emplace_back();
    seen_ = 0;
    twice_ = false;
    error_ = nullptr;
    names_.clear();
  }

  // Sizes first, then fixed-size compares the compiler turns into a load or two.
  template <std::size_t N>
  static bool is(std::string_view text, const char (&literal)[N]) {
    return text.size() == N - 1 && std::memcmp(text.data(), literal, N - 1) == 0;
  }

  void name(std::string_view n) {
    field_ = is(n, "id")       ? Field::id
             : is(n, "method") ? Field::method
             : is(n, "params") ? Field::params
             : is(n, "jsonrpc") ? Field::jsonrpc
             : is(n, "result")  ? Field::result
             : is(n, "error")   ? Field::error
                                : Field::other;
    if (field_ == Field::other) {
      names_.push_back(n);
      return;
    }
    twice_ |= (seen_ & bit(field_)) != 0;
    seen_ |= bit(field_);
  }

  // The first value that breaks a rule names what is wrong with the request.
  void field_value(Type type, std::string_view text) {
    Request& r = requests_.back().request;
    const char* why = nullptr;
    switch (field_) {
      case Field::jsonrpc:
        if (type != Type::string || !is(text, "2.0")) why = "\"jsonrpc\" must be exactly \"2.0\"";
        break;
      case Field::method:
        if (type == Type::string) {
          r.method = text;
        } else {
          why = "\"method\" must be a string";
        }
        break;
      case Field::params:
        if (type != Type::object && type != Type::array) why = "\"params\" must be an array or an object";
        break;
      case Field::id:
        if (type == Type::string) {
          r.id = {RequestId::Kind::string, text};
        } else if (type == Type::number) {
          r.id = {RequestId::Kind::number, text};
        } else if (type == Type::null) {
          r.id = {RequestId::Kind::null, {}};
        } else {
          why = "\"id\" must be a string, a number or null";
        }
        break;
      case Field::result:
      case Field::error:
      case Field::other:
        break;
    }
    if (error_ == nullptr) error_ = why;
  }

  void finish_request() {
    ParsedRequest& p = requests_.back();
    const bool no_method = (seen_ & bit(Field::method)) == 0;
    if (error_ != nullptr) {
      p.invalid = error_;
      if (no_method) p.broken_response = error_;
    } else if (twice_ || has_repeats(names_)) {  // the envelope's, or the others'
      p.invalid = "member names must be unique";
      if (no_method) p.broken_response = p.invalid;
    } else if ((seen_ & bit(Field::jsonrpc)) == 0) {
      p.invalid = "missing \"jsonrpc\"";
      if (no_method) p.broken_response = p.invalid;
    } else if (no_method) {
      p.invalid = "missing \"method\"";
      const unsigned answers = seen_ & (bit(Field::result) | bit(Field::error));
      p.answer_is_error = answers == bit(Field::error);
      if (answers == 0) {
        p.broken_response = "a response needs \"result\" or \"error\"";
      } else if (answers != bit(Field::result) && answers != bit(Field::error)) {
        p.broken_response = "a response must not have both \"result\" and \"error\"";
      } else if ((seen_ & bit(Field::params)) != 0) {
        p.broken_response = "a response must not have \"params\"";
      } else {
        p.is_response = (seen_ & bit(Field::id)) != 0;
      }
    }
  }

  Document& doc_;
  std::vector<ParsedRequest>& requests_;
  std::vector<std::string_view>& names_;  // the current request's other member names
  rapidjson::SizeType params_count_ = 0;
  std::size_t sink_depth_ = 0;  // the depth inside the container the sink is for
  Sink sink_ = Sink::none;
  Field field_ = Field::other;
  bool batch_ = false;
  bool twice_ = false;  // an envelope member named twice
  unsigned seen_ = 0;   // envelope members seen, as bits
  const char* error_ = nullptr;
};

}  // namespace rpc::detail
