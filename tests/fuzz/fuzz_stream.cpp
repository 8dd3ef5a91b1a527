// SPDX-License-Identifier: MIT
// Fuzz target: stream framing. The first byte picks the framing, the read chunk size and the
// stream's message limit; the rest is what the peer sends to serve_stream, read from memory.
// Oracle: every write is one whole frame holding a valid response or array of responses, and
// the writes are exactly those a reference framing (written here from stream.hpp's contract)
// gives when each message is answered by Session::handle on a session of the same router.
#include <batchrpc/responder.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>
#include <batchrpc/stream.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "oracle.hpp"

namespace {

namespace fz = batchrpc_fuzz;

// No gating, no cancellation and no requests to the client: a session with no executor answers
// each message on its own, so a second session, handed the messages unframed, is the reference.
// (Not Router::handle: a session takes a member shaped as a Response for its client's answer and
// does not reply to it, where the router, one-way, answers it -32600.)
rpc::Router make_router() {
  rpc::Router r;
  r.add("echo", [](const rpc::Value& v) { return rpc::to_json(v); });
  r.add("add", [](int a, int b) { return static_cast<long long>(a) + b; }, rpc::names("a", "b"));
  r.add("later", [](int x, rpc::Responder done) { done.resolve(x); }, rpc::names("x"));
  r.add("fail", []() -> int { throw std::runtime_error("hidden"); });
  return r;
}

const rpc::Router& router() {
  static const rpc::Router r = make_router();
  return r;
}

constexpr std::size_t chunk_sizes[] = {1, 2, 3, 7, 16, 64, 4096, 1 << 16};

std::string too_large(std::size_t max) {
  return R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":)" +
         std::to_string(max) + "}}}";
}

std::string bad_frame(std::string_view why) {
  return R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"reason":"invalid frame: )" +
         std::string(why) + "\"}}}";
}

// The replies the contract gives for `input`, in order, unframed.
std::vector<std::string> expected_lines(std::string_view input, std::size_t max, rpc::Session& reference) {
  std::vector<std::string> out;
  const auto message = [&](std::string_view line) {
    if (line.size() > max) return out.push_back(too_large(max));
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank: skipped
    if (auto reply = reference.handle(line)) out.push_back(std::move(*reply));
  };
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    std::string_view line = input.substr(0, newline);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    message(line);
    if (newline == std::string_view::npos) break;  // a last line without its newline counts
    input.remove_prefix(newline + 1);
  }
  return out;
}

std::vector<std::string> expected_frames(std::string_view input, std::size_t max, rpc::Session& reference) {
  std::vector<std::string> out;
  bool have_length = false;  // not std::optional: GCC 12 -O2 warns maybe-uninitialized
  std::size_t length = 0;
  for (;;) {
    const std::size_t newline = input.find('\n');
    if (newline == std::string_view::npos) {  // an unfinished header at end of input
      if (input.size() > 8192) out.push_back(bad_frame("header too long"));
      return out;
    }
    if (newline > 8192) {
      out.push_back(bad_frame("header too long"));
      return out;
    }
    std::string_view header = input.substr(0, newline);
    input.remove_prefix(newline + 1);
    if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
    if (!header.empty()) {
      const std::size_t colon = header.find(':');
      if (colon == std::string_view::npos) {
        out.push_back(bad_frame("header without a colon"));
        return out;
      }
      std::string name(header.substr(0, colon));
      for (char& c : name) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      if (name != "content-length") continue;
      std::string_view value = header.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      std::size_t n = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc{} || ptr != value.data() + value.size()) {
        out.push_back(bad_frame("invalid Content-Length"));
        return out;
      }
      length = n;
      have_length = true;
      continue;
    }
    if (!have_length) {
      out.push_back(bad_frame("missing Content-Length"));
      return out;
    }
    const std::size_t n = length;
    have_length = false;
    if (n > max) {
      out.push_back(too_large(max));
    } else if (n <= input.size()) {
      if (auto reply = reference.handle(input.substr(0, n))) out.push_back(std::move(*reply));
    }
    if (n >= input.size()) return out;  // the body runs to (or past) the end of input
    input.remove_prefix(n);
  }
}



// Checks one reply body on its own: a response object or a non-empty array of them.
void check_body(const fz::Report& r, std::string_view body) {
  r.check(fz::valid_utf8(body), "a reply is not valid UTF-8");
  const fz::Parsed p = fz::parse(body, 3);
  r.check(p.ok(), "a reply is not one valid JSON value");
  if (p.root.is(fz::Node::Kind::array)) {
    r.check(!p.root.elements.empty(), "an empty array was sent");
    for (const fz::Node& n : p.root.elements) fz::check_response(r, n);
  } else {
    fz::check_response(r, p.root);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool lines = (selector & 1u) == 0;
  const std::size_t chunk = chunk_sizes[(selector >> 1) & 7u];
  const std::size_t stream_max = (selector & 16u) != 0 ? 64 : 0;
  const std::size_t max = stream_max != 0 ? stream_max : router().limits().max_message_bytes;

  std::vector<std::string> writes;
  {
    rpc::Session session(router());
    std::size_t at = 0;
    rpc::serve_stream(
        session,
        [&](char* buffer, std::size_t capacity) -> std::ptrdiff_t {
          const std::size_t n = std::min({capacity, chunk, input.size() - at});
          std::copy_n(input.data() + at, n, buffer);
          at += n;
          return static_cast<std::ptrdiff_t>(n);
        },
        [&](std::string_view bytes) {
          writes.emplace_back(bytes);
          return true;
        },
        {.framing = lines ? rpc::Framing::lines : rpc::Framing::content_length, .max_message_bytes = stream_max});
  }

  fz::Report r;
  r.target = "stream";
  r.input = input;
  r.where = lines ? "lines" : "content_length";
  rpc::Session reference(router());
  const std::vector<std::string> expected =
      lines ? expected_lines(input, max, reference) : expected_frames(input, max, reference);
  for (std::size_t i = 0; i < writes.size(); ++i) {
    r.reply = writes[i];
    std::string_view body = writes[i];
    if (lines) {
      r.check(!body.empty() && body.back() == '\n', "a line reply does not end with a newline");
      body.remove_suffix(1);
      r.check(body.find('\n') == std::string_view::npos, "a line reply holds a raw newline");
    } else {
      constexpr std::string_view head = "Content-Length: ";
      r.check(body.substr(0, head.size()) == head, "a frame does not start with Content-Length");
      body.remove_prefix(head.size());
      const std::size_t end = body.find("\r\n\r\n");
      r.check(end != std::string_view::npos, "a frame header is not ended by a blank line");
      std::size_t n = 0;
      const auto [ptr, ec] = std::from_chars(body.data(), body.data() + end, n);
      r.check(ec == std::errc{} && ptr == body.data() + end, "a frame's Content-Length is not a number");
      body.remove_prefix(end + 4);
      r.check(body.size() == n, "a frame's Content-Length is not its body's size");
    }
    check_body(r, body);
    r.check(i < expected.size(), "more replies than messages that need one");
    r.check(body == expected[i], "a reply differs from the reference framing's");
  }
  r.reply = {};
  r.check(writes.size() == expected.size(), "fewer replies than messages that need one");
  return 0;
}
