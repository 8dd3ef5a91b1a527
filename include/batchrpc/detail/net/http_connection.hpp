// SPDX-License-Identifier: MIT
// One HTTP/1.1 connection of a net::Server: keep-alive, pipelined requests answered in order,
// reading paused at the in-flight cap, and the upgrade to WebSocket; or, on an MCP listener,
// MCP Streamable HTTP, whose responses may be event streams.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include "../../config.hpp"
#include "../../session.hpp"
#include "../chrono.hpp"
#include "../session_registry.hpp"
#include "http_reads.hpp"
#include "hub.hpp"
#include "mcp_checks.hpp"
#include "mcp_streams.hpp"
#include "tls_traits.hpp"
#include "websocket_connection.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

namespace http = boost::beast::http;

// True for `application/json`, with parameters or not, in any case.
inline bool is_json_type(std::string_view content_type) {
  std::string_view type = content_type.substr(0, content_type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  return beast::iequals(type, "application/json");
}

// Lifetime: as StreamConnection's (shared pointers held by pending operations and by each
// request in flight; destroyed on its strand). A request's session is held (SessionUse) until
// its reply is made, and released on the strand.
template <class Stream>
class HttpConnection final : public Connection,
                             public EventSink,
                             public std::enable_shared_from_this<HttpConnection<Stream>> {
 public:
  // `refusing`: the server is full; the connection's request is answered 503 (or its
  // WebSocket closed 1013), then it is closed. `mcp`: it speaks MCP Streamable HTTP.
  HttpConnection(Hub& hub, Stream socket, bool refusing, bool mcp = false)
      : hub_(hub),
        socket_(std::move(socket)),
        deadline_(socket_.get_executor()),
        write_deadline_(socket_.get_executor()),
        refusing_(refusing),
        mcp_(mcp) {}
  ~HttpConnection() override { hub_.remove(*this); }

  // On the connection's strand.
  void start() { read_next(); }

  void post_drain() override { post([](HttpConnection& c) { c.drain(); }); }
  // The HTTP sessions are cancelled by the server, through the registry they are shared in.
  void post_cancel() override {}
  void post_close() override { post([](HttpConnection& c) { c.close(); }); }

  void post_event(std::uint64_t number, std::optional<std::string> message, std::shared_ptr<McpStreams> from) override {
    if (InsideHandle::current() == this) {
      // From a handler running inline inside this connection's session.handle, on its strand:
      // taken now, so that it goes before the reply, which is filled before handle returns.
      return on_event(number, std::move(message), *from);
    }
    hub_.post_from_handler_thread([&] {
      asio::post(socket_.get_executor(), [self = this->shared_from_this(), number, message = std::move(message),
                                          from = std::move(from)]() mutable {
        self->on_event(number, std::move(message), *from);
      });
    });
  }

 private:
  using Request = http::request<http::string_body>;
  using Response = http::response<http::string_body>;

  // An MCP response that is (or may become) an event stream: its events are written as chunks
  // as they come, once all responses before it are written.
  struct EventStream {
    std::shared_ptr<McpStreams> streams;  // of the session it serves
    std::string session_id;
    bool listen = false;       // a GET stream (else a POST's, which ends with its reply)
    bool started = false;      // answered as an event stream: nothing else can be sent now
    bool head_written = false;
    bool ended = false;        // no event after those queued
    std::deque<std::string> events;  // not written yet
    std::size_t queued_bytes = 0;    // in `events`
    std::string writing;             // the one being written
    std::shared_ptr<rpc::detail::SessionUse> held;  // a GET stream's session stays in use
    http::response<http::empty_body> head;
    std::optional<http::response_serializer<http::empty_body>> serializer;
  };

  // A response in pipelining order; written once it is ready and all before it are written.
  struct Slot {
    Response response;
    bool ready = false;
    bool close_after = false;
    std::unique_ptr<EventStream> stream;  // MCP only
  };

  static constexpr std::size_t kHeaderLimit = 16 * 1024;
  static constexpr std::size_t kKeptBuffer = 16 * 1024;
  static constexpr std::size_t kScratch = 16 * 1024;
  static constexpr std::chrono::milliseconds kLingerLimit{5'000};

  template <class Phase>
  void post(Phase phase) {
    if (upgraded_) return;  // the socket belongs to the WebSocket connection now
    asio::post(socket_.get_executor(), [self = this->shared_from_this(), phase] { phase(*self); });
  }

  // ---- Reading ----------------------------------------------------------------------------

  void read_next() {
    if (reading_ || closed_ || input_ended_ || upgraded_) return;
    if (slots_.size() >= hub_.max_in_flight) return;  // resumed when a reply is written
    reading_ = true;
    if (buffer_.size() > 0) return read_header();  // a pipelined request is here already
    if (slots_.empty() && buffer_.capacity() > kKeptBuffer) buffer_.shrink_to_fit();
    arm_idle_deadline();
    if constexpr (is_tls<Stream>::value) {
      // The next request may be inside the TLS layer already (read with the handshake or with
      // the request before), where the socket cannot see it: wait through the TLS stream.
      socket_.async_read_some(buffer_.prepare(kTlsFirstRead), [self = this->shared_from_this()](
                                                               const boost::system::error_code& error, std::size_t size) {
        if (error) return self->read_failed(error);
        self->buffer_.commit(size);
        self->read_header();
      });
    } else {
      // Waiting for the next request takes no buffer: an idle connection costs little.
      raw_socket(socket_).async_wait(asio::socket_base::wait_read, [self = this->shared_from_this()](const boost::system::error_code& error) {
        if (error) return self->read_failed(error);
        self->read_header();
      });
    }
  }

  void arm_idle_deadline() {
    deadline_.arm(refusing_ ? hub_.options.request_timeout : hub_.options.idle_timeout,
                  [self = this->shared_from_this()] {
                    if (!self->slots_.empty()) return self->arm_idle_deadline();  // it waits for us
                    self->close();
                  });
  }

  void read_header() {
    deadline_.arm(hub_.options.request_timeout, [self = this->shared_from_this()] { self->close(); });
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(hub_.router.limits().max_message_bytes);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = this->shared_from_this()](const boost::system::error_code& error, std::size_t) {
                              if (error) return self->read_failed(error);
                              self->read_body();
                            });
  }

  // A client that waits for `100 Continue` (curl does, past 1 KiB) is told to go on, when no
  // response is due before it.
  void read_body() {
    const auto expect = parser_->get()[http::field::expect];
    if (slots_.empty() && !writing_ && expect.size() == 12 && beast::iequals(expect, "100-continue")) {
      static constexpr std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
      writing_ = true;
      asio::async_write(socket_, asio::buffer(go_on.data(), go_on.size()),
                        [self = this->shared_from_this()](const boost::system::error_code& error, std::size_t) {
                          self->writing_ = false;
                          if (error) return self->read_failed(error);
                          self->read_rest();
                        });
      return;
    }
    read_rest();
  }

  void read_rest() {
    make_room_for_body();
    http::async_read(socket_, buffer_, *parser_,
                     [self = this->shared_from_this()](const boost::system::error_code& error, std::size_t) {
                       if (error) return self->read_failed(error);
                       self->reading_ = false;
                       self->deadline_.disarm();
                       Request request = self->parser_->release();
                       self->parser_.reset();
                       self->serve(std::move(request));
                       self->read_next();
                     });
  }

  // Each read fills at most the buffer's free room, and the parser hands what it read on to
  // the body as it goes, so the room never grows by itself: a 4 KiB body took 9 reads of 512
  // bytes. The room is made for the body up front, up to the size an idle connection keeps.
  void make_room_for_body() noexcept {
    const auto length = parser_->content_length();
    if (!length) return;  // chunked, or no body
    try {
      const std::size_t body = *length < kKeptBuffer ? static_cast<std::size_t>(*length) : kKeptBuffer;
      buffer_.reserve(std::min(buffer_.size() + body, kKeptBuffer));
    } catch (...) {  // no memory for it: read in smaller pieces
    }
  }

  void read_failed(const boost::system::error_code& error) {
    reading_ = false;
    deadline_.disarm();
    parser_.reset();
    input_ended_ = true;
    end_listen_streams();  // a client that stops sending has stopped listening
    if (closed_ || draining_ || error == http::error::end_of_stream || error == asio::error::eof ||
        error == asio::error::operation_aborted || error == asio::error::connection_reset) {
      return close_when_done();
    }
    if (error == http::error::body_limit) {
      return respond(http::status::payload_too_large,
                     "Request body larger than " + std::to_string(hub_.router.limits().max_message_bytes) + " bytes\n");
    }
    if (error == http::error::header_limit) {
      return respond(http::status::request_header_fields_too_large, "Request headers too large\n");
    }
    respond(http::status::bad_request, "The request could not be read\n");
  }

  // ---- Serving ----------------------------------------------------------------------------

  void serve(Request request) {
    if (mcp_ && !refusing_) return serve_mcp(std::move(request));
    if (!mcp_ && websocket::is_upgrade(request)) return upgrade(std::move(request));
    const bool keep_alive = request.keep_alive();
    if (refusing_) {
      Slot& slot = reply_slot(http::status::service_unavailable, "Too many connections; retry later\n", false);
      slot.response.set(http::field::retry_after, std::to_string(hub_.options.retry_after.count()));
      return write_next();
    }
    if (request.method() != http::verb::post) {
      Slot& slot = reply_slot(http::status::method_not_allowed, "Only POST is allowed\n", keep_alive);
      slot.response.set(http::field::allow, "POST");
      return write_next();
    }
    if (!is_json_type(request[http::field::content_type])) {
      respond(http::status::unsupported_media_type, "Content-Type must be application/json\n", keep_alive);
      return;
    }
    rpc::detail::SessionUse use;
    const std::string& header = hub_.options.session_header;
    const auto named = header.empty() ? request.end() : request.find(header);
    if (named != request.end()) {
      use = hub_.sessions.use(std::string_view(named->value().data(), named->value().size()));
      if (!use && !use.refused_for_closing()) {
        respond(http::status::not_found, "Unknown session\n", keep_alive);
        return;
      }
    } else {
      if (own_session_ == nullptr) {  // this connection's own session starts
        own_session_ = std::make_shared<rpc::detail::SessionEntry>(hub_.router, hub_.session_options);
        ConnectionInfo info = connection_info(socket_, Protocol::http, false);
        add_headers(info, request);
        if (!start_session(hub_.options, info, own_session_->session)) {
          respond(http::status::forbidden, "Refused\n", false);
          return;
        }
      }
      use = hub_.sessions.use_own(own_session_);
    }
    if (use.refused_for_closing()) {
      respond(http::status::service_unavailable, "The server is shutting down\n", keep_alive);
      return;
    }
    handle(std::move(request), std::move(use), keep_alive);
  }

  // Hands the body to the session; the reply fills this request's slot. With `streams` (an MCP
  // call), the session's messages sent before the reply turn the response into an event stream.
  void handle(Request request, rpc::detail::SessionUse use, bool keep_alive,
              std::shared_ptr<McpStreams> streams = nullptr, std::vector<std::string> calls = {}) {
    Slot& slot = slots_.emplace_back();
    slot.close_after = !keep_alive;
    slot.response.version(request.version());
    if (!keep_alive) input_ended_ = true;
    const std::uint64_t sequence = first_sequence_ + slots_.size() - 1;
    if (streams != nullptr) {
      slot.stream = std::make_unique<EventStream>();
      slot.stream->session_id = use.id();
      slot.stream->streams = streams;
      streams->open_call(this->shared_from_this(), sequence, std::move(calls));  // before a handler can send
    }
    Session& session = use.session();
    auto held = std::make_shared<rpc::detail::SessionUse>(std::move(use));
    // Only this connection's requests, each with a slot, can be answered inside handle.
    released_after_handle_.reserve(slots_.size());
    {
      const InsideHandle inside(this);
      // An event stream's reply always goes through the I/O context, behind the events a handler
      // thread posted before it: the job may finish there and be answered here, inside handle.
      const bool after_events = slot.stream != nullptr;
      session.handle(std::move(request.body()),
                     [self = this->shared_from_this(), held = std::move(held), sequence, after_events](
                         std::optional<std::string_view> reply) mutable {
                       if (InsideHandle::current() == self.get() && !after_events) {
                         // Answered inside session.handle, on this thread, so on the strand (an
                         // inline method): taken as is, with no round trip through the I/O
                         // context. The session is released once handle has returned, never
                         // inside its own completion: `held` is parked first (the room was
                         // reserved), so it stays parked even if answering throws.
                         const auto& parked = self->released_after_handle_.emplace_back(std::move(held));
                         self->fill(sequence, reply ? std::optional<std::string>(*reply) : std::nullopt,
                                    parked->id());
                         return;  // written once handle has returned and the session is released
                       }
                       std::optional<std::string> copy;
                       if (reply) copy.emplace(*reply);
                       // The session is released on the strand, never inside its own completion.
                       Hub& hub = self->hub_;
                       hub.post_from_handler_thread([&] {
                         const auto executor = self->socket_.get_executor();  // before self is moved from
                         asio::post(executor, [self = std::move(self), held = std::move(held), sequence,
                                               copy = std::move(copy)]() mutable {
                           self->fill(sequence, std::move(copy), held->id());
                           // Released before the reply is written: a client that sends its next
                           // request as soon as it reads this reply finds the session idle (a
                           // write can complete inside async_write's initiation).
                           held.reset();
                           self->write_next();
                         });
                       });
                     });
    }
    // What was answered inside handle is written now, its session released first.
    write_next();
  }

  // ---- MCP Streamable HTTP ----------------------------------------------------------------

  std::string_view session_header() const {
    return mcp_ ? std::string_view(kMcpSessionHeader) : std::string_view(hub_.options.session_header);
  }

  static std::string_view text_of(boost::beast::string_view value) { return {value.data(), value.size()}; }

  void serve_mcp(Request request) {
    const bool keep_alive = request.keep_alive();
    const McpHttpOptions& options = hub_.options.mcp;
    if (target_path(text_of(request.target())) != options.path) {
      return respond(http::status::not_found, "Not found\n", keep_alive);
    }
    if (!origin_allowed(text_of(request[http::field::origin]), options.allowed_origins)) {
      return respond(http::status::forbidden, "Origin not allowed\n", keep_alive);
    }
    const std::string_view version = text_of(request["MCP-Protocol-Version"]);
    if (!version.empty() &&
        std::find(options.protocol_versions.begin(), options.protocol_versions.end(), version) ==
            options.protocol_versions.end()) {
      return respond(http::status::bad_request, "Unsupported MCP-Protocol-Version\n", keep_alive);
    }
    const http::verb verb = request.method();  // of Beast's many verbs, three are served
    if (verb == http::verb::post) return mcp_post(std::move(request), keep_alive);
    if (verb == http::verb::get && options.listen_stream) return mcp_listen(std::move(request), keep_alive);
    if (verb == http::verb::delete_) return mcp_delete(request, keep_alive);
    Slot& slot = reply_slot(http::status::method_not_allowed, "Method not allowed\n", keep_alive);
    slot.response.set(http::field::allow, options.listen_stream ? "GET, POST, DELETE" : "POST, DELETE");
    write_next();
  }

  static constexpr std::string_view kAcceptBoth = "Accept must allow application/json and text/event-stream\n";

  void mcp_post(Request request, bool keep_alive) {
    if (!is_json_type(text_of(request[http::field::content_type]))) {
      return respond(http::status::unsupported_media_type, "Content-Type must be application/json\n", keep_alive);
    }
    const Accepted accept = accepted(text_of(request[http::field::accept]));
    if (!accept.json || !accept.event_stream) {
      return respond(http::status::not_acceptable, std::string(kAcceptBoth), keep_alive);
    }
    MessageKinds kinds = message_kinds(request.body());
    rpc::detail::SessionUse use;
    const std::string_view id = text_of(request[kMcpSessionHeader]);
    if (!id.empty()) {
      use = hub_.mcp_sessions.use(id);
      if (!use && !use.refused_for_closing()) return respond(http::status::not_found, "Unknown session\n", keep_alive);
    } else if (kinds.initialize) {
      auto entry = std::make_shared<McpSessionEntry>(hub_.router, hub_.session_options);
      ConnectionInfo info = connection_info(socket_, Protocol::mcp, false);
      add_headers(info, request);
      if (!start_session(hub_.options, info, entry->session)) {
        return respond(http::status::forbidden, "Refused\n", keep_alive);
      }
      std::shared_ptr<rpc::detail::SessionEntry> made = std::move(entry);
      use = hub_.mcp_sessions.use_own(made);
      if (use && use.id().empty()) {  // every kept session is in use: this one could not be found again
        Slot& slot = reply_slot(http::status::service_unavailable, "Too many sessions; retry later\n", keep_alive);
        slot.response.set(http::field::retry_after, std::to_string(hub_.options.retry_after.count()));
        return write_next();
      }
    } else {
      return respond(http::status::bad_request, "Mcp-Session-Id header required\n", keep_alive);
    }
    if (use.refused_for_closing()) {
      return respond(http::status::service_unavailable, "The server is shutting down\n", keep_alive);
    }
    std::shared_ptr<McpStreams> streams =
        kinds.requests ? static_cast<McpSessionEntry&>(use.entry()).streams : nullptr;
    handle(std::move(request), std::move(use), keep_alive, std::move(streams), std::move(kinds.calls));
  }

  // A GET: an event stream for the session's messages sent while none of its calls is running.
  void mcp_listen(Request request, bool keep_alive) {
    if (!accepted(text_of(request[http::field::accept])).event_stream) {
      return respond(http::status::not_acceptable, "Accept must allow text/event-stream\n", keep_alive);
    }
    const std::string_view id = text_of(request[kMcpSessionHeader]);
    if (id.empty()) return respond(http::status::bad_request, "Mcp-Session-Id header required\n", keep_alive);
    rpc::detail::SessionUse use = hub_.mcp_sessions.use(id);
    if (use.refused_for_closing()) {
      return respond(http::status::service_unavailable, "The server is shutting down\n", keep_alive);
    }
    if (!use) return respond(http::status::not_found, "Unknown session\n", keep_alive);
    const std::shared_ptr<McpStreams>& streams = static_cast<McpSessionEntry&>(use.entry()).streams;
    const std::uint64_t sequence = first_sequence_ + slots_.size();
    if (!streams->open_listen(this->shared_from_this(), sequence)) {
      return respond(http::status::conflict, "A stream is open for this session already\n", keep_alive);
    }
    Slot& slot = slots_.emplace_back();
    slot.close_after = !keep_alive;
    if (!keep_alive) input_ended_ = true;
    slot.stream = std::make_unique<EventStream>();
    EventStream& stream = *slot.stream;
    stream.listen = true;
    stream.streams = streams;
    stream.session_id = use.id();
    stream.held = std::make_shared<rpc::detail::SessionUse>(std::move(use));
    start_event_stream(slot, request.version());
    write_next();
  }

  // A DELETE: the client ends its session.
  void mcp_delete(const Request& request, bool keep_alive) {
    const std::string_view id = text_of(request[kMcpSessionHeader]);
    if (id.empty()) return respond(http::status::bad_request, "Mcp-Session-Id header required\n", keep_alive);
    const std::shared_ptr<rpc::detail::SessionEntry> entry = hub_.mcp_sessions.remove(id);
    if (entry == nullptr) return respond(http::status::not_found, "Unknown session\n", keep_alive);
    static_cast<McpSessionEntry&>(*entry).streams->end();  // nothing more is sent; its GET stream ends
    // Its calls are cancelled, and those waiting on a Responder answered -32800 by the session
    // itself, as when a session ends: a handler that ignores its stop token holds up nobody.
    entry->session.cancel_all();
    rpc::detail::answer_waiting_in(entry->session);
    entry->session.detach();  // the server's requests waiting for this client are answered -32094
    respond(http::status::ok, "", keep_alive);
  }

  // The response of `slot` becomes an event stream: its head goes first, then each event.
  void start_event_stream(Slot& slot, unsigned version = 11) {
    EventStream& stream = *slot.stream;
    stream.started = true;
    stream.head.version(version);
    stream.head.result(http::status::ok);
    stream.head.set(http::field::content_type, "text/event-stream");
    stream.head.set(http::field::cache_control, "no-cache");
    if (!stream.session_id.empty()) stream.head.set(session_header(), stream.session_id);
    stream.head.keep_alive(!slot.close_after);
    stream.head.chunked(true);
  }

  // A message of the session's for stream `number`, on the strand.
  void on_event(std::uint64_t number, std::optional<std::string> message, McpStreams& from) {
    Slot* slot = nullptr;
    if (!closed_ && number >= first_sequence_ && number - first_sequence_ < slots_.size()) {
      slot = &slots_[static_cast<std::size_t>(number - first_sequence_)];
    }
    const bool open = slot != nullptr && slot->stream != nullptr && !slot->stream->ended &&
                      (slot->stream->listen || !slot->ready);
    if (!open) {
      // Its call was answered (or its connection closed) before the message came: the GET
      // stream takes it, if there is one.
      if (message) from.send_to_listen(std::move(*message));
      return;
    }
    if (!message) return end_listen_stream(*slot, number);
    if (!slot->stream->started) start_event_stream(*slot, slot->response.version());
    if (queue_event(*slot->stream, *message) > kMaxQueuedOwnBytes) return close();  // a client that does not read
    write_next();
  }

  // Queues `message` as an event of `stream`; returns the bytes queued now.
  static std::size_t queue_event(EventStream& stream, std::string_view message) {
    stream.events.push_back(sse_event(message));
    return stream.queued_bytes += stream.events.back().size();
  }

  void end_listen_stream(Slot& slot, std::uint64_t number) {
    EventStream& stream = *slot.stream;
    if (!stream.listen || stream.ended) return;
    stream.ended = true;
    stream.streams->close_listen(this, number);
    stream.held.reset();  // the session may be evicted or closed now
    write_next();
  }

  // The GET streams end: the client went, or the server shuts down.
  void end_listen_streams() {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].stream != nullptr) end_listen_stream(slots_[i], first_sequence_ + i);
    }
  }

  // Writes what the front slot's event stream has: its head, its events, its end.
  void write_event_stream() {
    EventStream& stream = *slots_.front().stream;
    if (stream.head_written && stream.events.empty() && !stream.ended) return;  // waits for its next event
    const auto self = this->shared_from_this();
    writing_ = true;
    write_deadline_.arm(hub_.options.write_timeout, [self] { self->close(); });
    if (!stream.head_written) {
      stream.serializer.emplace(stream.head);
      http::async_write_header(socket_, *stream.serializer, [self](const boost::system::error_code& error, std::size_t) {
        self->slots_.front().stream->head_written = true;
        self->on_event_written(error);
      });
    } else if (!stream.events.empty()) {
      stream.writing = std::move(stream.events.front());
      stream.events.pop_front();
      stream.queued_bytes -= stream.writing.size();
      asio::async_write(socket_, http::make_chunk(asio::buffer(stream.writing)),
                        [self](const boost::system::error_code& error, std::size_t) { self->on_event_written(error); });
    } else {  // ended, all written
      asio::async_write(socket_, http::make_chunk_last(),
                        [self](const boost::system::error_code& error, std::size_t) { self->on_written(error); });
    }
  }

  void on_event_written(const boost::system::error_code& error) {
    writing_ = false;
    write_deadline_.disarm();
    if (error) return close();
    write_next();
  }

  // Marks the thread as inside this connection's session.handle, on its strand, while it
  // lives: an answer made there is this connection's to take at once.
  class InsideHandle {
   public:
    explicit InsideHandle(HttpConnection* connection) : connection_(connection), previous_(current()) {
      current() = connection;
    }
    ~InsideHandle() {
      current() = previous_;
      connection_->released_after_handle_.clear();
    }
    InsideHandle(const InsideHandle&) = delete;
    InsideHandle& operator=(const InsideHandle&) = delete;
    static HttpConnection*& current() {
      static thread_local HttpConnection* connection = nullptr;
      return connection;
    }

   private:
    HttpConnection* connection_;
    HttpConnection* previous_;
  };

  // Puts a reply in its slot; write_next sends it when its turn comes.
  void fill(std::uint64_t sequence, std::optional<std::string> reply, const std::string& session_id) {
    if (closed_) return;
    Slot& slot = slots_[static_cast<std::size_t>(sequence - first_sequence_)];
    if (slot.stream != nullptr) {
      slot.stream->streams->close_call(this, sequence);
      if (slot.stream->started) {  // the reply is the stream's last event
        if (reply) queue_event(*slot.stream, *reply);
        slot.stream->ended = true;
        slot.ready = true;
        return;
      }
    }
    Response& response = slot.response;
    if (reply) {
      response.result(http::status::ok);
      response.set(http::field::content_type, "application/json");
      response.body() = std::move(*reply);
    } else if (mcp_) {
      response.result(http::status::accepted);  // MCP: notifications and responses taken
      response.content_length(0);
    } else {
      response.result(http::status::no_content);  // no Content-Length either (RFC 9110 8.6)
    }
    if (!session_id.empty()) response.set(session_header(), session_id);
    response.keep_alive(!slot.close_after);
    if (reply) response.prepare_payload();
    slot.ready = true;
  }

  // A response the connection makes itself, queued in order; without `keep_alive` the
  // connection closes after it (and reads no more).
  void respond(http::status status, std::string text, bool keep_alive = false) {
    reply_slot(status, std::move(text), keep_alive);
    write_next();
  }

  // The same, not written yet: headers may still be added (then call write_next).
  Slot& reply_slot(http::status status, std::string text, bool keep_alive) {
    Slot& slot = slots_.emplace_back();
    slot.close_after = !keep_alive;
    if (!keep_alive) input_ended_ = true;
    slot.response.result(status);
    slot.response.set(http::field::content_type, "text/plain");
    slot.response.body() = std::move(text);
    slot.response.keep_alive(keep_alive);
    slot.response.prepare_payload();
    slot.ready = true;
    return slot;
  }

  // The socket goes to a WebSocket connection; this one ends when its handlers return. Once the
  // server is closing, the WebSocket connection is dropped unserved, closing the socket.
  void upgrade(Request request) {
    if (!slots_.empty()) {
      respond(http::status::bad_request, "An upgrade must not be pipelined after other requests\n");
      return;
    }
    upgraded_ = true;
    deadline_.disarm();
    write_deadline_.disarm();
    auto ws = std::make_shared<WebSocketConnection<Stream>>(hub_, std::move(socket_));
    if (hub_.add_counted(*ws, ws, !refusing_)) ws->start(std::move(request), refusing_);
  }

  // ---- Writing ----------------------------------------------------------------------------

  void write_next() {
    if (writing_ || closed_ || slots_.empty()) return;
    if (slots_.front().stream != nullptr && slots_.front().stream->started) return write_event_stream();
    if (!slots_.front().ready) return;
    writing_ = true;
    write_deadline_.arm(hub_.options.write_timeout, [self = this->shared_from_this()] { self->close(); });
    http::async_write(socket_, slots_.front().response,
                      [self = this->shared_from_this()](const boost::system::error_code& error, std::size_t) {
                        self->on_written(error);
                      });
  }

  void on_written(const boost::system::error_code& error) {
    writing_ = false;
    write_deadline_.disarm();
    if (error) return close();
    const bool close_after = slots_.front().close_after;
    slots_.pop_front();
    ++first_sequence_;
    if (close_after) return linger();
    write_next();
    read_next();
    close_when_done();
  }

  // ---- Ending -----------------------------------------------------------------------------

  void close_when_done() {
    if (input_ended_ && slots_.empty() && !writing_) close();
  }

  // After a last response: the sending side is shut, and what the client still sends (the rest
  // of a body refused 413, say) is read and dropped for a while before the socket is closed.
  // Closing at once, with unread bytes, would reset the connection, and the client could lose
  // the response before reading it.
  void linger() {
    input_ended_ = true;
    if (closed_ || reading_) return;  // a read in progress ends in close_when_done
    shut_socket(socket_, asio::socket_base::shutdown_send);
    deadline_.arm(std::min<std::chrono::milliseconds>(hub_.options.request_timeout, kLingerLimit),
                  [self = this->shared_from_this()] { self->close(); });
    discard();
  }

  void discard() {
    if (closed_) return;
    if (!scratch_) scratch_ = std::make_unique<char[]>(kScratch);
    socket_.async_read_some(asio::buffer(scratch_.get(), kScratch),
                            [self = this->shared_from_this()](const boost::system::error_code& error, std::size_t) {
                              if (error) return self->close();
                              self->discard();
                            });
  }

  void drain() {
    if (closed_) return;
    draining_ = true;
    input_ended_ = true;
    end_listen_streams();
    if (reading_) {  // the pending read ends now; a request half read is dropped
      shut_socket(socket_, asio::socket_base::shutdown_receive);
    }
    close_when_done();
  }

  void close() {
    if (closed_ || upgraded_) return;
    closed_ = true;
    deadline_.disarm();
    write_deadline_.disarm();
    close_socket(socket_);
  }

  Hub& hub_;
  Stream socket_;
  Deadline deadline_;
  Deadline write_deadline_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::unique_ptr<char[]> scratch_;  // for the bytes dropped while lingering
  std::shared_ptr<rpc::detail::SessionEntry> own_session_;  // made with its first request
  // Sessions answered inside session.handle, released when it has returned.
  std::vector<std::shared_ptr<rpc::detail::SessionUse>> released_after_handle_;
  std::deque<Slot> slots_;             // responses not written yet, in request order
  std::uint64_t first_sequence_ = 0;   // the sequence number of slots_.front()
  const bool refusing_;
  const bool mcp_;
  bool reading_ = false;
  bool writing_ = false;
  bool input_ended_ = false;  // no more requests are read
  bool draining_ = false;
  bool closed_ = false;
  bool upgraded_ = false;
};

}  // namespace rpc::net::detail
