// SPDX-License-Identifier: MIT
// Runs one hostile case in a forked child and measures how much memory handling it took: the
// child builds its input, resets its peak-RSS mark, handles the input, and reports the reply
// with its resident-set growth (VmHWM after - VmRSS before, from /proc/self/status).
#pragma once

#include <malloc.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace stress {

// The sanitizers' shadow memory, redzones and quarantine add to every allocation: bounds are
// stated for a plain build and multiplied by `sanitizer_factor` (measured: ThreadSanitizer
// ~5 x, AddressSanitizer ~2-3 x); the biggest inputs are made `sanitizer_shrink` times smaller.
#if defined(__SANITIZE_THREAD__)
inline constexpr double sanitizer_factor = 6.0;
#elif defined(__SANITIZE_ADDRESS__)
inline constexpr double sanitizer_factor = 4.0;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr double sanitizer_factor = 6.0;
#elif __has_feature(address_sanitizer)
inline constexpr double sanitizer_factor = 4.0;
#else
inline constexpr double sanitizer_factor = 1.0;
#endif
#else
inline constexpr double sanitizer_factor = 1.0;
#endif
inline constexpr bool sanitized = sanitizer_factor != 1.0;
inline constexpr std::size_t sanitizer_shrink = sanitized ? 4 : 1;

inline constexpr std::size_t KiB = 1024;
inline constexpr std::size_t MiB = 1024 * KiB;

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), or 0.
inline std::size_t status_bytes(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.compare(0, field.size(), field) == 0 && line.size() > field.size() && line[field.size()] == ':') {
      return static_cast<std::size_t>(std::strtoull(line.c_str() + field.size() + 1, nullptr, 10)) * KiB;
    }
  }
  return 0;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false when the kernel refuses.
inline bool reset_peak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

struct Measured {
  bool child_ok = false;              // the child ran to the end and reported
  std::optional<std::string> reply;   // what the case answered (nullopt: nothing)
  std::size_t input_bytes = 0;        // the size of the hostile input
  std::size_t working_bytes = 0;      // peak RSS growth while handling it
  bool peak_reset = false;            // false: the growth also counts building the input

  // Allowed growth: `multiple` x the input plus `base` (both multiplied under a sanitizer).
  [[nodiscard]] std::size_t bound(double multiple, std::size_t base) const {
    return static_cast<std::size_t>(sanitizer_factor *
                                    (multiple * static_cast<double>(input_bytes) + static_cast<double>(base)));
  }
};

namespace detail {
inline void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}
}  // namespace detail

/**
 * Forks; the child calls `make()` (the input, any type with size()), then `run(input)` (the
 * reply, a std::optional<std::string>), measuring only `run`. The parent gets the reply and
 * the figures. Any failure in the child (a crash, an abort) shows as `child_ok == false`.
 */
template <class Make, class Run>
Measured in_child(Make make, Run run) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return {};
  if (pid == 0) {
    ::close(fds[0]);
    auto input = make();
    const std::size_t input_bytes = input.size();
#if defined(__GLIBC__)
    // Memory freed while the input was built stays resident in the heap and would be reused
    // unseen: give it back first, so that the growth counts everything the case takes.
    ::malloc_trim(0);
#endif
    const bool peak_reset = reset_peak();
    const std::size_t before = status_bytes("VmRSS");
    const std::optional<std::string> reply = run(input);
    const std::size_t peak = status_bytes("VmHWM");
    const std::string head = std::to_string(reply.has_value()) + " " + std::to_string(input_bytes) + " " +
                             std::to_string(peak > before ? peak - before : 0) + " " + std::to_string(peak_reset) + "\n";
    detail::write_all(fds[1], head);
    if (reply) detail::write_all(fds[1], *reply);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string got;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;
    got.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Measured m;
  const std::size_t eol = got.find('\n');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || eol == std::string::npos) return m;
  int has_reply = 0;
  unsigned long long input_bytes = 0;
  unsigned long long working = 0;
  int peak_reset = 0;
  if (std::sscanf(got.c_str(), "%d %llu %llu %d", &has_reply, &input_bytes, &working, &peak_reset) != 4) return m;
  m.child_ok = true;
  m.input_bytes = static_cast<std::size_t>(input_bytes);
  m.working_bytes = static_cast<std::size_t>(working);
  m.peak_reset = peak_reset != 0;
  if (has_reply != 0) m.reply = got.substr(eol + 1);
  return m;
}

}  // namespace stress
