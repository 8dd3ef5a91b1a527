// SPDX-License-Identifier: MIT
// Load for bench/net/run.sh through batchrpc's own client, rpc::net::Client: C connections
// (a client each, so a thread each), each keeping one message in flight (send, wait for the
// reply, send again), for D seconds. Every message is built with BatchBuilder and every reply
// matched with correlate, as an application would; a reply that does not answer each of the
// message's pings with a result counts as bad. Prints requests/s, latency percentiles, errors.
//
// usage: client_load HOST PORT [http|websocket] [CONNECTIONS=64] [SECONDS=5] [BATCH=1]
// Output: one line of key=value pairs, prefixed "RESULT".
#include <batchrpc/net_client.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net_common.hpp"

namespace {

using netbench::Clock;

struct Totals {
  std::mutex mutex;
  std::vector<double> latencies_us;  // of replies received before the end
  std::size_t errors = 0;            // messages that failed (connection, timeout)
  std::size_t bad_replies = 0;       // replies that did not answer every ping with a result
};

// One connection's loop. Callbacks run on its client's I/O thread, one at a time.
class Loop {
 public:
  Loop(rpc::net::Client& client, std::size_t pings, Clock::time_point end, Totals& totals)
      : client_(client), pings_(pings), end_(end), totals_(totals) {}

  void send() {
    if (Clock::now() >= end_) return finished();
    rpc::BatchBuilder message = client_.batch();
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < pings_; ++i) ids.push_back(message.call("ping"));
    const auto sent_at = Clock::now();
    client_.send(std::move(message), [this, ids = std::move(ids), sent_at](const rpc::Replies& replies) {
      received(replies, ids, sent_at);
    });
  }

  void wait() {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return finished_; });
  }

 private:
  void received(const rpc::Replies& replies, const std::vector<std::int64_t>& ids, Clock::time_point sent_at) {
    const auto now = Clock::now();
    bool answered = replies.complete();
    for (const std::int64_t id : ids) answered = answered && replies.ok(id);
    const bool failed = !replies.problems().empty() && replies.missing().size() == ids.size();
    if (now <= end_) {
      std::lock_guard lock(totals_.mutex);
      if (failed) {
        ++totals_.errors;
      } else {
        totals_.latencies_us.push_back(std::chrono::duration<double, std::micro>(now - sent_at).count());
        if (!answered) ++totals_.bad_replies;
      }
    }
    if (failed) return finished();  // the connection is gone: the client does not reconnect
    send();
  }

  void finished() {
    std::lock_guard lock(mutex_);
    finished_ = true;
    done_.notify_all();
  }

  rpc::net::Client& client_;
  std::size_t pings_;
  Clock::time_point end_;
  Totals& totals_;
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " HOST PORT [http|websocket] [CONNECTIONS] [SECONDS] [BATCH]\n";
    return 2;
  }
  const std::string host = argv[1];
  const int port = std::atoi(argv[2]);
  const std::string transport = argc > 3 ? argv[3] : "http";
  const std::size_t connections = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 64;
  const double seconds = argc > 5 ? std::atof(argv[5]) : 5.0;
  const std::size_t pings = argc > 6 ? std::strtoul(argv[6], nullptr, 10) : 1;
  if (transport != "http" && transport != "websocket") {
    std::cerr << "transport: http or websocket\n";
    return 2;
  }
  netbench::raise_nofile();

  const rpc::net::ClientOptions options{
      .transport = transport == "http" ? rpc::net::Transport::http : rpc::net::Transport::websocket,
      .timeout = std::chrono::seconds(2)};  // as wrk gives up on a request
  std::vector<std::unique_ptr<rpc::net::Client>> clients;
  for (std::size_t c = 0; c < connections; ++c) {
    clients.push_back(std::make_unique<rpc::net::Client>(options));
    clients.back()->connect(host, port);
  }
  Totals totals;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::unique_ptr<Loop>> loops;
  for (const auto& client : clients) loops.push_back(std::make_unique<Loop>(*client, pings, end, totals));
  for (const auto& loop : loops) loop->send();
  for (const auto& loop : loops) loop->wait();
  clients.clear();  // joins their I/O threads before the loops go
  const double elapsed = std::chrono::duration<double>(end - start).count();

  netbench::print_load_result(totals.latencies_us, elapsed, totals.errors, totals.bad_replies);
  return 0;
}
