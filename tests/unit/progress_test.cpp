// SPDX-License-Identifier: MIT
// A handler's progress and log messages to its client, in MCP's and LSP's forms.
#include <batchrpc/batchrpc.hpp>

#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "support/wire.hpp"

namespace {

// A session attached to a Wire, on a router with a "work" method that reports its steps.
struct Reporting {
  rpc::Router router;
  Wire wire;
  std::optional<rpc::Progress> kept;  // a handle kept past the handler
  rpc::Session session{router};

  Reporting() {
    router.add("work", [this](rpc::Params, rpc::Context& ctx) {
      const rpc::Progress progress(ctx);
      kept = progress;
      const bool first = progress.report(1, 4, "one");
      const bool backwards = progress.report(0.5, 4);
      const bool second = progress.report(2, 4);
      const bool repeated = progress.report(2, 4, "still two");  // MCP: must increase; LSP: may repeat
      const bool unknown_total = progress.report(3);
      const bool not_finite = progress.report(std::numeric_limits<double>::quiet_NaN());
      const bool ended = progress.end("done");
      const bool after_end = progress.report(4, 4);
      return std::vector<bool>{first, backwards, second, repeated, unknown_total, not_finite, ended, after_end};
    });
    session.attach(wire.writer());
  }

  std::optional<std::string> call(std::string_view params) {
    return session.handle(R"({"jsonrpc":"2.0","method":"work","id":1,"params":)" + std::string(params) + "}");
  }
};

std::string notification(std::string_view method, std::string_view params) {
  return R"({"jsonrpc":"2.0","method":")" + std::string(method) + R"(","params":)" + std::string(params) + "}";
}

}  // namespace

TEST_SUITE("progress: MCP and LSP") {
  TEST_CASE("MCP: params._meta.progressToken gets notifications/progress, rising, and no end") {
    Reporting r;
    CHECK(r.call(R"({"_meta":{"progressToken":"tok-1"},"x":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":[true,false,true,false,true,false,false,false]})");
    CHECK(r.wire.taken() == std::vector<std::string>{
                                notification("notifications/progress", R"({"progressToken":"tok-1","progress":1,"total":4,"message":"one"})"),
                                notification("notifications/progress", R"({"progressToken":"tok-1","progress":2,"total":4})"),
                                notification("notifications/progress", R"({"progressToken":"tok-1","progress":3})"),
                            });
    REQUIRE(r.kept);
    CHECK(r.kept->dialect() == rpc::Progress::Dialect::mcp);
    CHECK(r.kept->token().text() == R"("tok-1")");
    CHECK_FALSE(r.kept->report(10));  // copies share their state: it has ended
  }

  TEST_CASE("LSP: workDoneToken gets $/progress begin (titled with the method), reports and one end") {
    Reporting r;
    CHECK(r.call(R"({"workDoneToken":7,"textDocument":{}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":[true,false,true,true,true,false,true,false]})");
    const auto progress = [](std::string_view value) {
      return notification("$/progress", R"({"token":7,"value":)" + std::string(value) + "}");
    };
    CHECK(r.wire.taken() == std::vector<std::string>{
                                progress(R"({"kind":"begin","title":"work"})"),
                                progress(R"({"kind":"report","message":"one","percentage":25})"),
                                progress(R"({"kind":"report","percentage":50})"),
                                progress(R"({"kind":"report","message":"still two","percentage":50})"),
                                progress(R"({"kind":"report"})"),
                                progress(R"({"kind":"end","message":"done"})"),
                            });
    CHECK(r.kept->dialect() == rpc::Progress::Dialect::lsp);
  }

  TEST_CASE("LSP: an explicit begin, partial results, and an end with no begin sends nothing") {
    rpc::Router router;
    Wire wire;
    router.add("find", [](rpc::Context& ctx) {
      const rpc::Progress progress(ctx);
      const bool begun = progress.begin("Finding", "starting", true);
      const bool again = progress.begin("Finding");
      const bool part = progress.partial(rpc::json(R"([{"uri":"a"}])"));
      return std::vector<bool>{begun, again, part, progress.end()};
    });
    router.add("quiet", [](rpc::Context& ctx) {
      const rpc::Progress progress(ctx);
      return progress.end();
    });
    rpc::Session session{router};
    session.attach(wire.writer());
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"find","id":1,"params":{"workDoneToken":"w","partialResultToken":"p"}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":[true,false,true,true]})");
    CHECK(wire.taken() == std::vector<std::string>{
                              notification("$/progress", R"({"token":"w","value":{"kind":"begin","title":"Finding","cancellable":true,"message":"starting"}})"),
                              notification("$/progress", R"({"token":"p","value":[{"uri":"a"}]})"),
                              notification("$/progress", R"({"token":"w","value":{"kind":"end"}})"),
                          });
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"quiet","id":2,"params":{"workDoneToken":"w"}})") ==
          R"({"jsonrpc":"2.0","id":2,"result":false})");
    CHECK(wire.taken().empty());
  }

  TEST_CASE("no token, a token of the wrong type, positional params, or no client: nothing is sent") {
    Reporting r;
    for (const std::string_view params : {R"({"x":1})", R"({"_meta":{"progressToken":true}})",
                                          R"({"workDoneToken":null})", R"([{"workDoneToken":1}])"}) {
      CAPTURE(params);
      CHECK(r.call(params) == R"({"jsonrpc":"2.0","id":1,"result":[false,false,false,false,false,false,false,false]})");
      CHECK_FALSE(r.kept->wanted());
    }
    CHECK(r.wire.taken().empty());
    r.session.detach();
    CHECK(r.call(R"({"_meta":{"progressToken":1}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":[false,false,false,false,false,false,false,false]})");
    CHECK(r.kept->wanted());
    const rpc::Progress none;
    CHECK_FALSE(none.report(1));
    CHECK_FALSE(none.begin("x"));
    CHECK_FALSE(none.partial(rpc::json("1")));
  }

  TEST_CASE("a tool called through tools/call reports under tools/call's _meta.progressToken") {
    Reporting r;
    rpc::Tools tools{r.router};
    tools.expose("work");
    const auto reply = r.session.handle(
        R"({"jsonrpc":"2.0","method":"tools/call","id":3,"params":{"name":"work","arguments":{"x":1},"_meta":{"progressToken":9}}})");
    REQUIRE(reply);
    CHECK(reply->find(R"("isError":false)") != std::string::npos);
    CHECK(r.wire.taken() == std::vector<std::string>{
                                notification("notifications/progress", R"({"progressToken":9,"progress":1,"total":4,"message":"one"})"),
                                notification("notifications/progress", R"({"progressToken":9,"progress":2,"total":4})"),
                                notification("notifications/progress", R"({"progressToken":9,"progress":3})"),
                            });
  }

  // MCP's progress must increase with every notification, and LSP's token must not begin again
  // after its end: the operations of one batch share the token of its tools/call.
  TEST_CASE("the batch tool's operations report on shares of one rising sequence, MCP and LSP") {
    rpc::Router router;
    router.add("steps", [](int n, rpc::Context& ctx) {
      const rpc::Progress progress(ctx);
      for (int i = 1; i <= n; ++i) progress.report(i, n, "step");
      const bool ended = progress.end("done");  // the batch's to send
      return ended ? -1 : n;
    }, rpc::names("n"));
    router.add("quiet", [] { return 0; });
    rpc::Tools tools{router};
    tools.expose("steps");
    tools.expose("quiet");
    tools.add_batch_tool();
    Wire wire;
    rpc::Session session{router};
    session.attach(wire.writer());
    const std::string operations =
        R"("operations":[{"tool":"steps","arguments":{"n":2}},{"tool":"quiet"},{"tool":"steps","arguments":{"n":1}}])";
    const auto batch = [&](std::string_view token) {
      const auto reply = session.handle(R"({"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"name":"batch",)" +
                                        std::string(token) + R"(,"arguments":{)" + operations + "}}}");
      REQUIRE(reply);
      CHECK(reply->find(R"(\"result\":2)") != std::string::npos);
      CHECK(reply->find(R"(\"result\":-1)") == std::string::npos);
      CHECK(reply->find(R"("isError":false)") != std::string::npos);
      return wire.taken();
    };
    SUBCASE("MCP: operation k of 3 reports k + done / total of 3; the batch k + 1 as each ends") {
      const auto progress = [](std::string_view fields) {
        return notification("notifications/progress", R"({"progressToken":"m",)" + std::string(fields) + "}");
      };
      CHECK(batch(R"("_meta":{"progressToken":"m"})") == std::vector<std::string>{
                                                           progress(R"("progress":0.5,"total":3,"message":"step")"),
                                                           progress(R"("progress":1,"total":3,"message":"step")"),
                                                           progress(R"("progress":2,"total":3,"message":"quiet")"),
                                                           progress(R"("progress":3,"total":3,"message":"step")"),
                                                       });
    }
    SUBCASE("LSP: one begin, percentages that rise over the whole batch, one end after the last") {
      const auto value = [](std::string_view fields) {
        return notification("$/progress", R"({"token":"w","value":{)" + std::string(fields) + "}}");
      };
      CHECK(batch(R"("workDoneToken":"w")") == std::vector<std::string>{
                                                  value(R"("kind":"begin","title":"batch")"),
                                                  value(R"("kind":"report","message":"step","percentage":16)"),
                                                  value(R"("kind":"report","message":"step","percentage":33)"),
                                                  value(R"("kind":"report","message":"steps","percentage":33)"),
                                                  value(R"("kind":"report","message":"quiet","percentage":66)"),
                                                  value(R"("kind":"report","message":"step","percentage":100)"),
                                                  value(R"("kind":"report","message":"steps","percentage":100)"),
                                                  value(R"("kind":"end")"),
                                              });
    }
  }

  TEST_CASE("a batch's operation that reports counts with no total still rises, under MCP") {
    rpc::Router router;
    router.add("count", [](int n, rpc::Context& ctx) {
      const rpc::Progress progress(ctx);
      for (int i = 0; i <= n; ++i) progress.report(i);  // 0 lands on the batch's last report
      return n;
    }, rpc::names("n"));
    router.add("quiet", [] { return 0; });
    rpc::Tools tools{router};
    tools.expose("count");
    tools.expose("quiet");
    tools.add_batch_tool();
    Wire wire;
    rpc::Session session{router};
    session.attach(wire.writer());
    const auto reply = session.handle(
        R"({"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"name":"batch","_meta":{"progressToken":"m"},)"
        R"("arguments":{"operations":[{"tool":"quiet"},{"tool":"count","arguments":{"n":3}}]}}})");
    REQUIRE(reply);
    CHECK(reply->find(R"("isError":false)") != std::string::npos);
    const auto progress = [](std::string_view fields) {
      return notification("notifications/progress", R"({"progressToken":"m",)" + std::string(fields) + "}");
    };
    // Operation 1 of 2 reports i as 1 + i / (i + 1): 1 (dropped: not above 1), 1.5, 1.666..,
    // 1.75; then the batch's own 2 of 2.
    const std::vector<std::string> sent = wire.taken();
    REQUIRE(sent.size() == 5);
    CHECK(sent[0] == progress(R"("progress":1,"total":2,"message":"quiet")"));
    CHECK(sent[1] == progress(R"("progress":1.5,"total":2)"));
    CHECK(sent[2].find(R"("progress":1.66666)") != std::string::npos);
    CHECK(sent[3] == progress(R"("progress":1.75,"total":2)"));
    CHECK(sent[4] == progress(R"("progress":2,"total":2,"message":"count")"));
  }

  TEST_CASE("a Progress kept past its session sends nothing and stays safe") {
    std::optional<rpc::Progress> kept;
    {
      Reporting r;
      (void)r.call(R"({"_meta":{"progressToken":1}})");
      kept = r.kept;
    }
    CHECK_FALSE(kept->report(100));
  }

  TEST_CASE("a handler sees its params through its Context, whatever it binds") {
    rpc::Router router;
    router.add("meta", [](int x, rpc::Context& ctx) {
      const rpc::Value* meta = ctx.params().find("_meta");
      return x + (meta != nullptr && meta->IsObject() ? static_cast<int>(meta->MemberCount()) : -100);
    }, rpc::names("x"));
    rpc::Session session{router};
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"meta","id":1,"params":{"x":1,"_meta":{"a":1,"b":2}}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":3})");
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"meta","id":1,"params":{"x":1,"_meta":{"a":1}}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":2})");
    // Only the protocols' metadata is passed over; other unknown names are still refused.
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"meta","id":1,"params":{"x":1,"y":2}})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"y","reason":"unknown parameter"}}})");
    // A method that names one of them binds it like any other.
    rpc::Router naming;
    naming.add("token", [](std::string workDoneToken) { return workDoneToken; }, rpc::names("workDoneToken"));
    CHECK(naming.handle(R"({"jsonrpc":"2.0","method":"token","id":1,"params":{"workDoneToken":"w","_meta":{}}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":"w"})");
  }
}

TEST_SUITE("log: MCP and LSP messages to the client") {
  TEST_CASE("notifications/message, window/logMessage and window/showMessage") {
    rpc::Router router;
    Wire wire;
    rpc::Session session{router};
    session.attach(wire.writer());
    const rpc::Peer peer = session.peer();
    CHECK(rpc::mcp::log(peer, rpc::mcp::LogLevel::warning, "disk \"low\""));
    CHECK(rpc::mcp::log(peer, rpc::mcp::LogLevel::debug, rpc::json(R"({"free":12})"), "storage"));
    CHECK(rpc::lsp::log_message(peer, rpc::lsp::MessageType::info, "indexed"));
    CHECK(rpc::lsp::show_message(peer, rpc::lsp::MessageType::error, "failed"));
    CHECK(wire.taken() == std::vector<std::string>{
                              notification("notifications/message", R"({"level":"warning","data":"disk \"low\""})"),
                              notification("notifications/message", R"({"level":"debug","logger":"storage","data":{"free":12}})"),
                              notification("window/logMessage", R"({"type":3,"message":"indexed"})"),
                              notification("window/showMessage", R"({"type":1,"message":"failed"})"),
                          });
    CHECK(rpc::mcp::name(rpc::mcp::LogLevel::emergency) == "emergency");
    CHECK_THROWS_AS(rpc::lsp::log_message(peer, rpc::lsp::MessageType::log, "\xff"), std::logic_error);
    session.detach();
    CHECK_FALSE(rpc::mcp::log(peer, rpc::mcp::LogLevel::info, "gone"));
  }
}
