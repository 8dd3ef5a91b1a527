// SPDX-License-Identifier: MIT
// One WebSocket connection of a net::Server, upgraded from an HTTP request: each text message
// is one JSON-RPC message, replies go out as they complete, requests wait at the in-flight cap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/websocket/stream.hpp>
#if defined(BATCHRPC_NET_TLS)
#include <boost/beast/websocket/ssl.hpp>  // teardown of a WebSocket over TLS
#endif

#include "../../config.hpp"
#include "../../session.hpp"
#include "../chrono.hpp"
#include "../session_await.hpp"
#include "held_requests.hpp"
#include "hub.hpp"
#include "new_work.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;

// Lifetime: as StreamConnection's (shared pointers held by pending operations and by each
// message in flight; destroyed on its strand).
template <class Stream>
class WebSocketConnection final : public Connection,
                                  public std::enable_shared_from_this<WebSocketConnection<Stream>> {
 public:
  WebSocketConnection(Hub& hub, Stream socket)
      : hub_(hub),
        ws_(std::move(socket)),
        write_deadline_(ws_.get_executor()),
        session_(hub.router, hub.session_options) {}
  ~WebSocketConnection() override { hub_.remove(*this); }

  // Completes the handshake `upgrade` asked for, then serves; with `refuse`, closes at once
  // with 1013 (try again later) instead.
  void start(beast::http::request<beast::http::string_body> upgrade, bool refuse) {
    refusing_ = refuse;
    if (!refuse) {
      // Attached before on_session, which may greet the client: its messages wait in the
      // queue until the handshake is done (write_next).
      session_.attach(outbound_to(hub_, this->shared_from_this(), ws_.get_executor(),
                                  [](WebSocketConnection& self, std::string message) { self.outbound(std::move(message)); }));
      ConnectionInfo info = connection_info(ws_.next_layer(), Protocol::http, true);
      add_headers(info, upgrade);
      policy_refused_ = !start_session(hub_.options, info, session_);
    }
    ws_.set_option(websocket::stream_base::timeout{
        .handshake_timeout = hub_.options.request_timeout,
        .idle_timeout = hub_.options.idle_timeout,
        .keep_alive_pings = true,
    });
    ws_.read_message_max(hub_.router.limits().max_message_bytes);
    ws_.auto_fragment(false);
    ws_.async_accept(upgrade, [self = this->shared_from_this()](const boost::system::error_code& error) {
      self->on_accepted(error);
    });
  }

  void post_drain() override {
    asio::post(ws_.get_executor(), [self = this->shared_from_this()] { self->drain(); });
  }
  void post_cancel() override {
    asio::post(ws_.get_executor(), [self = this->shared_from_this()] { self->cut_off(); });
  }
  void post_close() override {
    asio::post(ws_.get_executor(), [self = this->shared_from_this()] { self->close(); });
  }

 private:
  void on_accepted(const boost::system::error_code& error) {
    if (error) return close();
    const bool serving = !refusing_ && !policy_refused_ && !hub_.closing();
    if (!serving) session_.detach();  // what on_session asked of the client is answered -32094
    if (refusing_) return close_with(websocket::close_code::try_again_later);
    if (policy_refused_) return close_with(websocket::close_code::policy_error);  // 1008
    if (hub_.closing()) return close_with(websocket::close_code::going_away);
    accepted_ = true;
    write_next();  // what on_session sent
    read_next();
  }

  void read_next() {
    if (!accepted_ || reading_ || closing_ || cut_off_ || !may_read()) return;
    reading_ = true;
    ws_.async_read(buffer_, [self = this->shared_from_this()](const boost::system::error_code& error,
                                                              std::size_t) { self->on_read(error); });
  }

  void on_read(const boost::system::error_code& error) {
    reading_ = false;
    if (error) {  // closed by the peer, a message too large (closed 1009), or the socket failed
      input_ended_ = true;
      session_.detach();  // the client can no longer answer the server's requests
      held_.clear();      // nobody will read their replies
      if (in_flight_ > 0) cancel();  // nor those of what is in flight
      return;
    }
    if (cut_off_) return;  // past the shutdown's grace: nothing more is taken
    if (!ws_.got_text()) return close_with(websocket::close_code::unknown_data);  // 1003
    std::string message = beast::buffers_to_string(buffer_.data());
    buffer_.clear();
    if (buffer_.capacity() > kKeptBuffer) buffer_.shrink_to_fit();
    switch (admission(message, hub_.router, cap_state())) {
      case Admission::hand_in_and_replay:
        held_.push_replay(message);
        hand_in(std::move(message));
        break;
      case Admission::hand_in:
        hand_in(std::move(message));
        break;
      case Admission::hold:
        held_.push(std::move(message));
        break;
      case Admission::close:
        return close();
    }
    read_next();
  }

  // Against the cap: what carries new work waits its turn (see admission).
  CapState cap_state() const {
    return CapState::of(unwritten_, hub_.max_in_flight, held_, session_.peer().waiting() > 0);
  }
  bool may_read() const { return cap_state().may_read(); }

  // A replay's reply is not sent, so it is not counted against the cap.
  void hand_in(std::string message, bool replay = false) {
    session_.handle(std::move(message), counted_completion(replay));
  }

  // The message counted in flight, and the completion that sends its reply from the strand.
  auto counted_completion(bool replay) {
    ++in_flight_;
    if (!replay) ++unwritten_;
    return [self = this->shared_from_this(), replay](std::optional<std::string_view> reply) mutable {
      std::optional<std::string> copy;
      if (reply && !replay) copy.emplace(*reply);
      Hub& hub = self->hub_;
      hub.post_from_handler_thread([&] {
        const auto executor = self->ws_.get_executor();  // before self is moved from
        asio::post(executor, [self = std::move(self), copy = std::move(copy), replay]() mutable {
          self->answered(std::move(copy), replay);
        });
      });
    };
  }

  // Below the cap again: the requests read at the cap go in, and reading resumes.
  void resume() {
    while (held_.next_goes_in(unwritten_, hub_.max_in_flight) && !closing_ && !cut_off_) hand_in_held();
    read_next();
  }

  void hand_in_held() {
    HeldRequests::Held message = held_.pop();
    hand_in(std::move(message.text), message.replay);
  }

  void answered(std::optional<std::string> reply, bool replay) {
    --in_flight_;
    if (replay) {
      // counted neither in unwritten_ nor sent
    } else if (reply && !closing_ && !input_ended_) {
      queued_.push_back({std::move(*reply)});  // unwritten until on_written
      write_next();
    } else {
      --unwritten_;
    }
    resume();
    close_when_done();
  }

  // A message of the server's own (rpc::Peer), queued with the replies. Not counted against
  // max_in_flight (as no stream's is): kMaxQueuedOwnBytes bounds them.
  void outbound(std::string message) {
    if (closing_ || input_ended_) return;
    queued_own_bytes_ += message.size();
    queued_.push_back({std::move(message), true});
    if (queued_own_bytes_ > kMaxQueuedOwnBytes) return close();  // a client that does not read
    write_next();
    read_next();  // a request to the client: its answer must be read, even past HeldRequests
  }

  void write_next() {
    if (!accepted_ || writing_ || closing_ || queued_.empty()) return;
    writing_ = true;
    // A client that does not take its replies is closed (Beast's idle timeout does not see
    // it while the client keeps sending).
    write_deadline_.arm(hub_.options.write_timeout, [self = this->shared_from_this()] { self->close(); });
    ws_.text(true);
    ws_.async_write(asio::buffer(queued_.front().text),
                    [self = this->shared_from_this()](const boost::system::error_code& error, std::size_t) {
                      self->on_written(error);
                    });
  }

  void on_written(const boost::system::error_code& error) {
    writing_ = false;
    write_deadline_.disarm();
    const bool own = queued_.front().own;
    if (own) queued_own_bytes_ -= queued_.front().text.size();
    queued_.pop_front();
    if (!own) --unwritten_;
    if (error) {
      input_ended_ = true;
      for (const Outgoing& unsent : queued_) unwritten_ -= unsent.own ? 0 : 1;
      queued_.clear();
      queued_own_bytes_ = 0;
      held_.clear();  // their replies could not be written
      if (in_flight_ > 0) cancel();
      return;
    }
    write_next();
    resume();  // below the cap again, maybe
    close_when_done();
  }

  // Draining: once nothing is in flight or queued, the connection closes with 1001.
  void close_when_done() {
    if (draining_ && in_flight_ == 0 && queued_.empty() && !writing_ && held_.empty()) {
      close_with(websocket::close_code::going_away);
    }
  }

  void close_with(websocket::close_code code) {
    if (closing_) return;
    closing_ = true;
    ws_.async_close(code, [self = this->shared_from_this()](const boost::system::error_code&) {});
  }

  // The close frame is sent once the replies are; a peer that does not answer it within
  // kCloseWait is not waited for longer (it has the frame; shutdown need not wait for it).
  // Until then reading goes on, so that the client's answers to the server's requests still
  // reach the handlers waiting for them.
  void drain() {
    draining_ = true;
    ws_.set_option(websocket::stream_base::timeout{
        .handshake_timeout = std::min<std::chrono::steady_clock::duration>(kCloseWait, hub_.options.request_timeout),
        .idle_timeout = hub_.options.idle_timeout,
        .keep_alive_pings = true,
    });
    close_when_done();
  }

  void cancel() {
    session_.cancel_all();
    rpc::detail::answer_waiting_in(session_);
  }

  // Shutdown past its grace: what is in flight is cancelled, the server's requests still
  // waiting for the client are answered -32094 (detach), and nothing more is read.
  void cut_off() {
    if (closed_) return;
    // Read but not started: answered as cancelled before they started (-32800), running nothing.
    while (!held_.empty()) {
      HeldRequests::Held message = held_.pop();
      rpc::detail::handle_unstarted_in(session_, std::move(message.text), counted_completion(message.replay));
    }
    cut_off_ = true;
    cancel();
    session_.detach();
  }

  // Closes the socket under the WebSocket stream: every pending operation ends.
  void close() {
    if (closed_) return;
    closed_ = true;
    closing_ = true;
    write_deadline_.disarm();
    close_socket(ws_);
    session_.detach();
    if (in_flight_ > 0) cancel();
  }

  static constexpr std::size_t kKeptBuffer = 16 * 1024;
  static constexpr std::chrono::milliseconds kCloseWait{500};

  Hub& hub_;
  websocket::stream<Stream> ws_;
  Deadline write_deadline_;
  beast::flat_buffer buffer_;
  Session session_;
  struct Outgoing {
    std::string text;
    bool own = false;  // a message of the server's own, not a reply
  };
  std::deque<Outgoing> queued_;  // replies in the order they completed; the front is being written
  std::size_t queued_own_bytes_ = 0;  // of the server's own messages in queued_
  std::size_t in_flight_ = 0;  // handed to the session, not answered yet
  std::size_t unwritten_ = 0;  // handed in, reply not written yet: what max_in_flight bounds
  HeldRequests held_;  // read at the cap: handed in as replies go out
  bool refusing_ = false;
  bool policy_refused_ = false;  // on_session refused the connection
  bool accepted_ = false;        // the handshake is done: messages may be written
  bool reading_ = false;
  bool writing_ = false;
  bool input_ended_ = false;
  bool draining_ = false;
  bool cut_off_ = false;  // past the shutdown's grace: no message is read any more
  bool closing_ = false;  // a close frame was sent, or the socket closed
  bool closed_ = false;   // the socket is closed
};

}  // namespace rpc::net::detail
