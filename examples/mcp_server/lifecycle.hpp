// SPDX-License-Identifier: MIT
// mcp_server's lifecycle methods: `initialize` (protocol version negotiation, what the client
// can do), `notifications/initialized` and `logging/setLevel`, and the log messages that honour
// the level the client asked for.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/log.hpp>
#include <batchrpc/peer.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace mcp_example {

// The MCP revisions this server speaks. The first is answered when the client asks for one
// it does not know: the client then decides whether it can speak it.
inline constexpr std::array<std::string_view, 3> supported_versions{"2025-06-18", "2025-03-26",
                                                                    "2024-11-05"};

inline std::string_view negotiate_version(std::string_view requested) {
  for (const std::string_view version : supported_versions) {
    if (version == requested) return version;
  }
  return supported_versions.front();
}

// What the server knows of one client. Handlers on several threads read it, hence the atomics.
class ClientState {
 public:
  void set_roots(bool supported) noexcept { roots_.store(supported); }
  // True when the client declared `capabilities.roots` at initialize: only then may the
  // server ask it for `roots/list`.
  [[nodiscard]] bool has_roots() const noexcept { return roots_.load(); }

  void set_min_level(rpc::mcp::LogLevel level) noexcept { min_level_.store(level); }
  [[nodiscard]] bool wants(rpc::mcp::LogLevel level) const noexcept {
    return level >= min_level_.load();
  }

 private:
  std::atomic<bool> roots_{false};
  std::atomic<rpc::mcp::LogLevel> min_level_{rpc::mcp::LogLevel::info};
};

// The state of each session's client: over stdio the process has one session, over HTTP each
// MCP session is a client of its own. Kept by the session's address and made afresh at each
// initialize, which MCP requires first: a session made later at an ended one's address starts
// clean. (An ended session's state stays until its address is reused: a few bytes each.)
class Clients {
 public:
  // At initialize: a new state for the session of `ctx`.
  std::shared_ptr<ClientState> start(const rpc::Context& ctx) {
    auto state = std::make_shared<ClientState>();
    std::lock_guard lock(mutex_);
    states_[ctx.session()] = state;
    return state;
  }
  // The state of the session of `ctx` (made now if it sent no initialize).
  [[nodiscard]] std::shared_ptr<ClientState> of(const rpc::Context& ctx) {
    std::lock_guard lock(mutex_);
    std::shared_ptr<ClientState>& state = states_[ctx.session()];
    if (state == nullptr) state = std::make_shared<ClientState>();
    return state;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<const rpc::Session*, std::shared_ptr<ClientState>> states_;
};

// Sends `notifications/message` unless the client asked for a higher level with
// logging/setLevel (MCP leaves that filtering to the server).
inline void send_log(const ClientState& client, const rpc::Peer& peer, rpc::mcp::LogLevel level,
                     std::string_view text) {
  if (client.wants(level)) rpc::mcp::log(peer, level, text, "batchrpc-mcp");
}

inline std::optional<rpc::mcp::LogLevel> parse_level(std::string_view name) {
  using rpc::mcp::LogLevel;
  for (const LogLevel level :
       {LogLevel::debug, LogLevel::info, LogLevel::notice, LogLevel::warning, LogLevel::error,
        LogLevel::critical, LogLevel::alert, LogLevel::emergency}) {
    if (rpc::mcp::name(level) == name) return level;
  }
  return std::nullopt;
}

// `initialize`'s result: the version both sides speak, what this server offers, who it is.
inline void write_initialize_result(rpc::ResultWriter& out, std::string_view version) {
  out.start_object();
  out.key("protocolVersion");
  out.string(version);
  out.key("capabilities");
  out.raw(rpc::json(R"({"tools":{"listChanged":false},"logging":{}})"));
  out.key("serverInfo");
  out.start_object();
  out.key("name");
  out.string("batchrpc-mcp");
  out.key("version");
  out.string(rpc::version_string);
  out.end_object();
  out.end_object();
}

inline void add_lifecycle(rpc::Router& router, Clients& clients) {
  // Read by hand: MCP adds members over time, and a typed handler would bind only some.
  router.add("initialize", [&clients](rpc::Context& ctx, rpc::Params params, rpc::ResultWriter& out) {
    ClientState& client = *clients.start(ctx);
    const rpc::Value* requested = params.find("protocolVersion");
    const std::string_view version =
        requested != nullptr && requested->IsString()
            ? negotiate_version({requested->GetString(), requested->GetStringLength()})
            : supported_versions.front();
    const rpc::Value* capabilities = params.find("capabilities");
    client.set_roots(capabilities != nullptr && capabilities->IsObject() &&
                     capabilities->HasMember("roots"));
    write_initialize_result(out, version);
  });

  // The client's confirmation that initialization is over; nothing to do here.
  router.add("notifications/initialized", [] {}, {.inline_only = true});

  router.add("logging/setLevel",
             [&clients](rpc::Context& ctx, const std::string& level) {
               const std::optional<rpc::mcp::LogLevel> parsed = parse_level(level);
               if (!parsed) {
                 throw rpc::Error(
                     rpc::ErrorCode::invalid_params,
                     rpc::json(R"({"param":"level","reason":"not one of MCP's log levels"})"));
               }
               clients.of(ctx)->set_min_level(*parsed);
               return rpc::json("{}");
             },
             rpc::names("level"), {.inline_only = true});
}

}  // namespace mcp_example
