// SPDX-License-Identifier: MIT
/// @file stream.hpp
/// Serving a session over a byte stream (stdio, a pipe, a socket): newline-delimited JSON or
/// `Content-Length:` framing.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string_view>

#include "config.hpp"
#include "framing.hpp"
#include "session.hpp"

/// 1 where `serve_stream` on file descriptors exists (POSIX systems), else 0.
#if !defined(BATCHRPC_HAS_FD_STREAMS)
#if defined(__unix__) || defined(__APPLE__)
#define BATCHRPC_HAS_FD_STREAMS 1
#else
#define BATCHRPC_HAS_FD_STREAMS 0
#endif
#endif

namespace rpc::inline BATCHRPC_ABI {

/// Settings of `serve_stream`.
struct StreamOptions {
  /// How messages are delimited.
  Framing framing = Framing::lines;
  /// Longest message accepted; 0 means the router's `Limits::max_message_bytes`. A longer
  /// one is answered `-32090 Message too large` and skipped without being buffered.
  std::size_t max_message_bytes = 0;
};

/// Reads up to `size` bytes into `data`: returns the number read, 0 at end of input, or -1 on
/// a read error (treated as end of input). Called on the thread that called `serve_stream`
/// only. It may throw (see `serve_stream`).
using StreamReader = std::function<std::ptrdiff_t(char* data, std::size_t size)>;
/// Writes all of `bytes` (one whole frame); returns false when the peer is gone. Throwing
/// counts as false. See `serve_stream` for the threads it is called on.
using StreamWriter = std::function<bool(std::string_view bytes)>;

/**
 * Serves one connection: reads messages with `read`, hands each to `session`, and writes each
 * reply (with its framing) with `write`, whole and never interleaved with another, one frame a
 * call. Messages that need no reply produce no output at all.
 *
 * The reading goes on while handlers run, so a later `notifications/cancel` reaches a slow
 * request — give the session an executor for that (without one, each message runs on the
 * reading thread before the next is read). Replies go out as they complete (correlate by id).
 * At end of input (the reader returns 0 or -1), what is in flight is finished and answered
 * before this returns.
 *
 * Two-way: while it runs, the session's `rpc::Peer` sends the server's own notifications and
 * requests through `write` as whole frames between the replies, and the client's Response
 * objects read are routed back to them (see `Session::attach`). At end of input, the server's
 * requests still waiting are answered `-32094`.
 *
 * When a write fails (the writer returns false or throws), the peer is taken to be gone:
 * every request in flight is cancelled (handlers that honour their stop token end early;
 * others are waited for), no more messages are handled and no more writes are made. Reading
 * stops when the reader next returns: one blocked then keeps this waiting until it does.
 *
 * A frame that cannot be read (a `Content-Length` header missing or invalid) is answered
 * `-32700` and ends the connection, since the stream cannot be resynchronised.
 *
 * Threads and lifetimes:
 * - `read` runs on the calling thread. `write` runs there too and, through the session's
 *   completions, on any thread that completes a request (the executor's threads, a thread
 *   answering an `rpc::Responder`, a thread cancelling, a thread using the session's
 *   `rpc::Peer`), also after `Session::handle` has returned. It is called one frame at a time, under the connection's write lock (that is
 *   what keeps frames whole), so it must not call into `session`: a completion it caused
 *   would wait for that lock. Nothing else of the caller's runs under a lock of this function.
 * - This returns (or throws) only after every completion of the messages it handed in has
 *   run, so neither callback is called once it has returned, however it ended. `session`
 *   (with its router and executor) and both callbacks must outlive the call.
 * - If `read` throws (or handing a message to the session does), what is in flight is
 *   cancelled, then the exception propagates. If `write` throws, the connection ends as for a
 *   failed write and the first such exception propagates. A reader that returns more than
 *   `size` is a `std::length_error`.
 */
BATCHRPC_DECL void serve_stream(Session& session, const StreamReader& read,
                                const StreamWriter& write, StreamOptions options = {});

#if BATCHRPC_HAS_FD_STREAMS
/**
 * `serve_stream` on file descriptors (for example `STDIN_FILENO`, `STDOUT_FILENO`, or one
 * socket for both), blocking or non-blocking (then waited on with `poll`); interrupted calls
 * are retried. They are not closed. A peer that has gone away is a failed write, never
 * a SIGPIPE: a socket is written with `MSG_NOSIGNAL`, anything else with SIGPIPE blocked on
 * the writing thread (a SIGPIPE that write raised is taken off that thread), so the process
 * needs no SIGPIPE handling. SIGPIPE is blocked for the write alone: handlers, and threads
 * started meanwhile, see the signal mask as the caller left it. When the process ignores
 * SIGPIPE as the call begins (`signal(SIGPIPE, SIG_IGN)`, as many servers do), writes are
 * made without blocking it, two system calls fewer each; a handler that stops ignoring it
 * during the call should not.
 *
 * Replies are written together where that delays none of them behind work that may take
 * long: the replies the reading thread makes while it answers the messages of one read are
 * held, and go out in one write (one wake-up of the client instead of one each) once that read
 * is used up, before the next read can block. The reading thread runs only cheap work while
 * it holds them: handlers registered `inline_only` (such as `ping`), errors, and answers that
 * come back to it (a `Responder` answered there, say). Before any other handler runs on it,
 * what is held is written, and the rest of that read's replies go out as they come; if that
 * write fails, the peer is gone and the handler is not run (it is answered `-32800`, for
 * nobody). The server's own messages (`rpc::Peer`), and replies completed on other threads,
 * are written at once, after what is held. At most 64 KiB is held.
 */
BATCHRPC_DECL void serve_stream(Session& session, int in_fd, int out_fd, StreamOptions options = {});
#endif

/// `serve_stream` on standard streams; `out` is written with SIGPIPE blocked as above (unless
/// the process ignores it as the call begins), and the replies to what one read returns are
/// written together as above. A read returns a line in lines framing, and otherwise what `in`
/// has buffered: `std::cin`, synchronised with stdio, buffers nothing, so each of its messages
/// is written alone. Serve stdio through `STDIN_FILENO` and `STDOUT_FILENO` for that.
BATCHRPC_DECL void serve_stream(Session& session, std::istream& in, std::ostream& out,
                                StreamOptions options = {});

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/stream.ipp"
#endif
