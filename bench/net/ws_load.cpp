// SPDX-License-Identifier: MIT
// WebSocket load for bench/net/run.sh (Boost.Beast): C connections, each keeping one request in
// flight (send, wait for the reply, send again: as wrk does over HTTP), for D seconds, on T
// threads (an io_context each, connections dealt round-robin). Prints requests/s, latency
// percentiles and errors.
//
// usage: ws_load HOST PORT [CONNECTIONS=64] [SECONDS=5] [BATCH=1] [THREADS=2]
// Output: one line of key=value pairs, prefixed "RESULT".
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net_common.hpp"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using netbench::Clock;

namespace {

struct Totals {
  std::vector<double> latencies_us;  // of replies received before the end
  std::size_t errors = 0;            // connections that failed (handshake, read, write)
  std::size_t bad_replies = 0;       // replies without the expected number of results
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::io_context& io, const tcp::endpoint& endpoint, std::string host,
             const std::string& message, std::size_t results, Clock::time_point end, Totals& totals)
      : ws_(io),
        endpoint_(endpoint),
        host_(std::move(host)),
        message_(message),
        results_(results),
        end_(end),
        totals_(totals) {}

  void start() {
    beast::get_lowest_layer(ws_).async_connect(
        endpoint_, [self = shared_from_this()](beast::error_code error) {
          if (error) return self->failed();
          beast::get_lowest_layer(self->ws_).socket().set_option(tcp::no_delay(true));
          self->ws_.async_handshake(self->host_, "/", [self](beast::error_code error) {
            if (error) return self->failed();
            self->ws_.text(true);
            self->send();
          });
        });
  }

 private:
  void send() {
    if (Clock::now() >= end_) return close();
    sent_at_ = Clock::now();
    ws_.async_write(
        asio::buffer(message_), [self = shared_from_this()](beast::error_code error, std::size_t) {
          if (error) return self->failed();
          self->ws_.async_read(self->buffer_, [self](beast::error_code error, std::size_t) {
            if (error) return self->failed();
            self->received();
          });
        });
  }

  void received() {
    const auto now = Clock::now();
    if (now <= end_) {
      totals_.latencies_us.push_back(
          std::chrono::duration<double, std::micro>(now - sent_at_).count());
      const std::string_view reply(static_cast<const char*>(buffer_.data().data()), buffer_.size());
      if (netbench::count(reply, "\"result\"") != results_) ++totals_.bad_replies;
    }
    buffer_.clear();
    send();
  }

  void close() {
    ws_.async_close(websocket::close_code::normal,
                    [self = shared_from_this()](beast::error_code) {});
  }

  void failed() { ++totals_.errors; }

  websocket::stream<beast::tcp_stream> ws_;
  tcp::endpoint endpoint_;
  std::string host_;
  const std::string& message_;
  std::size_t results_;
  Clock::time_point end_;
  Totals& totals_;
  beast::flat_buffer buffer_;
  Clock::time_point sent_at_{};
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " HOST PORT [CONNECTIONS] [SECONDS] [BATCH] [THREADS]\n";
    return 2;
  }
  const std::string host = argv[1];
  const int port = std::atoi(argv[2]);
  const std::size_t connections = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 64;
  const double seconds = argc > 4 ? std::atof(argv[4]) : 5.0;
  const std::size_t batch = argc > 5 ? std::strtoul(argv[5], nullptr, 10) : 1;
  const std::size_t threads = argc > 6 ? std::strtoul(argv[6], nullptr, 10) : 2;
  netbench::raise_nofile();

  const std::string message = netbench::ping_message(batch);
  const tcp::endpoint endpoint(asio::ip::make_address(host), static_cast<unsigned short>(port));
  const std::string host_header = host + ":" + std::to_string(port);
  std::vector<std::unique_ptr<asio::io_context>> ios;
  std::vector<Totals> totals(threads);
  for (std::size_t t = 0; t < threads; ++t) ios.push_back(std::make_unique<asio::io_context>(1));
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (std::size_t c = 0; c < connections; ++c) {
    const std::size_t t = c % threads;
    std::make_shared<Connection>(*ios[t], endpoint, host_header, message, batch, end, totals[t])
        ->start();
  }
  std::vector<std::thread> runners;
  for (std::size_t t = 0; t < threads; ++t) runners.emplace_back([&, t] { ios[t]->run(); });
  // A server that does not answer the closing handshake is not waited for.
  std::thread watchdog([&] {
    std::this_thread::sleep_until(end + std::chrono::seconds(3));
    for (auto& io : ios) io->stop();
  });
  for (auto& runner : runners) runner.join();
  watchdog.join();
  const double elapsed = std::chrono::duration<double>(end - start).count();

  Totals all;
  for (Totals& t : totals) {
    all.latencies_us.insert(all.latencies_us.end(), t.latencies_us.begin(), t.latencies_us.end());
    all.errors += t.errors;
    all.bad_replies += t.bad_replies;
  }
  netbench::print_load_result(all.latencies_us, elapsed, all.errors, all.bad_replies);
  return 0;
}
