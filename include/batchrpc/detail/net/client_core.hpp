// SPDX-License-Identifier: MIT
// What a net::Client is made of: an io_context on a thread of its own, the channel of its
// connection, and the messages in flight, each with its timeout and its continuation.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "../../client.hpp"
#include "../../config.hpp"
#include "../../error.hpp"
#include "../../net_client.hpp"
#include "../chrono.hpp"
#include "../reply.hpp"
#include "client_channels.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

// Lifetime: owned by its Client, whose destructor stops the I/O thread and joins it before
// this is destroyed; handlers hold plain pointers to it, and those that never ran are
// destroyed with the io_context (declared first, so destroyed last) without being called.
class ClientCore final : private ChannelEvents {
 public:
  explicit ClientCore(ClientOptions options)
      : options_(std::move(options)), work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}

  ~ClientCore() { shut_down(); }

  // Fails what is in flight ("the client was destroyed") and joins the I/O thread; once only.
  // ~Client calls it while its pointer to this core is still set, since a callback it
  // completes may call that client again (libc++'s unique_ptr clears its pointer before it
  // destroys what it points to).
  void shut_down() {
    if (!thread_.joinable()) return;
    destroying_.store(true);
    asio::post(io_, [this] {
      end("the client was destroyed");
      io_.stop();
    });
    thread_.join();
  }

  void connect_tcp(const std::string& host, int port) {
    begin_connecting();
    wait_connected([&](auto done) {
      auto resolver = std::make_shared<asio::ip::tcp::resolver>(io_);
      resolver->async_resolve(host, std::to_string(port), [this, resolver, done, host](
                                                                  const boost::system::error_code& error,
                                                                  const asio::ip::tcp::resolver::results_type& found) {
        if (error) return done("cannot resolve " + host + ": " + error.message());
        auto stream = std::make_shared<beast::basic_stream<asio::ip::tcp>>(io_);
        stream->expires_after(options_.connect_timeout);
        stream->async_connect(found, [this, stream, done, host](const boost::system::error_code& failed,
                                                                const asio::ip::tcp::endpoint&) {
          if (failed) return done("cannot connect to " + host + ": " + failed.message());
          boost::system::error_code ignored;  // messages are written whole: Nagle would only delay them
          stream->socket().set_option(asio::ip::tcp::no_delay(true), ignored);
          open_channel(std::move(*stream), options_.host.empty() ? host : options_.host, done);
        });
      });
    });
  }

  void connect_unix(const std::string& path) {
    begin_connecting();
    wait_connected([&](auto done) {
      using UnixStream = beast::basic_stream<asio::local::stream_protocol>;
      auto stream = std::make_shared<UnixStream>(io_);
      stream->expires_after(options_.connect_timeout);
      stream->async_connect(asio::local::stream_protocol::endpoint(path),
                            [this, stream, done, path](const boost::system::error_code& failed) {
                              if (failed) return done("cannot connect to " + path + ": " + failed.message());
                              open_channel(std::move(*stream), options_.host.empty() ? "localhost" : options_.host,
                                           done);
                            });
    });
  }

  BatchBuilder batch(bool always_batch) {
    return BatchBuilder(next_first_id_.fetch_add(kIdsPerBuilder, std::memory_order_relaxed), always_batch);
  }

  void send(BatchBuilder batch, std::function<void(Replies)> done) {
    if (batch.empty()) {
      throw std::invalid_argument("batchrpc: an empty BatchBuilder has no message (an empty batch is invalid)");
    }
    if (destroying_.load()) {  // a callback sending while the client goes: nothing would start it
      return call(done, rpc::detail::failed_replies(batch, "the client was destroyed"));
    }
    std::string text = batch.text();
    const std::uint64_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
    const bool by_id = options_.transport != Transport::http && batch.requests() > 0;
    if (by_id) reserve_ids(batch, seq);
    asio::post(io_, [this, seq, by_id, text = std::move(text), batch = std::move(batch),
                     done = std::move(done)]() mutable {
      start(seq, Pending{std::move(batch), std::move(done), by_id, nullptr}, std::move(text));
    });
  }

  void close() {
    asio::post(io_, [this] { end("the client closed the connection"); });
  }

 private:
  static constexpr std::int64_t kIdsPerBuilder = std::int64_t{1} << 20;

  struct Pending {
    BatchBuilder batch;
    std::function<void(Replies)> done;
    bool by_id;  // matched to its reply by id (WebSocket and streams)
    std::unique_ptr<asio::steady_timer> timeout;
  };
  struct IdRange {
    std::int64_t count;
    std::uint64_t seq;  // kTimedOut: its message timed out, its late reply is still due
  };
  static constexpr std::uint64_t kTimedOut = 0;   // seqs start at 1
  static constexpr std::uint64_t kNoMessage = 0;  // the seq of a write that is no message's
  enum class State { idle, connecting, open };

  void begin_connecting() {
    State expected = State::idle;
    if (!state_.compare_exchange_strong(expected, State::connecting)) {
      throw std::logic_error(
          "batchrpc: net::Client::connect: this client is connected or connecting already (a client connects once: "
          "to connect again, make a new one)");
    }
  }

  // Runs `start(done)` on the I/O thread and waits for `done(error text)` (empty: connected).
  template <class Start>
  void wait_connected(Start start) {
    std::promise<std::string> outcome;
    auto done = [&outcome](std::string error) { outcome.set_value(std::move(error)); };
    asio::post(io_, [&] { start(done); });
    const std::string error = outcome.get_future().get();
    if (!error.empty()) {
      state_.store(State::idle);
      throw std::runtime_error("batchrpc: net::Client::connect: " + error);
    }
    state_.store(State::open);
  }

  template <class Lowest, class Done>
  void open_channel(Lowest stream, std::string host, Done done) {
#if !defined(BATCHRPC_NET_TLS)
    if (options_.tls != nullptr) return done("TLS needs a build with OpenSSL (BATCHRPC_NET_TLS)");
#endif
    auto channel = make_channel(std::move(stream), options_, std::move(host), *this);
    Channel* raw = channel.get();
    raw->handshake([this, channel = std::shared_ptr<Channel>(std::move(channel)), done](
                       const boost::system::error_code& error) mutable {
      if (error) return done("handshake failed: " + error.message());
      channel_ = std::move(channel);
      ended_.clear();
      done(std::string());
    });
  }

  // Refuses a message whose ids overlap those of a message in flight (ids match replies).
  void reserve_ids(const BatchBuilder& batch, std::uint64_t seq) {
    const std::int64_t first = batch.first_id();
    const std::int64_t last = first + batch.requests() - 1;
    const std::lock_guard<std::mutex> lock(ids_mutex_);
    auto after = ids_in_flight_.upper_bound(last);
    if (after != ids_in_flight_.begin()) {
      const auto before = std::prev(after);
      if (before->first + before->second.count - 1 >= first) {
        throw std::invalid_argument("batchrpc: net::Client::send: ids " + std::to_string(first) + " to " +
                                    std::to_string(last) +
                                    " overlap a message in flight (or one that timed out, whose reply has not "
                                    "come); make each builder with client.batch()");
      }
    }
    ids_in_flight_.emplace(first, IdRange{batch.requests(), seq});
  }

  void release_ids(const Pending& message) {
    if (!message.by_id) return;
    const std::lock_guard<std::mutex> lock(ids_mutex_);
    ids_in_flight_.erase(message.batch.first_id());
  }

  // A message timed out: its ids stay taken until its late reply comes (the server is still
  // working on it), so that the reply cannot complete a newer message that reuses them.
  void keep_ids_for_late_reply(const Pending& message) {
    if (!message.by_id) return;
    const std::lock_guard<std::mutex> lock(ids_mutex_);
    ids_in_flight_[message.batch.first_id()].seq = kTimedOut;
  }

  // The message whose request ids include the first id of `reply`. A reply without one (the
  // server refused a whole message: not JSON, too large, too long a batch) names no message;
  // it is given to the one message sent since the last reply, when that message awaits a
  // reply, and otherwise dropped (that message then fails at its timeout): with two sent,
  // either may be the one refused, notifications only included.
  std::optional<std::uint64_t> match(std::optional<std::int64_t> id) {
    const std::uint64_t sent_alone = sent_since_reply_ == 1 ? last_sent_ : 0;
    sent_since_reply_ = 0;
    const std::lock_guard<std::mutex> lock(ids_mutex_);
    if (!id) {
      for (const auto& [first, range] : ids_in_flight_) {
        if (range.seq == sent_alone) return sent_alone;
      }
      return std::nullopt;
    }
    auto after = ids_in_flight_.upper_bound(*id);
    if (after == ids_in_flight_.begin()) return std::nullopt;
    const auto range = std::prev(after);
    if (*id - range->first >= range->second.count) return std::nullopt;
    if (range->second.seq == kTimedOut) {  // the late reply of a message that timed out
      ids_in_flight_.erase(range);
      return std::nullopt;
    }
    return range->second.seq;
  }

  static std::optional<std::int64_t> first_id_in(const rapidjson::Document& doc) {
    if (doc.HasParseError()) return std::nullopt;
    const auto id_of = [](const rapidjson::Value& response) -> std::optional<std::int64_t> {
      if (!response.IsObject()) return std::nullopt;
      const auto id = response.FindMember("id");
      if (id == response.MemberEnd() || !id->value.IsInt64()) return std::nullopt;
      return id->value.GetInt64();
    };
    if (!doc.IsArray()) return id_of(doc);
    for (const rapidjson::Value& response : doc.GetArray()) {
      if (auto id = id_of(response)) return id;
    }
    return std::nullopt;
  }

  void start(std::uint64_t seq, Pending message, std::string text) {
    if (!channel_ || !ended_.empty()) {
      release_ids(message);
      return call(message.done, rpc::detail::failed_replies(message.batch, channel_ ? ended_ : "not connected"));
    }
    message.timeout = std::make_unique<asio::steady_timer>(io_, options_.timeout);
    message.timeout->async_wait([this, seq](const boost::system::error_code& error) {
      if (!error) {
        finish(
            seq,
            [&](const BatchBuilder& batch) {
              return rpc::detail::failed_replies(
                  batch, "no reply within " + std::to_string(options_.timeout.count()) + " ms (the client's timeout)");
            },
            /*timed_out=*/true);
      }
    });
    if (options_.transport == Transport::http) http_order_.push_back(seq);
    ++sent_since_reply_;
    last_sent_ = seq;
    pending_.emplace(seq, std::move(message));
    channel_->write(std::move(text), seq);
  }

  // Completes message `seq` (if still in flight) with the replies `make(batch)` returns.
  template <class Make>
  void finish(std::uint64_t seq, Make make, bool timed_out = false) {
    const auto found = pending_.find(seq);
    if (found == pending_.end()) return;  // timed out already
    Pending message = std::move(found->second);
    pending_.erase(found);
    if (timed_out) {
      keep_ids_for_late_reply(message);
    } else {
      release_ids(message);
    }
    call(message.done, make(message.batch));
  }

  // User code: no lock is held here. A continuation that throws loses its exception (the I/O
  // thread must go on).
  static void call(const std::function<void(Replies)>& done, Replies replies) {
    if (!done) return;
    try {
      done(std::move(replies));
    } catch (...) {
    }
  }

  // Ends the connection: closes it and fails everything in flight with `why`.
  void end(std::string why) {
    if (!ended_.empty()) return;
    ended_ = std::move(why);
    if (channel_) channel_->close();
    std::map<std::uint64_t, Pending> failed = std::move(pending_);
    pending_.clear();
    http_order_.clear();
    for (auto& [seq, message] : failed) {
      release_ids(message);
      call(message.done, rpc::detail::failed_replies(message.batch, ended_));
    }
  }

  // ChannelEvents, on the I/O thread:
  void written(std::uint64_t seq) override {
    const auto found = pending_.find(seq);
    if (found == pending_.end() || found->second.batch.expects_reply()) return;
    if (options_.transport == Transport::http) return;  // HTTP answers 204
    finish(seq, [](const BatchBuilder& batch) { return correlate(batch, std::nullopt); });
  }

  void http_response(unsigned status, std::string body) override {
    if (http_order_.empty()) return end("the server sent a response to no request");
    const std::uint64_t seq = http_order_.front();
    http_order_.pop_front();
    finish(seq, [&](const BatchBuilder& batch) {
      if (status == 200) return correlate(batch, body, options_.limits);
      if (status == 204) return correlate(batch, std::nullopt);
      constexpr std::size_t kShown = 200;
      std::string shown = body.substr(0, std::min(body.size(), kShown));
      while (!shown.empty() && (shown.back() == '\n' || shown.back() == '\r')) shown.pop_back();
      return rpc::detail::failed_replies(batch, "HTTP status " + std::to_string(status) + ": " + shown);
    });
  }

  void reply(std::string_view text) override {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
    if (from_server(doc)) return take_server_message(doc, text);
    const std::optional<std::uint64_t> seq = match(first_id_in(doc));
    if (!seq) return;  // answers nothing in flight (a late reply to a message timed out)
    finish(*seq, [&](const BatchBuilder& batch) { return correlate(batch, text, options_.limits); });
  }

  // A message the server sends of its own (progress, a log, a request of its own), not a
  // reply: an object with a "method", or a batch that begins with one. (A server writes its
  // messages as frames of their own, never inside a reply.)
  static bool from_server(const rapidjson::Document& doc) {
    if (doc.HasParseError()) return false;
    const auto has_method = [](const rapidjson::Value& v) { return v.IsObject() && v.HasMember("method"); };
    if (!doc.IsArray()) return has_method(doc);
    return !doc.Empty() && has_method(doc[0]);
  }

  // `id` as a RequestId, to be echoed in a response: a number's text (as RapidJSON writes it
  // back) is kept in `number`. An id of another type is not one, and is answered null.
  static RequestId request_id(const rapidjson::Value& id, std::string& number) {
    if (id.IsString()) return {RequestId::Kind::string, {id.GetString(), id.GetStringLength()}};
    if (!id.IsNumber()) return {RequestId::Kind::null, {}};
    rapidjson::StringBuffer text;
    rapidjson::Writer<rapidjson::StringBuffer> w(text);
    id.Accept(w);
    number.assign(text.GetString(), text.GetSize());
    return {RequestId::Kind::number, number};
  }

  // Answers the server's requests in `message` (its members with an id) -32601, as a client
  // serves no methods, so that none waits for its timeout; then shows the message to
  // on_server_message. User code: no lock is held; an exception it throws is dropped.
  void take_server_message(const rapidjson::Document& message, std::string_view text) {
    rpc::Buffer out;
    ResultWriter w(out);
    std::size_t answered = 0;
    const auto answer = [&](const rapidjson::Value& request) {
      if (!request.IsObject()) return;
      const auto id = request.FindMember("id");
      if (id == request.MemberEnd()) return;  // a notification
      if (answered++ > 0) out.append(',');
      std::string number;
      rpc::detail::write_error(out, w, request_id(id->value, number), ErrorCode::method_not_found);
    };
    if (message.IsArray()) {
      out.append('[');
      for (const rapidjson::Value& member : message.GetArray()) answer(member);
      out.append(']');
    } else {
      answer(message);
    }
    if (answered > 0 && channel_) channel_->write(out.str(), kNoMessage);
    if (!options_.on_server_message) return;
    try {
      options_.on_server_message(text);
    } catch (...) {  // the I/O thread must go on
    }
  }

  void ended(std::string why) override { end("the connection ended: " + std::move(why)); }

  const ClientOptions options_;
  asio::io_context io_;
  // I/O thread only:
  std::shared_ptr<Channel> channel_;
  std::map<std::uint64_t, Pending> pending_;
  std::deque<std::uint64_t> http_order_;  // HTTP: messages in the order their responses come
  std::string ended_;                     // why the connection ended; empty while it is open
  std::uint64_t sent_since_reply_ = 0;    // messages sent since the last reply came
  std::uint64_t last_sent_ = 0;           // the last message sent (its seq; they start at 1)
  // Any thread:
  std::mutex ids_mutex_;
  std::map<std::int64_t, IdRange> ids_in_flight_;  // by first id; WebSocket and streams
  std::atomic<std::uint64_t> next_seq_{1};
  std::atomic<std::int64_t> next_first_id_{1};
  std::atomic<State> state_{State::idle};
  std::atomic<bool> destroying_{false};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;  // last: runs once everything above exists
};

}  // namespace rpc::net::detail
