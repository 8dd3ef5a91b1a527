// SPDX-License-Identifier: MIT
// Splitting a byte stream into messages (newline-delimited or Content-Length framing), and
// framing replies: shared by serve_stream (blocking) and the network transports (async).
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../framing.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

// The first '\n' in [data, end), or end. memchr, not std::find: libstdc++'s find looks at a
// byte at a time, and lines of batches are kilobytes long.
inline const char* find_newline(const char* data, const char* end) noexcept {
  const void* found = std::memchr(data, '\n', static_cast<std::size_t>(end - data));
  return found != nullptr ? static_cast<const char*>(found) : end;
}

// What a framer finds in the bytes it is fed.
class FrameSink {
 public:
  // One whole message. `owned`, when not null, is a buffer of the framer's that holds the
  // message as a prefix and may be taken over (a large message is not held twice). Returns
  // false to pause: feed() returns right after this message.
  virtual bool message(std::string_view text, std::string* owned) = 0;
  // A message longer than the limit was skipped without being buffered.
  virtual void too_large() = 0;
  // The stream cannot be resynchronised (a Content-Length header missing or invalid): the
  // framer has failed and takes no more bytes.
  virtual void bad_frame(const char* why) = 0;

 protected:
  ~FrameSink() = default;
};

// Incremental framing of one stream's input.
class StreamFramer {
 public:
  StreamFramer(Framing framing, std::size_t max_message_bytes)
      : framing_(framing), max_(max_message_bytes) {}

  // Feeds bytes as they arrive; returns how many were consumed: all of them, unless the sink
  // paused (feed the rest later) or the framer failed.
  std::size_t feed(const char* data, std::size_t size, FrameSink& sink) {
    if (failed_) return 0;
    return framing_ == Framing::lines ? feed_lines(data, size, sink) : feed_frames(data, size, sink);
  }

  // End of input: a last line without its newline still counts.
  void finish(FrameSink& sink) {
    if (!failed_ && framing_ == Framing::lines && !discarding_ && !pending_.empty()) line(pending_, &pending_, sink);
    pending_.clear();
  }

  [[nodiscard]] bool failed() const noexcept { return failed_; }
  // True while a message has begun but is not whole yet.
  [[nodiscard]] bool mid_message() const noexcept { return in_body_ || discarding_ || !pending_.empty(); }
  [[nodiscard]] Framing framing() const noexcept { return framing_; }
  [[nodiscard]] std::size_t max_message_bytes() const noexcept { return max_; }

 private:
  std::size_t feed_lines(const char* const first, std::size_t size, FrameSink& sink) {
    const char* data = first;
    const char* end = data + size;
    while (data != end) {
      const char* newline = find_newline(data, end);
      if (discarding_) {  // skipping the rest of an over-long line
        if (newline == end) return size;
        discarding_ = false;
        data = newline + 1;
        continue;
      }
      const auto length = static_cast<std::size_t>(newline - data);
      if (pending_.size() + length > max_ + 1) {  // +1: a '\r' may follow
        pending_.clear();
        sink.too_large();
        discarding_ = newline == end;
        data = newline == end ? end : newline + 1;
        continue;
      }
      if (newline == end) {
        pending_.append(data, length);
        return size;
      }
      bool go_on = true;
      if (pending_.empty()) {
        go_on = line(std::string_view(data, length), nullptr, sink);
      } else {
        pending_.append(data, length);
        go_on = line(pending_, &pending_, sink);
        pending_.clear();
      }
      data = newline + 1;
      if (!go_on) break;
    }
    return static_cast<std::size_t>(data - first);
  }

  // One whole line, without its '\n'. The size is checked before blankness: feed_lines has
  // already answered every line longer than the limit plus a '\r', blank or not, so a blank
  // line that used only the '\r' allowance must be answered the same way.
  bool line(std::string_view text, std::string* owned, FrameSink& sink) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.size() > max_) {  // the '\r' allowance unused
      sink.too_large();
      return true;
    }
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) return true;  // blank line
    if (owned != nullptr) owned->resize(text.size());  // the message is a prefix ('\r' dropped)
    return sink.message(text, owned);
  }

  // Content-Length framing: headers up to a blank line, then exactly that many bytes.
  std::size_t feed_frames(const char* const first, std::size_t size, FrameSink& sink) {
    const char* data = first;
    const char* end = data + size;
    while (data != end) {
      if (!in_body_) {
        const char* newline = find_newline(data, end);
        pending_.append(data, newline);
        if (pending_.size() > kMaxHeaderBytes) {
          fail("header too long", sink);
          return 0;
        }
        if (newline == end) return size;
        data = newline + 1;
        if (!header_line(sink)) return failed_ ? 0 : static_cast<std::size_t>(data - first);
        continue;
      }
      const std::size_t take = std::min(body_left_, static_cast<std::size_t>(end - data));
      if (!discarding_) body_.append(data, take);
      data += take;
      body_left_ -= take;
      if (body_left_ == 0 && !end_body(sink)) break;
    }
    return static_cast<std::size_t>(data - first);
  }

  // The body is complete: delivered unless it was too large, then back to reading headers.
  // False when the sink paused.
  bool end_body(FrameSink& sink) {
    const bool deliver = !discarding_;
    discarding_ = false;
    in_body_ = false;
    if (!deliver) return true;
    const bool go_on = sink.message(body_, &body_);
    body_.clear();
    return go_on;
  }

  // One header line is in pending_ (without its '\n'). False when the framer failed or the
  // sink paused (an empty body is delivered at once).
  bool header_line(FrameSink& sink) {
    std::string_view h = pending_;
    if (!h.empty() && h.back() == '\r') h.remove_suffix(1);
    if (!h.empty()) {
      const auto colon = h.find(':');
      if (colon == std::string_view::npos) return fail("header without a colon", sink);
      std::string name(h.substr(0, colon));
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (name == "content-length") {
        std::string_view value = h.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
        std::size_t n = 0;
        const auto r = std::from_chars(value.data(), value.data() + value.size(), n);
        if (value.empty() || r.ec != std::errc{} || r.ptr != value.data() + value.size()) {
          return fail("invalid Content-Length", sink);
        }
        content_length_ = n;
      }
      pending_.clear();
      return true;
    }
    pending_.clear();
    if (!content_length_) return fail("missing Content-Length", sink);
    body_left_ = *content_length_;
    in_body_ = true;
    content_length_.reset();
    discarding_ = body_left_ > max_;
    if (discarding_) sink.too_large();
    if (body_left_ == 0) return end_body(sink);  // an empty body is not JSON: a parse error
    return true;
  }

  bool fail(const char* why, FrameSink& sink) {
    failed_ = true;
    sink.bad_frame(why);
    return false;
  }

  static constexpr std::size_t kMaxHeaderBytes = 8192;

  Framing framing_;
  std::size_t max_;
  std::string pending_;  // a partial line, or a header line being read
  std::string body_;     // a Content-Length body being read
  std::optional<std::size_t> content_length_;
  // Every length is a valid Content-Length (even SIZE_MAX), so the state is its own flag.
  bool in_body_ = false;
  std::size_t body_left_ = 0;
  bool discarding_ = false;  // skipping an over-long message
  bool failed_ = false;
};

// `reply` with its framing, appended to `out`.
inline void append_frame(std::string& out, Framing framing, std::string_view reply) {
  if (framing == Framing::content_length) {
    out += "Content-Length: ";
    out += std::to_string(reply.size());
    out += "\r\n\r\n";
    out += reply;
  } else {
    out += reply;
    out += '\n';
  }
}

// The reply to a message skipped for being longer than `max` bytes.
inline std::string too_large_reply(std::size_t max) {
  return R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":)" +
         std::to_string(max) + "}}}";
}

// The reply to a frame that cannot be read; the connection ends after it.
inline std::string bad_frame_reply(const char* why) {
  return std::string(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"reason":"invalid frame: )") +
         why + "\"}}}";
}

}  // namespace detail
}  // namespace rpc
