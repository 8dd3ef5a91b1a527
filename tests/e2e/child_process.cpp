// SPDX-License-Identifier: MIT
// ChildProcess: posix_spawn with three pipes, every wait bounded by poll().
#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <system_error>

extern char** environ;

namespace e2e {

namespace {

[[noreturn]] void fail(const char* what, int error = errno) {
  throw std::system_error(error, std::generic_category(), what);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) fail("fcntl");
}

// Pipes that are closed on exec, so no other child inherits our ends.
struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail("pipe2");
    read = fds[0];
    write = fds[1];
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_fd(read);
    close_fd(write);
  }
};

int millis_until(Clock::time_point deadline) {
  const Millis::rep left = std::chrono::ceil<Millis>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<Millis::rep>(left, 0, 60'000));
}

}  // namespace

ChildProcess::ChildProcess(const std::string& program, const std::vector<std::string>& args) {
  // Writing to a child that has exited must fail with EPIPE, not kill the test.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });

  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  if (int e = posix_spawn_file_actions_init(&actions); e != 0)
    fail("posix_spawn_file_actions_init", e);
  posix_spawnattr_t attributes;
  if (int e = posix_spawnattr_init(&attributes); e != 0) {
    posix_spawn_file_actions_destroy(&actions);
    fail("posix_spawnattr_init", e);
  }
  // dup2 clears close-on-exec on the child's 0, 1 and 2; the child gets SIGPIPE's default back.
  posix_spawn_file_actions_adddup2(&actions, in.read, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);

  std::vector<std::string> strings;
  strings.reserve(args.size() + 1);
  strings.push_back(program);
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  const int spawned =
      ::posix_spawn(&pid_, program.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) fail(("posix_spawn " + program).c_str(), spawned);

  std::swap(in_, in.write);
  std::swap(out_fd_, out.read);
  std::swap(err_fd_, err.read);
  set_nonblocking(in_);
  set_nonblocking(out_fd_);
  set_nonblocking(err_fd_);
}

ChildProcess::~ChildProcess() {
  close_fd(in_);
  if (!exit_code_) {
    ::kill(pid_, SIGKILL);
    reap(true);
  }
  close_fd(out_fd_);
  close_fd(err_fd_);
}

void ChildProcess::drain(int& fd, std::string& buffer) {
  char chunk[1 << 16];
  while (fd >= 0) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0) {
      close_fd(fd);
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return;
    } else {
      close_fd(fd);
    }
  }
}

bool ChildProcess::pump(Clock::time_point deadline, bool want_write) {
  pollfd fds[3];
  nfds_t count = 0;
  if (out_fd_ >= 0) fds[count++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[count++] = {err_fd_, POLLIN, 0};
  const bool writing = want_write && in_ >= 0;
  if (writing) fds[count++] = {in_, POLLOUT, 0};
  const int ready = ::poll(count == 0 ? nullptr : fds, count, millis_until(deadline));
  if (ready <= 0) return false;  // timeout, or EINTR: the caller checks its deadline
  drain(out_fd_, out_);
  drain(err_fd_, err_);
  return writing && (fds[count - 1].revents & (POLLOUT | POLLERR | POLLHUP)) != 0;
}

bool ChildProcess::write(std::string_view bytes, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!bytes.empty()) {
    if (in_ < 0) return false;
    const ssize_t n = ::write(in_, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;  // EPIPE: the child is gone
    if (Clock::now() >= deadline) return false;
    pump(deadline, true);
  }
  return true;
}

void ChildProcess::close_stdin() { close_fd(in_); }

void ChildProcess::close_stdout() {
  close_fd(out_fd_);
  out_.clear();
}

std::optional<std::string> ChildProcess::read_line(Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (const auto newline = out_.find('\n'); newline != std::string::npos) {
      std::string line = out_.substr(0, newline);
      out_.erase(0, newline + 1);
      return line;
    }
    if (out_fd_ < 0 || Clock::now() >= deadline) return std::nullopt;
    pump(deadline, false);
  }
}

std::optional<std::string> ChildProcess::read_bytes(std::size_t size, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (out_.size() >= size) {
      std::string bytes = out_.substr(0, size);
      out_.erase(0, size);
      return bytes;
    }
    if (out_fd_ < 0 || Clock::now() >= deadline) return std::nullopt;
    pump(deadline, false);
  }
}

std::optional<std::string> ChildProcess::wait_for_stderr(std::string_view needle, Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (err_.find(needle) != std::string::npos) return err_;
    if (err_fd_ < 0 || Clock::now() >= deadline) return std::nullopt;
    pump(deadline, false);
  }
}

bool ChildProcess::reap(bool block) {
  if (exit_code_) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r != pid_) return false;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

std::optional<int> ChildProcess::wait_exit(Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!reap(false)) {
    if (Clock::now() >= deadline) return std::nullopt;
    pump(std::min(deadline, Clock::now() + Millis(5)), false);
  }
  // The child is gone: collect what it wrote last (its pipes reach end of output now).
  while ((out_fd_ >= 0 || err_fd_ >= 0) && Clock::now() < deadline) pump(deadline, false);
  return exit_code_;
}

}  // namespace e2e
