// SPDX-License-Identifier: MIT
// rpc::ThreadPool's lingering workers: tasks run whatever the linger, a task no lingering worker
// can take wakes a sleeping one, and a lingering pool still shuts down at once.
#include <batchrpc/executor.hpp>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>

#include <doctest/doctest.h>

TEST_SUITE("thread pool") {
  TEST_CASE("tasks run with no linger, the default one, and one past the cap") {
    for (const std::chrono::microseconds linger :
         {std::chrono::microseconds(0), std::chrono::microseconds(50), std::chrono::microseconds::max(),
          std::chrono::microseconds(-5)}) {
      CAPTURE(linger.count());
      rpc::ThreadPool pool(2, linger);
      std::atomic<int> ran{0};
      for (int round = 0; round < 3; ++round) {  // tasks that find the workers asleep or lingering
        std::latch done{50};
        for (int i = 0; i < 50; ++i) {
          pool.execute([&] {
            ++ran;
            done.count_down();
          });
        }
        done.wait();
      }
      CHECK(ran == 150);
    }
  }

  TEST_CASE("with one worker lingering and one asleep, two tasks queued together run at once") {
    rpc::ThreadPool pool(2, std::chrono::milliseconds(300));
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // both have lingered, and sleep
    std::latch first{1};
    pool.execute([&] { first.count_down(); });
    first.wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // its worker lingers, the other sleeps
    // Each task waits for the other to start: both run only if the second wakes the sleeper.
    std::atomic<int> started{0};
    std::atomic<int> met{0};
    const auto meet = [&] {
      ++started;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (started.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
      if (started.load() == 2) ++met;
    };
    std::latch done{2};
    pool.execute([&] { meet(); done.count_down(); });
    pool.execute([&] { meet(); done.count_down(); });
    done.wait();
    CHECK(met == 2);
  }

  TEST_CASE("a pool whose workers linger for a second still stops at once") {
    auto pool = std::make_unique<rpc::ThreadPool>(2, std::chrono::seconds(1));
    std::latch ran{1};
    pool->execute([&] { ran.count_down(); });
    ran.wait();  // its worker now lingers
    const auto start = std::chrono::steady_clock::now();
    pool.reset();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(900));
  }
}
