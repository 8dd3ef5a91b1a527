// SPDX-License-Identifier: MIT
// Fuzz target: any bytes as one message to Router::handle (default and tiny limits), to
// handle_insitu (must answer the same) and to a Session with no capabilities, each reply checked
// by the oracle against the rules of design.md.
#include <batchrpc/builtins.hpp>
#include <batchrpc/error.hpp>
#include <batchrpc/responder.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>
#include <batchrpc/tools.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "oracle.hpp"

namespace {

namespace fz = batchrpc_fuzz;

// Thrown by "fail"; it must never reach a client (expose_exception_text is off).
constexpr std::string_view secret = "secret-internal-detail-7f3a";

void add_methods(rpc::Router& router) {
  rpc::add_builtins(router, {.server_name = "fuzz", .server_version = "1", .lsp_cancel = true, .mcp_cancel = true});
  router.add("echo", [](const rpc::Value& v) { return rpc::to_json(v); });
  router.add("add", [](int a, int b) { return static_cast<long long>(a) + b; }, rpc::names("a", "b"));
  router.add("concat", [](std::vector<std::string> parts) {
    std::string all;
    for (const auto& p : parts) all += p;
    return all;
  });
  router.add("blob", [](unsigned n) { return std::string(n < 4096 ? n : 4096, 'x'); }, rpc::names("n"));
  router.add("fail", []() -> int { throw std::runtime_error(std::string(secret)); });
  router.add("refuse", []() -> int {
    throw rpc::Error(rpc::ErrorCode::invalid_params, "refused", rpc::json(R"({"reason":"always"})"));
  });
  router.add("later", [](int x, rpc::Responder done) { done.resolve(x); }, rpc::names("x"));
  router.add("abandon", [](rpc::Responder) {});
  router.add("raw", [](const rpc::Params& p) { return p.size(); });
  router.add("admin_only", [] { return true; }, {.capability = "admin"});
  router.add("__proto__", [] { return "proto"; });
  rpc::Tools tools(router);
  for (const char* name : {"echo", "add", "concat", "blob", "fail", "refuse", "later", "abandon", "admin_only", "ping"}) {
    tools.expose(name);
  }
  tools.add_batch_tool();
}

struct Setup {
  rpc::Router router;
  rpc::Router tiny{rpc::Limits{.max_batch = 4, .max_message_bytes = 1024, .max_depth = 6, .max_response_bytes = 256}};
  std::set<std::string, std::less<>> known;
  Setup() {
    add_methods(router);
    add_methods(tiny);
    for (const char* name : {"ping", "info", "notifications/cancel", "$/cancelRequest", "notifications/cancelled",
                             "echo", "add", "concat", "blob", "fail", "refuse", "later", "abandon", "raw",
                             "admin_only", "__proto__", "tools/list", "tools/call"}) {
      known.emplace(name);
    }
  }
};

const Setup& setup() {
  static const Setup s;
  return s;
}

// The rules for responses to requests of our methods.
struct Rules final : fz::MemberCheck {
  const Setup& s;
  const fz::Limits& limits;
  bool session;  // through a Session granted nothing (else through the router: every capability)
  Rules(const Setup& setup, const fz::Limits& limits_of_run, bool through_session)
      : s(setup), limits(limits_of_run), session(through_session) {}

  void operator()(const fz::Report& r, const fz::Member& m, const fz::Response& resp) const override {
    const bool known = s.known.count(m.method) != 0;
    if (!known) {
      if (resp.code == -32092) return fz::check_max_data(r, resp, limits.max_response_bytes);  // past the reply's limit
      r.check(resp.code == -32601 && resp.data == nullptr, "an unknown method must be -32601 without data");
      return;
    }
    if (session && m.method == "admin_only") {
      r.check(resp.code == -32601 && resp.data != nullptr && resp.data->find("capability") != nullptr &&
                  resp.data->find("capability")->text == "admin",
              "a method the session lacks must be -32601 with data.capability");
      return;
    }
    if (resp.result != nullptr) return;
    switch (resp.code) {
      case -32603:
        r.check(resp.data == nullptr, "-32603 must not carry data (the exception text is hidden)");
        break;
      case -32602:
        r.check(resp.data != nullptr && resp.data->is(fz::Node::Kind::object), "-32602 needs data saying why");
        break;
      case -32092:
        fz::check_max_data(r, resp, limits.max_response_bytes);
        break;
      case -32800:
        r.check(session, "nothing cancels a request on the router's own path");
        break;
      case -32601:  // tools/call and the batch tool report gated tools this way too
        break;
      default:
        r.fail("a response to a known method has an unexpected error code");
    }
  }
};

void check(const fz::Report& base, std::string_view where, const fz::Limits& limits, bool session,
           const std::optional<std::string>& reply) {
  fz::Report r = base;
  r.where = where;
  if (reply) r.reply = *reply;
  const Setup& s = setup();
  fz::check_message(r, limits, reply ? std::optional<std::string_view>(*reply) : std::nullopt,
                    Rules(s, limits, session), session ? fz::Reader::session : fz::Reader::router);
  if (reply && r.input.find(secret) == std::string_view::npos) {
    r.check(reply->find(secret) == std::string::npos, "exception text reached the client");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Setup& s = setup();
  const std::string_view message(reinterpret_cast<const char*>(data), size);
  fz::Report report;
  report.target = "router";
  report.input = message;
  const fz::Limits defaults{};
  const fz::Limits tiny{.max_batch = 4, .max_message_bytes = 1024, .max_depth = 6, .max_response_bytes = 256};

  const std::optional<std::string> reply = s.router.handle(message);
  check(report, "Router::handle", defaults, false, reply);

  // The zero-copy path answers exactly the same.
  std::string insitu(message);
  rpc::Buffer out;
  const bool has = s.router.handle_insitu(insitu, out);
  fz::Report r = report;
  r.where = "Router::handle_insitu";
  r.reply = out.view();
  r.check(has == reply.has_value() && (!has || out.view() == *reply), "handle_insitu differs from handle");

  check(report, "Router::handle, tiny limits", tiny, false, s.tiny.handle(message));

  rpc::Session session(s.router);
  check(report, "Session::handle", defaults, true, session.handle(message));
  return 0;
}
