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
#include <utility>

#include "../config.hpp"
#include "../detail/reply_hold.hpp"
#include "../detail/stream_framer.hpp"
#include "../stream.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {
// serve_stream's loop. With `writes_together`, the writer may be given several frames at once
// (see StreamConnection).
BATCHRPC_DECL void serve_connection(Session& session, const StreamReader& read, const StreamWriter& write,
                                    StreamOptions options, bool writes_together);
}  // namespace rpc::detail

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
//
// With `writes_together`, the replies that the reading thread makes while it answers one
// read's messages are held and written together when that read is used up: one write, and
// one wake-up of the peer, for what would be one each. Held replies never wait behind work
// that may take long: before a handler that is not `inline_only` runs on the reading thread,
// what is held is written (release_held_replies), and the rest of that read is written as it
// comes; should that write fail, the peer is gone and the handler is not run. Nor do they
// wait for more input: the read is used up before the next one can block. The server's own
// messages, and replies made on other threads, are written at once, after what is held.
class StreamConnection final : public FrameSink, private ReplyHold {
 public:
  StreamConnection(Session& session, const StreamWriter& write, StreamOptions options, bool writes_together)
      : ReplyHold(&release_hold),
        session_(session),
        write_(write),
        framer_(options.framing, options.max_message_bytes != 0 ? options.max_message_bytes
                                                                : session.router().limits().max_message_bytes),
        writes_together_(writes_together) {}

  // Feeds bytes as they arrive; false once the connection must end. Returns with nothing held.
  bool feed(const char* data, std::size_t size) {
    const HoldScope holding(*this);
    framer_.feed(data, size, *this);  // never paused: every message is handed in
    return !framer_.failed();
  }

  // End of input: a last line without its newline still counts.
  void finish() {
    const HoldScope holding(*this);
    framer_.finish(*this);
  }

  // True once a write has failed: the peer is gone, nothing more is read or written.
  [[nodiscard]] bool peer_gone() const { return peer_gone_.load(); }

  // The writer's exception, if it threw (the first one; later writes are not made).
  [[nodiscard]] std::exception_ptr write_error() const {
    std::lock_guard<std::mutex> lock(write_mutex_);
    return write_error_;
  }

  // Writes one message with its framing, whole; false when the peer is gone. A reply that the
  // reading thread makes while it holds is held instead (up to kMostHeld bytes). Called on the
  // reading thread and, through completions and rpc::Peer, on any thread; the lock keeps each
  // frame whole on the stream, so the writer (user code) runs under it by design.
  bool send(std::string_view message, bool is_reply) {
    {
      std::lock_guard<std::mutex> lock(write_mutex_);
      if (peer_gone_.load()) return false;
      try {
        append_frame(frame_, framer_.framing(), message);
        if (is_reply && reply_hold == this && holding_ && frame_.size() < kMostHeld) return true;
      } catch (...) {  // no memory for the frame: the peer would wait for it for ever
        write_error_ = std::current_exception();
        peer_gone_.store(true);
      }
      if (!peer_gone_.load() && write_locked()) return true;
    }
    peer_lost();
    return false;
  }

  // Writes what is held, and holds nothing more until the next read; false once the peer is
  // gone (the connection is over). On the reading thread only.
  bool release() noexcept {
    holding_ = false;
    {
      std::lock_guard<std::mutex> lock(write_mutex_);
      if (peer_gone_.load()) return false;
      if (frame_.empty() || write_locked()) return true;
    }
    peer_lost();
    return false;
  }

 private:
  // Most bytes held: past this, what is held is written at once (a read's replies can be far
  // larger than the read).
  static constexpr std::size_t kMostHeld = std::size_t{1} << 16;

  static bool release_hold(ReplyHold& hold) noexcept {
    return static_cast<StreamConnection&>(hold).release();
  }

  // This connection holds the reading thread's replies while it lives; what is held is
  // written when it ends, however the read ended. A connection served from inside a handler
  // of another one on this thread (which should not happen in a cheap one) first writes what
  // the other holds, since only the innermost hold is released before a handler runs.
  class HoldScope {
   public:
    explicit HoldScope(StreamConnection& connection) : connection_(connection) {
      if (!connection.writes_together_) return;
      outer_ = std::exchange(reply_hold, static_cast<ReplyHold*>(&connection));
      if (outer_ != nullptr) outer_->release();
      connection.holding_ = true;
    }
    ~HoldScope() {
      if (!connection_.writes_together_) return;
      reply_hold = outer_;
      connection_.release();
    }
    HoldScope(const HoldScope&) = delete;
    HoldScope& operator=(const HoldScope&) = delete;

   private:
    StreamConnection& connection_;
    ReplyHold* outer_ = nullptr;
  };

  // Writes and empties frame_, under write_mutex_; false (the peer gone) when that fails.
  bool write_locked() noexcept {
    try {
      const bool written = write_(frame_);
      frame_.clear();
      if (written) return true;
    } catch (...) {  // a reply that cannot go out leaves the peer waiting: the connection ends
      write_error_ = std::current_exception();
    }
    peer_gone_.store(true);  // before cancelling: see serve_stream
    return false;
  }

  // Nobody will read the replies: handlers that honour their stop token end early. Outside
  // the lock, since cancelling answers queued requests at once, through send(). Out of memory
  // to cancel, serve_stream cancels again once reading stops.
  void peer_lost() noexcept {
    try {
      session_.cancel_all();
    } catch (...) {
    }
  }

  // `message` is copied by the session; `owned`, a message read into a buffer of the
  // framer's, is taken over instead (a large message is not held twice).
  bool message(std::string_view message, std::string* owned) override {
    if (peer_gone()) return true;  // reading has stopped; what was read but not handled is dropped
    auto reply_to = [this](std::optional<std::string_view> reply) {
      if (reply) send(*reply, true);
    };
    if (owned != nullptr) {
      session_.handle(std::move(*owned), std::move(reply_to));
      owned->clear();
    } else {
      session_.handle(message, std::move(reply_to));
    }
    return true;
  }

  void too_large() override { send(too_large_reply(framer_.max_message_bytes()), true); }
  void bad_frame(const char* why) override { send(bad_frame_reply(why), true); }

  Session& session_;
  const StreamWriter& write_;
  StreamFramer framer_;
  const bool writes_together_;
  bool holding_ = false;  // replies are held now; the reading thread's alone

  mutable std::mutex write_mutex_;
  std::string frame_;  // what is held, then what is being written
  std::exception_ptr write_error_;
  std::atomic<bool> peer_gone_{false};  // set under write_mutex_, read without it
};

BATCHRPC_DECL void serve_connection(Session& session, const StreamReader& read, const StreamWriter& write,
                                    StreamOptions options, bool writes_together) {
  detail::StreamConnection connection(session, write, options, writes_together);
  // The server's own messages go out as whole frames between the replies, at once.
  session.attach([&connection](std::string message) { return connection.send(message, false); });
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

}  // namespace detail

BATCHRPC_DECL void serve_stream(Session& session, const StreamReader& read,
                                const StreamWriter& write, StreamOptions options) {
  detail::serve_connection(session, read, write, options, false);  // the writer is promised one frame a call
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
  detail::serve_connection(session, read, write, options, true);
}

}  // namespace rpc
