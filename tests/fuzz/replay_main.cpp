// SPDX-License-Identifier: MIT
// Replays files through a fuzz target without libFuzzer, so any compiler (GCC in the dev, asan
// and tsan presets) runs the corpus as a test: `replay_<target> FILE_OR_DIR...`. Each input runs
// in its own child process, in a heap buffer of exactly its size (a sanitizer sees any read
// past its end); every failing input is named, and the exit status is 1 if any failed.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

// A hang is a failure too: each input gets kReplaySeconds (libFuzzer's -timeout does this there).
constexpr unsigned kReplaySeconds = 60;

// Runs one input in a child process, so one failing input (an oracle abort, a sanitizer
// report, a hang) does not hide the others; returns false when it failed.
bool run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("replay: fork");
    return false;
  }
  if (pid == 0) {
    ::alarm(kReplaySeconds);  // SIGALRM ends the child: reported as a hang below
    const std::unique_ptr<std::uint8_t[]> exact(new std::uint8_t[bytes.empty() ? 1 : bytes.size()]);
    std::copy(bytes.begin(), bytes.end(), exact.get());
    LLVMFuzzerTestOneInput(exact.get(), bytes.size());  // an oracle failure aborts
    std::exit(0);  // not _exit: leak checkers run at exit
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    std::fprintf(stderr, "replay: FAILED (hang: no end in %u s): %s\n", kReplaySeconds, path.c_str());
  } else {
    std::fprintf(stderr, "replay: FAILED: %s\n", path.c_str());
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  std::size_t count = 0;
  std::size_t failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(arg);
    }
    if (files.empty()) {
      std::fprintf(stderr, "replay: no inputs in %s\n", argv[i]);
      ++failures;
    }
    for (const auto& f : files) {
      if (!run_file(f)) ++failures;
      ++count;
    }
  }
  std::printf("replay: %zu inputs, %zu failed\n", count, failures);
  return failures == 0 ? 0 : 1;
}
