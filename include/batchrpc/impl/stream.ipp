// SPDX-License-Identifier: MIT
// Non-template bodies of stream.hpp: framing, over-long frames, whole writes, a peer that
// goes away. File descriptors (POSIX only) are in stream_posix.ipp.
#pragma once

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <exception>
#include <istream>
#include <streambuf>
#include <mutex>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>

#include "../config.hpp"
#include "../detail/stream_framer.hpp"
#include "../stream.hpp"

#if BATCHRPC_HAS_FD_STREAMS
#include "stream_posix.ipp"
#else
namespace rpc::inline BATCHRPC_ABI::detail {
inline bool sigpipe_ignored() noexcept { return true; }  // no SIGPIPE outside POSIX
template <class Write>
bool without_sigpipe(bool, Write&& write) {
  return write();
}
}  // namespace rpc::detail
#endif

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

// One stream connection: frames messages in, writes framed replies out.
class StreamConnection final : public FrameSink {
 public:
  StreamConnection(Session& session, const StreamWriter& write, StreamOptions options)
      : session_(session),
        write_(write),
        framer_(options.framing, options.max_message_bytes != 0 ? options.max_message_bytes
                                                                : session.router().limits().max_message_bytes) {}

  // Feeds bytes as they arrive; false once the connection must end.
  bool feed(const char* data, std::size_t size) {
    framer_.feed(data, size, *this);  // never paused: every message is handed in
    return !framer_.failed();
  }

  // End of input: a last line without its newline still counts.
  void finish() { framer_.finish(*this); }

  // True once a write has failed: the peer is gone, nothing more is read or written.
  [[nodiscard]] bool peer_gone() const { return peer_gone_.load(); }

  // The writer's exception, if it threw (the first one; later writes are not made).
  [[nodiscard]] std::exception_ptr write_error() const {
    std::lock_guard<std::mutex> lock(write_mutex_);
    return write_error_;
  }

  // Writes one message (a reply, or the server's own) with its framing, whole; false when the
  // peer is gone. Called on the reading thread and, through completions and rpc::Peer, on
  // any thread; the lock keeps each frame whole on the stream, so the writer (user code) runs
  // under it by design.
  bool send(std::string_view message) {
    {
      std::lock_guard<std::mutex> lock(write_mutex_);
      if (peer_gone_.load()) return false;
      try {
        frame_.clear();
        append_frame(frame_, framer_.framing(), message);
        if (write_(frame_)) return true;
      } catch (...) {  // a reply that cannot go out leaves the peer waiting: the connection ends
        write_error_ = std::current_exception();
      }
      peer_gone_.store(true);  // before cancelling: see serve_stream
    }
    // Nobody will read the replies: handlers that honour their stop token end early. Outside
    // the lock, since cancelling answers queued requests at once, through send().
    session_.cancel_all();
    return false;
  }

 private:
  // `message` is copied by the session; `owned`, a message read into a buffer of the
  // framer's, is taken over instead (a large message is not held twice).
  bool message(std::string_view message, std::string* owned) override {
    if (peer_gone()) return true;  // reading has stopped; what was read but not handled is dropped
    auto reply_to = [this](std::optional<std::string_view> reply) {
      if (reply) send(*reply);
    };
    if (owned != nullptr) {
      session_.handle(std::move(*owned), std::move(reply_to));
      owned->clear();
    } else {
      session_.handle(message, std::move(reply_to));
    }
    return true;
  }

  void too_large() override { send(too_large_reply(framer_.max_message_bytes())); }
  void bad_frame(const char* why) override { send(bad_frame_reply(why)); }

  Session& session_;
  const StreamWriter& write_;
  StreamFramer framer_;

  mutable std::mutex write_mutex_;
  std::string frame_;
  std::exception_ptr write_error_;
  std::atomic<bool> peer_gone_{false};  // set under write_mutex_, read without it
};

}  // namespace detail

BATCHRPC_DECL void serve_stream(Session& session, const StreamReader& read,
                                const StreamWriter& write, StreamOptions options) {
  detail::StreamConnection connection(session, write, options);
  // The server's own messages go out as whole frames between the replies.
  session.attach([&connection](std::string message) { return connection.send(message); });
  std::exception_ptr failure;
  try {
    char chunk[1 << 16];
    for (;;) {
      const std::ptrdiff_t n = read(chunk, sizeof chunk);
      if (n > static_cast<std::ptrdiff_t>(sizeof chunk)) {
        throw std::length_error("rpc::serve_stream: the reader returned more bytes than it was given room for");
      }
      if (n <= 0) {
        connection.finish();
        break;
      }
      if (!connection.feed(chunk, static_cast<std::size_t>(n)) || connection.peer_gone()) break;
    }
  } catch (...) {  // the reader, the session or a reply's framing: the connection ends
    failure = std::current_exception();
  }
  // No more input, so no answer from the client: the server's requests still waiting are
  // answered now (their handlers may then reply). The handlers still running may still send
  // their progress and log messages, up to drain().
  session.end_input();
  // Completions refer to `connection`, so none may run after we return, whatever ended the
  // loop. A failed write cancels what was in flight then, but a message handed in after that
  // (between the reading thread's last look and the cancel) is cancelled here: the flag is
  // set before that cancel, and read here after the last hand-in.
  if (failure || connection.peer_gone()) {
    try {
      session.cancel_all();
    } catch (...) {  // out of memory: the requests are still waited for below
    }
  }
  session.drain();  // every completion has run: every reply is written (or dropped, peer gone)
  // Nothing more is sent through `connection` once detach() has returned: a handle on the
  // session's Peer kept elsewhere gets false from then on.
  session.detach();
  if (!failure) failure = connection.write_error();
  if (failure) std::rethrow_exception(failure);
}

BATCHRPC_DECL void serve_stream(Session& session, std::istream& in, std::ostream& out,
                                StreamOptions options) {
  // Blocks for the first byte only, then takes what is there without waiting: lines framing
  // reads to the end of the line (the framer waits for it anyway); otherwise what the stream
  // has buffered. std::cin synchronised with stdio buffers nothing of its own, so reading it
  // by what is buffered went a byte per call.
  const StreamReader read = [&in, lines = options.framing == Framing::lines](char* data,
                                                                              std::size_t size) -> std::ptrdiff_t {
    std::streambuf* buffer = in.rdbuf();
    if (!in || buffer == nullptr || size == 0) return 0;
    constexpr auto eof = std::char_traits<char>::eof();
    auto c = buffer->sbumpc();
    if (c == eof) {
      in.setstate(std::ios_base::eofbit);
      return 0;
    }
    std::size_t n = 0;
    data[n++] = std::char_traits<char>::to_char_type(c);
    if (lines) {
      while (n < size && data[n - 1] != '\n') {
        if ((c = buffer->sbumpc()) == eof) {
          in.setstate(std::ios_base::eofbit);
          break;
        }
        data[n++] = std::char_traits<char>::to_char_type(c);
      }
    } else if (const std::streamsize buffered = buffer->in_avail(); buffered > 0) {
      const auto more = std::min(static_cast<std::size_t>(buffered), size - n);
      n += static_cast<std::size_t>(buffer->sgetn(data + n, static_cast<std::streamsize>(more)));
    }
    return static_cast<std::ptrdiff_t>(n);
  };
  // std::cout may be a pipe whose reader is gone.
  const StreamWriter write = [&out, ignored = detail::sigpipe_ignored()](std::string_view bytes) {
    return detail::without_sigpipe(ignored, [&] {
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      out.flush();
      return static_cast<bool>(out);
    });
  };
  serve_stream(session, read, write, options);
}

}  // namespace rpc
