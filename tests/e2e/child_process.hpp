// SPDX-License-Identifier: MIT
// A child process with pipes on its stdin, stdout and stderr, for end-to-end tests (POSIX).
//
// Every read and write takes a timeout and is built on poll(), so a server that hangs makes a
// test fail instead of hanging it. While waiting for one thing the helper keeps draining the
// child's stdout and stderr into buffers, so the child never blocks on a full pipe. The
// destructor kills a child that is still running (SIGKILL) and reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace e2e {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::milliseconds;

class ChildProcess {
 public:
  /// Starts `program` with `args` (not counting argv[0]). @throws std::system_error.
  ChildProcess(const std::string& program, const std::vector<std::string>& args);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  /// Writes all of `bytes` to the child's stdin; false if the child closed it or the time ran out.
  bool write(std::string_view bytes, Millis timeout);
  /// Closes the child's stdin (it sees end of input).
  void close_stdin();
  /// Closes our end of the child's stdout (its writes fail from then on) and drops what was read.
  void close_stdout();

  /// The next line of stdout without its '\n', or nothing at end of output or timeout.
  std::optional<std::string> read_line(Millis timeout);
  /// Exactly `size` bytes of stdout, or nothing at end of output or timeout.
  std::optional<std::string> read_bytes(std::size_t size, Millis timeout);
  /// Waits until stderr holds `needle`; returns all of stderr so far, or nothing on timeout.
  std::optional<std::string> wait_for_stderr(std::string_view needle, Millis timeout);

  /// Waits for the child to exit: its exit code, 128 + signal if a signal ended it, or nothing
  /// on timeout. Its remaining output stays readable afterwards.
  std::optional<int> wait_exit(Millis timeout);

  /// Stdout read but not yet consumed, and all of stderr (for diagnostics).
  [[nodiscard]] const std::string& unread_stdout() const { return out_; }
  [[nodiscard]] const std::string& stderr_text() const { return err_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  // Polls once (up to `deadline`), moving available output into the buffers and, when
  // `want_write`, returning true if stdin is writable.
  bool pump(Clock::time_point deadline, bool want_write);
  // Moves what is readable on `fd` into `buffer`; closes `fd` at end of output.
  static void drain(int& fd, std::string& buffer);
  bool reap(bool block);

  pid_t pid_ = -1;
  int in_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_;
  std::string err_;
  std::optional<int> exit_code_;
};

}  // namespace e2e
