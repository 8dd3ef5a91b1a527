// SPDX-License-Identifier: MIT
// serve_stream on POSIX file descriptors (included by stream.ipp where BATCHRPC_HAS_FD_STREAMS):
// blocking or non-blocking descriptors, whole writes, and no SIGPIPE for a peer that is gone.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <optional>
#include <string_view>

#include "../config.hpp"
#include "../stream.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

// Blocks SIGPIPE on this thread while it lives, so that writing to a pipe whose reader is
// gone fails with EPIPE instead of killing the process. A SIGPIPE that became pending
// meanwhile was raised by that write (it is directed at the writing thread) and is taken off
// before the old mask comes back; one that was pending before is left alone.
// Blocks nest: only the outermost one on a thread changes the mask, so serve_stream holds one
// on its reading thread for the whole call and the writes made there cost no system call
// for the signal mask (four per write otherwise).
class SigpipeBlock {
 public:
  SigpipeBlock() {
    if (depth()++ > 0) return;
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &old_mask_);
    was_pending_ = pending();
  }
  ~SigpipeBlock() {
    if (--depth() > 0) return;
    if (!was_pending_ && pending()) {
      int taken = 0;
      sigwait(&sigpipe_, &taken);  // returns at once: it is pending and blocked
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  [[nodiscard]] static bool pending() {
    sigset_t set;
    sigemptyset(&set);
    return sigpending(&set) == 0 && sigismember(&set, SIGPIPE) == 1;
  }
  // How many blocks this thread holds.
  static int& depth() {
    static thread_local int blocks = 0;
    return blocks;
  }

  sigset_t sigpipe_{};
  sigset_t old_mask_{};
  bool was_pending_ = false;
};

// Waits until `fd` is ready for `events` (a non-blocking fd said EAGAIN); false if it cannot.
inline bool wait_ready(int fd, short events) {
  pollfd p{fd, events, 0};
  for (;;) {
    if (::poll(&p, 1, -1) >= 0) return true;  // an error or hang-up shows in the next call
    if (errno != EINTR) return false;
  }
}

// Reads what is there (at least one byte), waiting on a non-blocking fd; 0 at end, -1 on error.
inline std::ptrdiff_t read_fd(int fd, char* data, std::size_t size) {
  for (;;) {
    const ssize_t n = ::read(fd, data, size);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_ready(fd, POLLIN)) continue;
    return -1;
  }
}

#if defined(MSG_NOSIGNAL)
inline constexpr int no_sigpipe = MSG_NOSIGNAL;
#else
inline constexpr int no_sigpipe = 0;  // none here: a socket is written as a pipe is
#endif

// Writes all of `bytes`, waiting on a non-blocking fd; false once the fd fails (the peer is
// gone). Never raises SIGPIPE: a socket is written with MSG_NOSIGNAL, anything else (a pipe,
// as stdout often is) with SIGPIPE blocked on this thread.
inline bool write_fd(int fd, bool socket, std::string_view bytes) {
  const bool use_send = socket && no_sigpipe != 0;
  std::optional<SigpipeBlock> block;
  if (!use_send) block.emplace();
  while (!bytes.empty()) {
    const ssize_t n = use_send ? ::send(fd, bytes.data(), bytes.size(), no_sigpipe)
                               : ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_ready(fd, POLLOUT)) continue;
    return false;  // 0 bytes of a non-empty write would repeat for ever: a failure as well
  }
  return true;
}

inline bool is_socket(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace detail

BATCHRPC_DECL void serve_stream(Session& session, int in_fd, int out_fd, StreamOptions options) {
  const StreamReader read = [in_fd](char* data, std::size_t size) { return detail::read_fd(in_fd, data, size); };
  const bool socket = detail::is_socket(out_fd);
  const StreamWriter write = [out_fd, socket](std::string_view bytes) {
    return detail::write_fd(out_fd, socket, bytes);
  };
  // Replies written on this thread find SIGPIPE blocked already (see SigpipeBlock).
  std::optional<detail::SigpipeBlock> block;
  if (!socket || detail::no_sigpipe == 0) block.emplace();
  serve_stream(session, read, write, options);
}

}  // namespace rpc
