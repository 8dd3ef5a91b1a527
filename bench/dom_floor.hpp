// SPDX-License-Identifier: MIT
// The floors: plain RapidJSON DOM loops doing the same work as the router for `ping` and
// `subtract` (parse, look the method up, write each reply with Writer<StringBuffer>). They
// check nothing the specification asks (no UTF-8 check, no duplicate keys, ids re-encoded).
// DomFloor is the straightforward loop: a fresh Document per message, the output buffer
// reused. TunedDomFloor also reuses the DOM's memory pool (a user buffer, cleared per
// message), which is as fast as a RapidJSON DOM loop gets without changing the parser.
// The shape floors answer `ping` as bench_shapes.cpp's handlers do, on the tuned loop.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace bench {

// How the floor makes `ping`'s result.
enum class PingResult {
  echo,       // the nonce's value copied to the output, whatever it is (the built-in ping)
  typed,      // the nonce read as a 64-bit integer and written as one (a typed handler)
  dom_value,  // a DOM object built in the document's pool, then written (a handler returning a
              // ready JSON value: what a RapidJSON DOM server hands back where batchrpc's
              // handler returns rpc::Json)
};

template <bool kReusePool, PingResult kPing = PingResult::echo>
class BasicDomFloor {
 public:
  BasicDomFloor() : buffer_(new char[kPoolBytes]), pool_(buffer_.get(), kPoolBytes), doc_(&pool_) {}

  // Handles one message; false when nothing is to be sent.
  bool handle(const std::string& message) {
    if constexpr (kReusePool) {
      doc_.SetNull();
      pool_.Clear();
      return reply(doc_.Parse(message.c_str(), message.size()));
    } else {
      rapidjson::Document doc;
      return reply(doc.Parse(message.c_str(), message.size()));
    }
  }
  [[nodiscard]] std::size_t size() const { return out_.GetSize(); }

 private:
  template <class Doc>
  bool reply(Doc& doc) {
    out_.Clear();
    writer_.Reset(out_);
    if (doc.HasParseError()) return error_reply(-32700, "Parse error");
    auto& pool = doc.GetAllocator();
    if (!doc.IsArray()) return one(doc, pool);
    writer_.StartArray();
    bool any = false;
    for (const auto& member : doc.GetArray()) any = one(member, pool) || any;
    writer_.EndArray();
    return any;
  }

  static constexpr std::size_t kPoolBytes = kReusePool ? std::size_t{8} << 20 : 64;

  bool error_reply(int code, const char* message) {
    writer_.StartObject();
    writer_.Key("jsonrpc");
    writer_.String("2.0");
    writer_.Key("id");
    writer_.Null();
    writer_.Key("error");
    writer_.StartObject();
    writer_.Key("code");
    writer_.Int(code);
    writer_.Key("message");
    writer_.String(message);
    writer_.EndObject();
    writer_.EndObject();
    return true;
  }

  template <class Value, class Allocator>
  bool one(const Value& m, Allocator& pool) {
    if (!m.IsObject()) return false;
    const auto method = m.FindMember("method");
    const auto id = m.FindMember("id");
    const auto params = m.FindMember("params");
    if (method == m.MemberEnd() || !method->value.IsString()) return false;
    if (id == m.MemberEnd()) return false;  // a notification
    writer_.StartObject();
    writer_.Key("jsonrpc");
    writer_.String("2.0");
    writer_.Key("id");
    id->value.Accept(writer_);
    writer_.Key("result");
    const char* name = method->value.GetString();
    if (std::strcmp(name, "ping") == 0 && params != m.MemberEnd() && params->value.IsObject()) {
      ping(params->value, pool);
    } else if (std::strcmp(name, "subtract") == 0 && params != m.MemberEnd()) {
      const auto& p = params->value;
      if (p.IsArray() && p.Size() == 2 && p[0].IsInt64() && p[1].IsInt64()) {
        writer_.Int64(p[0].GetInt64() - p[1].GetInt64());
      } else if (p.IsObject() && p.HasMember("minuend") && p.HasMember("subtrahend")) {
        writer_.Int64(p["minuend"].GetInt64() - p["subtrahend"].GetInt64());
      } else {
        writer_.Null();
      }
    } else {
      writer_.Null();
    }
    writer_.EndObject();
    return true;
  }

  template <class Value, class Allocator>
  void ping(const Value& params, Allocator& pool) {
    const auto nonce = params.FindMember("nonce");
    const bool found = nonce != params.MemberEnd();
    if constexpr (kPing == PingResult::echo) {
      writer_.StartObject();
      if (found) {
        writer_.Key("nonce");
        nonce->value.Accept(writer_);
      }
      writer_.EndObject();
    } else if constexpr (kPing == PingResult::typed) {
      if (!found || !nonce->value.IsInt64()) return static_cast<void>(writer_.Null());
      const std::int64_t value = nonce->value.GetInt64();
      writer_.StartObject();
      writer_.Key("nonce");
      writer_.Int64(value);
      writer_.EndObject();
    } else {
      if (!found || !nonce->value.IsInt64()) return static_cast<void>(writer_.Null());
      rapidjson::Value result(rapidjson::kObjectType);
      result.AddMember("nonce", nonce->value.GetInt64(), pool);
      result.Accept(writer_);
    }
  }

  std::unique_ptr<char[]> buffer_;
  rapidjson::MemoryPoolAllocator<> pool_;
  rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>> doc_;
  rapidjson::StringBuffer out_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
};

using DomFloor = BasicDomFloor<false>;
using TunedDomFloor = BasicDomFloor<true>;
using TunedTypedPingFloor = BasicDomFloor<true, PingResult::typed>;
using TunedDomValuePingFloor = BasicDomFloor<true, PingResult::dom_value>;

}  // namespace bench
