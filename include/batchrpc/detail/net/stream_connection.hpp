// SPDX-License-Identifier: MIT
// One TCP or Unix-domain stream connection of a net::Server: messages framed by lines or
// Content-Length, replies written as they complete, requests waiting at the in-flight cap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "../../config.hpp"
#include "../../session.hpp"
#include "../session_await.hpp"
#include "../stream_framer.hpp"
#include "held_requests.hpp"
#include "hub.hpp"
#include "new_work.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

using rpc::detail::FrameSink;
using rpc::detail::StreamFramer;

// Lifetime: owned by shared pointers held by its pending operations and by each message in
// flight (a completion moves its reference into the handler it posts), so it lives until the
// last reply is back, and is destroyed on its strand, never inside a session's completion.
template <class Stream>
class StreamConnection final : public Connection,
                               public FrameSink,
                               public std::enable_shared_from_this<StreamConnection<Stream>> {
 public:
  StreamConnection(Hub& hub, Stream socket, Framing framing)
      : hub_(hub),
        socket_(std::move(socket)),
        deadline_(socket_.get_executor()),
        write_deadline_(socket_.get_executor()),
        framer_(framing, hub.router.limits().max_message_bytes),
        session_(hub.router, hub.session_options) {}
  ~StreamConnection() override { hub_.remove(*this); }

  // On the connection's strand; a shutdown may have closed it first.
  void start() {
    if (closed_) return;
    const Protocol protocol = framer_.framing() == Framing::lines ? Protocol::lines : Protocol::content_length;
    // Attached before on_session, which may greet the client.
    session_.attach(outbound_to(hub_, this->shared_from_this(), socket_.get_executor(),
                                [](StreamConnection& self, std::string message) { self.send_own(message); }));
    if (!start_session(hub_.options, connection_info(socket_, protocol, false), session_)) return close();
    read_next();
  }

  // A connection past the cap: told why, then closed. On the connection's strand.
  void refuse() {
    input_ended_ = true;
    send(overloaded_reply("too many connections"));
  }

  void post_drain() override {
    asio::post(socket_.get_executor(), [self = this->shared_from_this()] { self->drain(); });
  }
  void post_cancel() override {
    asio::post(socket_.get_executor(), [self = this->shared_from_this()] { self->cut_off(); });
  }
  void post_close() override {
    asio::post(socket_.get_executor(), [self = this->shared_from_this()] { self->close(); });
  }

 private:
  static constexpr std::size_t kReadChunk = 16 * 1024;

  void read_next() {
    if (reading_ || closed_ || input_ended_ || !may_read()) return;
    if (unread_ != nullptr && begin_ < end_) {
      feed();
      if (closed_ || input_ended_ || begin_ < end_ || !may_read()) return;  // paused, or framing failed
    }
    reading_ = true;
    arm_read_deadline();
    if (unread_ == nullptr) unread_ = std::make_unique<char[]>(kReadChunk);
    socket_.async_read_some(asio::buffer(unread_.get(), kReadChunk),
                            [self = this->shared_from_this()](const boost::system::error_code& error,
                                                              std::size_t size) { self->on_read(error, size); });
  }

  // Idle while between messages with nothing in flight; a message begun must be whole in time.
  void arm_read_deadline() {
    const bool mid_message = framer_.mid_message();
    deadline_.arm(mid_message ? hub_.options.request_timeout : hub_.options.idle_timeout,
                  [self = this->shared_from_this(), mid_message] {
                    if (!mid_message && self->in_flight_ > 0) return self->arm_read_deadline();
                    self->close();
                  });
  }

  void on_read(const boost::system::error_code& error, std::size_t size) {
    reading_ = false;
    deadline_.disarm();
    if (closed_) return;
    if (error) {  // end of input: what is in flight is finished and answered, then closed
      input_ended_ = true;
      // The client can answer nothing more, but handlers still running may still write to it
      // (their progress, logs) until the connection closes, which detaches.
      session_.end_input();
      if (!cut_off_) framer_.finish(*this);  // cut off: a message begun is not taken
      close_when_done();
      return;
    }
    begin_ = 0;
    end_ = size;
    read_next();
  }

  void feed() {
    begin_ += framer_.feed(unread_.get() + begin_, end_ - begin_, *this);
    if (framer_.failed()) {
      input_ended_ = true;
      close_when_done();
    }
    if (begin_ == end_ && in_flight_ == 0) unread_.reset();  // an idle connection holds no buffer
  }

  // Against the cap: what carries new work waits its turn (see admission).
  CapState cap_state() const {
    return CapState::of(unwritten_, hub_.max_in_flight, held_, session_.peer().waiting() > 0);
  }
  bool may_read() const { return cap_state().may_read(); }

  // FrameSink: hands the message in, or holds it at the cap; false pauses framing.
  bool message(std::string_view text, std::string* owned) override {
    switch (admission(text, hub_.router, cap_state())) {
      case Admission::hand_in_and_replay:
        held_.push_replay(std::string(text));
        hand_in(text, owned);
        break;
      case Admission::hand_in:
        hand_in(text, owned);
        break;
      case Admission::hold:
        held_.push(owned != nullptr ? std::move(*owned) : std::string(text));
        if (owned != nullptr) owned->clear();
        break;
      case Admission::close:
        close();
        return false;
    }
    return may_read();
  }

  // `owned`, when not null, holds `text` and may be taken. A replay's reply is not sent, so it
  // is not counted against the cap.
  void hand_in(std::string_view text, std::string* owned, bool replay = false) {
    Completion done = counted_completion(replay);
    if (owned != nullptr) {
      session_.handle(std::move(*owned), std::move(done));
      owned->clear();
    } else {
      session_.handle(text, std::move(done));
    }
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
        const auto executor = self->socket_.get_executor();  // before self is moved from
        asio::post(executor, [self = std::move(self), copy = std::move(copy), replay]() mutable {
          self->answered(std::move(copy), replay);
        });
      });
    };
  }

  // Below the cap again: the requests read at the cap go in, and reading resumes.
  void resume() {
    while (held_.next_goes_in(unwritten_, hub_.max_in_flight) && !closed_ && !cut_off_) hand_in_held();
    read_next();
  }

  void hand_in_held() {
    HeldRequests::Held message = held_.pop();
    hand_in(message.text, &message.text, message.replay);
  }

  void too_large() override { send(rpc::detail::too_large_reply(framer_.max_message_bytes())); }
  void bad_frame(const char* why) override { send(rpc::detail::bad_frame_reply(why)); }

  void answered(std::optional<std::string> reply, bool replay) {
    --in_flight_;
    if (replay) {
      // counted neither in unwritten_ nor sent
    } else if (reply && !closed_) {
      ++queued_replies_;  // unwritten until on_written; first, as send may start that write
      send(*reply);
    } else {
      --unwritten_;
    }
    resume();
    close_when_done();
  }

  void send(std::string_view reply) {
    if (closed_) return;
    rpc::detail::append_frame(queued_, framer_.framing(), reply);
    write_next();
  }

  // A message of the server's own (rpc::Peer), queued with the replies. Not `send`: its bytes
  // are measured before write_next, which may swap the queue out.
  void send_own(std::string_view message) {
    if (closed_) return;
    const std::size_t before = queued_.size();
    rpc::detail::append_frame(queued_, framer_.framing(), message);
    queued_own_bytes_ += queued_.size() - before;
    if (queued_own_bytes_ > kMaxQueuedOwnBytes) return close();  // a client that does not read
    write_next();
    read_next();  // a request to the client: its answer must be read, even past HeldRequests
  }

  // Replies queued while a write is out go together in the next one.
  void write_next() {
    if (writing_ || closed_ || queued_.empty()) return;
    writing_ = true;
    std::swap(queued_, sending_);
    sending_replies_ = std::exchange(queued_replies_, 0);
    queued_own_bytes_ = 0;  // in sending_ now: what waits behind it is bounded
    write_deadline_.arm(hub_.options.write_timeout, [self = this->shared_from_this()] { self->close(); });
    asio::async_write(socket_, asio::buffer(sending_),
                      [self = this->shared_from_this()](const boost::system::error_code& error, std::size_t) {
                        self->on_written(error);
                      });
  }

  void on_written(const boost::system::error_code& error) {
    writing_ = false;
    write_deadline_.disarm();
    sending_.clear();
    unwritten_ -= std::exchange(sending_replies_, 0);
    if (error) return close();  // the peer is gone: nobody will read what is in flight
    write_next();
    resume();  // below the cap again, maybe
    close_when_done();
  }

  void close_when_done() {
    if ((input_ended_ || draining_) && in_flight_ == 0 && !writing_ && queued_.empty() && held_.empty()) close();
  }

  // Shutdown: closes once nothing is in flight. Until then reading goes on, so that the
  // client's answers to the server's requests still reach the handlers waiting for them.
  void drain() {
    if (closed_) return;
    draining_ = true;
    close_when_done();
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
    cancel();
    session_.detach();
    cut_off_ = true;
    input_ended_ = true;  // what was read is still answered
    if (reading_) shut_socket(socket_, asio::socket_base::shutdown_receive);  // the read ends now
    close_when_done();
  }

  void cancel() {
    session_.cancel_all();
    rpc::detail::answer_waiting_in(session_);
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    deadline_.disarm();
    write_deadline_.disarm();
    close_socket(socket_);
    session_.detach();
    if (in_flight_ > 0) cancel();  // nobody will read the replies: handlers may end early
  }

  Hub& hub_;
  Stream socket_;
  Deadline deadline_;
  Deadline write_deadline_;
  StreamFramer framer_;
  Session session_;
  std::unique_ptr<char[]> unread_;  // the last read; [begin_, end_) not framed yet
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::string queued_;   // framed replies waiting for the write in progress
  std::string sending_;  // the write in progress
  std::size_t in_flight_ = 0;        // handed to the session, not answered yet
  std::size_t unwritten_ = 0;        // handed in, reply not written yet: what max_in_flight bounds
  std::size_t queued_replies_ = 0;   // replies (not frames of our own) in queued_
  std::size_t queued_own_bytes_ = 0;  // of frames of our own in queued_
  std::size_t sending_replies_ = 0;  // replies in sending_
  HeldRequests held_;                // read at the cap: handed in as replies go out
  bool reading_ = false;
  bool writing_ = false;
  bool input_ended_ = false;
  bool draining_ = false;  // shutting down: closes once nothing is in flight
  bool cut_off_ = false;   // past the shutdown's grace: nothing more is read
  bool closed_ = false;
};

}  // namespace rpc::net::detail
