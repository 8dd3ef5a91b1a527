// SPDX-License-Identifier: MIT
// Runs a body in a forked child and reports how it ended: for the checks that stop a program
// (usage errors caught in debug builds), which must abort with their message.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

namespace death {

struct Ending {
  bool aborted = false;  // killed by SIGABRT
  std::string stderr_text;
};

/// Forks; the child runs `body` with its stderr captured, then exits 0. The parent waits.
template <class F>
Ending in_child(F body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return {};
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  Ending ending;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    ending.stderr_text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ending.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return ending;
}

}  // namespace death
