// SPDX-License-Identifier: MIT
// The message parser reads a message without a backslash through InsituStream<false> (no byte
// is copied) and one with a backslash through InsituStream<true> (strings decoded in place):
// both must give the same requests, the same NUL-terminated strings and the same error
// offsets.
#include <batchrpc/detail/message_parser.hpp>

#include <cstring>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

namespace {

using rpc::detail::MessageParser;
using rpc::detail::ParseOutcome;
using rpc::detail::ParseStatus;

struct Parsed {
  std::string text;  // parsed in place, so it must outlive the results
  MessageParser parser;
  ParseOutcome outcome;

  explicit Parsed(std::string message) : text(std::move(message)) {
    outcome = parser.parse_requests(text.data(), text.size(), rpc::Limits{});
  }
};

// A string value as the document holds it, checked to end at its NUL as C strings do.
std::string_view string_of(const rpc::Value& v) {
  REQUIRE(v.IsString());
  CHECK(std::strlen(v.GetString()) == v.GetStringLength());
  return {v.GetString(), v.GetStringLength()};
}

}  // namespace

TEST_SUITE("message parser") {
  TEST_CASE("a message with and without a backslash reads the same") {
    const std::string plain =
        R"([{"jsonrpc":"2.0","method":"echo","params":{"text":"héllo","n":-1.5e3,"list":["a",""]},"id":"k-1"},)"
        R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":18446744073709551616}])";
    // The same batch with one escape in a member nobody reads.
    std::string escaped = plain;
    escaped.insert(escaped.find(R"("id":"k-1")"), R"("note":"a\"b",)");

    for (const std::string& message : {plain, escaped}) {
      CAPTURE(message);
      Parsed p(message);
      REQUIRE(p.outcome.status == ParseStatus::ok);
      CHECK(p.parser.is_batch());
      REQUIRE(p.parser.requests().size() == 2);

      const auto& echo = p.parser.requests()[0];
      CHECK(echo.invalid == nullptr);
      CHECK(echo.request.method == "echo");
      CHECK(echo.request.id.kind == rpc::RequestId::Kind::string);
      CHECK(echo.request.id.text == "k-1");
      const rpc::Value& params = *echo.request.params;
      CHECK(string_of(params["text"]) == "héllo");
      CHECK(params["n"].GetDouble() == -1500.0);
      CHECK(string_of(params["list"][0]) == "a");
      CHECK(string_of(params["list"][1]).empty());
      CHECK(params.MemberBegin()->name.GetStringLength() == 4);
      CHECK(std::strcmp(params.MemberBegin()->name.GetString(), "text") == 0);

      const auto& add = p.parser.requests()[1];
      CHECK(add.request.method == "add");
      CHECK(add.request.id.kind == rpc::RequestId::Kind::number);
      CHECK(add.request.id.text == "18446744073709551616");  // ids keep their text
      REQUIRE(add.request.params->IsArray());
      CHECK((*add.request.params)[1].GetInt() == 2);
    }
  }

  TEST_CASE("escapes are decoded when the message has a backslash") {
    Parsed p(R"({"jsonrpc":"2.0","method":"p\u0069ng","params":["a\nb\u00e9"],"id":"\"q\""})");
    REQUIRE(p.outcome.status == ParseStatus::ok);
    const auto& r = p.parser.requests()[0];
    CHECK(r.request.method == "ping");
    CHECK(r.request.id.text == "\"q\"");
    CHECK(string_of((*r.request.params)[0]) == "a\nb\xc3\xa9");
  }

  TEST_CASE("syntax errors are at the same offset with or without a backslash") {
    struct Case {
      std::string message;
      std::size_t offset;
      std::string_view reason;
    };
    const Case cases[] = {
        {R"({"jsonrpc":"2.0" "method":"ping"})", 17,
         "Missing a comma or '}' after an object member."},
        {R"([{"method":"ping"},{"method":"pi)", 32, "Missing a closing quotation mark in string."},
        {R"({"id":12x})", 8, "Missing a comma or '}' after an object member."},
        {R"({"a":[1,2,]})", 10, "Invalid value."},
        {std::string(R"({"method":"ping"} )") + '\0' + "x", 18, "Unexpected NUL byte."},
        {std::string(R"({"method":"pi)") + '\0' + R"(ng"})", 13, "Unexpected NUL byte."},
    };
    for (const Case& c : cases) {
      // A backslash inside a leading string moves the error: an ignored leading member of
      // fixed length keeps the comparison exact. Both variants carry the same prefix.
      for (const std::string prefix : {R"({"x":"ab",)", R"({"x":"\\",)"}) {
        std::string message = c.message;
        if (message.front() == '{') {
          message.replace(0, 1, prefix);
        } else {
          message.replace(1, 1, prefix);
        }
        CAPTURE(message);
        Parsed p(message);
        REQUIRE(p.outcome.status == ParseStatus::syntax_error);
        CHECK(p.outcome.offset == c.offset + prefix.size() - 1);
        CHECK(std::string_view(p.outcome.reason) == c.reason);
      }
    }
  }
}
