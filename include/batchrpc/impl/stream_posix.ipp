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
#include <string_view>

#include "../config.hpp"
#include "../stream.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {

// Blocks SIGPIPE on this thread while it lives, so that writing to a pipe whose reader is
// gone fails with EPIPE instead of killing the process. Unless the write is known to have
// succeeded (succeeded()), a SIGPIPE that became pending meanwhile was raised by it (it is
// directed at the writing thread) and is taken off before SIGPIPE is unblocked again; one that
// was pending before is left alone. A write that succeeded raised none, so a SIGPIPE from
// elsewhere is then left to be delivered. Only SIGPIPE's own bit is restored, and only user
// code that writes (an ostream's buffer) runs inside. Usually two system calls in all: on a
// thread that had SIGPIPE unblocked, none can be pending when the block starts.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &old_mask_);
    was_blocked_ = sigismember(&old_mask_, SIGPIPE) == 1;
    was_pending_ = was_blocked_ && pending();  // unblocked, it would have been delivered
  }
  ~SigpipeBlock() {
    if (!succeeded_ && !was_pending_ && pending()) {
      int taken = 0;
      sigwait(&sigpipe_, &taken);  // returns at once: it is pending and blocked
    }
    if (!was_blocked_) pthread_sigmask(SIG_UNBLOCK, &sigpipe_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

  // The write made under this block succeeded: it raised no SIGPIPE.
  void succeeded() noexcept { succeeded_ = true; }

 private:
  [[nodiscard]] static bool pending() {
    sigset_t set;
    sigemptyset(&set);
    return sigpending(&set) == 0 && sigismember(&set, SIGPIPE) == 1;
  }

  sigset_t sigpipe_{};
  sigset_t old_mask_{};
  bool was_blocked_ = false;
  bool was_pending_ = false;
  bool succeeded_ = false;
};

// SIGPIPE is ignored by the process (as servers often set it): a write to a pipe whose reader
// is gone then fails with EPIPE, and needs no block.
// (glibc's sa_handler is a macro naming itself, which clang's -Weverything reports.)
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdisabled-macro-expansion"
#endif
inline bool sigpipe_ignored() noexcept {
  struct sigaction action {};
  return ::sigaction(SIGPIPE, nullptr, &action) == 0 && (action.sa_flags & SA_SIGINFO) == 0 &&
         action.sa_handler == SIG_IGN;
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

// Runs `write` (true when it succeeded) so that it cannot raise SIGPIPE: as it is when the
// process ignores SIGPIPE (`ignored`, looked up when serving began), else inside a SigpipeBlock.
template <class Write>
bool without_sigpipe(bool ignored, Write&& write) {
  if (ignored) return write();
  SigpipeBlock block;
  if (!write()) return false;
  block.succeeded();
  return true;
}

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

// Writes all of `bytes` (with send() and MSG_NOSIGNAL when `use_send`), waiting on a
// non-blocking fd; false once the fd fails.
inline bool write_whole(int fd, bool use_send, std::string_view bytes) {
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

// Writes all of `bytes`, waiting on a non-blocking fd; false once the fd fails (the peer is
// gone). Never raises SIGPIPE: a socket is written with MSG_NOSIGNAL, anything else (a pipe,
// as stdout often is) as without_sigpipe() writes.
inline bool write_fd(int fd, bool socket, bool sigpipe_is_ignored, std::string_view bytes) {
  const bool use_send = socket && no_sigpipe != 0;
  if (use_send) return write_whole(fd, true, bytes);
  return without_sigpipe(sigpipe_is_ignored, [&] { return write_whole(fd, false, bytes); });
}

inline bool is_socket(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace detail

BATCHRPC_DECL void serve_stream(Session& session, int in_fd, int out_fd, StreamOptions options) {
  const StreamReader read = [in_fd](char* data, std::size_t size) { return detail::read_fd(in_fd, data, size); };
  const StreamWriter write = [out_fd, socket = detail::is_socket(out_fd),
                               ignored = detail::sigpipe_ignored()](std::string_view bytes) {
    return detail::write_fd(out_fd, socket, ignored, bytes);
  };
  detail::serve_connection(session, read, write, options, true);
}

}  // namespace rpc
