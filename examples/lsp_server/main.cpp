// SPDX-License-Identifier: MIT
// lsp_server: a small language server over stdio with LSP's Content-Length framing. It shows
// what a server built on batchrpc does in both directions:
//   - initialize / initialized / shutdown / exit, the LSP lifecycle (exit code 0 after shutdown);
//   - workspace/symbol scans a made-up workspace a file at a time, reporting `$/progress`
//     (begin, report, end) under the request's workDoneToken, sending partial results under its
//     partialResultToken, and stopping at `$/cancelRequest` (answered -32800);
//   - demo/configuration {section} asks the client for `workspace/configuration` and returns its
//     answer;
//   - window/logMessage once initialized.
//
//   lsp_server [--files N] [--index-delay-ms MS]
//
// tests/interop/vscode_jsonrpc_client.js drives it with vscode-jsonrpc.
#include <unistd.h>

#include <atomic>
#include <batchrpc/batchrpc.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../common/cancellable_sleep.hpp"
#include "workspace.hpp"

namespace {

struct Config {
  std::size_t files = 10;
  std::chrono::milliseconds index_delay{100};  // per file: the scan's stand-in for real work
};

// What the server knows of its one client, read and written from handlers on several threads.
struct ClientState {
  std::atomic<bool> supports_configuration{false};
  std::atomic<bool> shutdown_requested{false};
  std::atomic<bool> exit_requested{false};
};

std::optional<Config> parse_command_line(int argc, char** argv) {
  Config config;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view arg = argv[i];
    std::size_t value = 0;
    try {
      value = std::stoul(argv[i + 1]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (arg == "--files" && value > 0) {
      config.files = value;
    } else if (arg == "--index-delay-ms") {
      config.index_delay = std::chrono::milliseconds(value);
    } else {
      return std::nullopt;
    }
  }
  if (argc % 2 == 0) return std::nullopt;  // an option without its value
  return config;
}

// True when `object` has the member path `a.b` set to true (the client's capabilities).
bool flag(const rpc::Value* object, std::string_view a, std::string_view b) {
  if (object == nullptr || !object->IsObject()) return false;
  const auto outer = object->FindMember(rapidjson::StringRef(a.data(), a.size()));
  if (outer == object->MemberEnd() || !outer->value.IsObject()) return false;
  const auto inner = outer->value.FindMember(rapidjson::StringRef(b.data(), b.size()));
  return inner != outer->value.MemberEnd() && inner->value.IsBool() && inner->value.GetBool();
}

void add_lifecycle(rpc::Router& router, ClientState& client) {
  router.add("initialize", [&client](rpc::Params params, rpc::ResultWriter& out) {
    client.supports_configuration = flag(params.find("capabilities"), "workspace", "configuration");
    out.raw(rpc::json(R"({"capabilities":{"workspaceSymbolProvider":{"workDoneProgress":true}},)"
                      R"("serverInfo":{"name":"batchrpc-lsp","version":")" +
                      std::string(rpc::version_string) + R"("}})"));
  });
  router.add("initialized", [](rpc::Context& ctx) {
    rpc::lsp::log_message(ctx.peer(), rpc::lsp::MessageType::info, "batchrpc-lsp: initialized");
  });
  router.add("shutdown", [&client] { client.shutdown_requested = true; });
  // Inline, so it runs on the reading thread before the next read, which then sees the flag.
  router.add("exit", [&client] { client.exit_requested = true; }, {.inline_only = true});
}

// workspace/symbol {query}: scans the workspace file by file (see the file comment).
void workspace_symbol(const Config& config, const std::vector<lsp_example::File>& workspace,
                      const std::string& query, rpc::Context& ctx, rpc::ResultWriter& out) {
  const rpc::Progress progress(ctx);
  const bool streamed = ctx.params().find("partialResultToken") != nullptr;
  const std::size_t total = workspace.size();
  progress.begin("Indexing symbols", "0 of " + std::to_string(total) + " files",
                 /*cancellable=*/true);

  std::vector<const lsp_example::Symbol*> found;  // kept for the reply when not streamed
  std::size_t count = 0;
  for (std::size_t i = 0; i < total; ++i) {
    if (!spec::sleep_unless_cancelled(ctx.stop_token(), config.index_delay)) {
      progress.end("cancelled");
      throw rpc::cancelled();
    }
    std::vector<const lsp_example::Symbol*> in_file;
    for (const lsp_example::Symbol& symbol : workspace[i]) {
      if (lsp_example::matches(symbol.name, query)) in_file.push_back(&symbol);
    }
    count += in_file.size();
    if (streamed && !in_file.empty()) {
      progress.partial(lsp_example::symbols_json(in_file));
    } else if (!streamed) {
      found.insert(found.end(), in_file.begin(), in_file.end());
    }
    progress.report(static_cast<double>(i + 1), static_cast<double>(total),
                    std::to_string(i + 1) + " of " + std::to_string(total) + " files");
  }
  progress.end(std::to_string(count) + " symbols");

  out.start_array();  // empty when every match went out as a partial result
  for (const lsp_example::Symbol* symbol : found) lsp_example::write_symbol(out, *symbol);
  out.end_array();
}

// demo/configuration {section}: the server's own request to the client, answered later.
void ask_configuration(const ClientState& client, const std::string& section, rpc::Context& ctx,
                       const rpc::Responder& answer) {
  if (!client.supports_configuration) {
    answer.reject(rpc::Error(-32001, "The client did not declare workspace.configuration"));
    return;
  }
  rpc::Buffer text;
  rpc::ResultWriter params(text);
  params.start_object();
  params.key("items");
  params.start_array();
  params.start_object();
  params.key("section");
  params.string(section);
  params.end_object();
  params.end_array();
  params.end_object();
  // The reply comes on the reading thread; the handler has returned long before.
  ctx.peer().request(
      "workspace/configuration", rpc::Json::trusted(text.str()),
      [answer](const rpc::Reply& reply) {
        if (!reply.ok()) {
          answer.reject(*reply.error());
          return;
        }
        answer.resolve_with([&reply](rpc::ResultWriter& out) { out.raw(reply.result()); });
      },
      {.timeout = std::chrono::seconds(30)});
}

// Standard input, until `exit` has been handled or the input ends.
rpc::StreamReader stdin_reader(const ClientState& client) {
  return [&client](char* data, std::size_t size) -> std::ptrdiff_t {
    if (client.exit_requested) return 0;
    for (;;) {
      const ssize_t n = ::read(STDIN_FILENO, data, size);
      if (n >= 0 || errno != EINTR) return n;
    }
  };
}

bool write_stdout(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Config> config = parse_command_line(argc, argv);
  if (!config) {
    std::cerr
        << "usage: lsp_server [--files N] [--index-delay-ms MS]   (LSP over stdin and stdout)\n";
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a client that goes away is a failed write instead

  const std::vector<lsp_example::File> workspace = lsp_example::make_workspace(config->files);
  ClientState client;
  rpc::Router router;
  // $/cancelRequest {id} cancels a request in flight.
  rpc::add_builtins(router, {.server_name = "batchrpc-lsp", .lsp_cancel = true});
  add_lifecycle(router, client);
  router.add(
      "workspace/symbol",
      [&](const std::string& query, rpc::Context& ctx, rpc::ResultWriter& out) {
        workspace_symbol(*config, workspace, query, ctx, out);
      },
      rpc::names("query"));
  router.add(
      "demo/configuration",
      [&client](const std::string& section, rpc::Context& ctx, rpc::Responder answer) {
        ask_configuration(client, section, ctx, answer);
      },
      rpc::names("section"));

  // Requests run on the pool, so the reading thread keeps reading: $/cancelRequest and the
  // client's answers reach requests still running.
  rpc::ThreadPool pool{4};
  rpc::Session session{router, {.executor = &pool}};
  rpc::serve_stream(session, stdin_reader(client), write_stdout,
                    {.framing = rpc::Framing::content_length});
  // LSP: 0 when shutdown came before the end, 1 otherwise.
  return client.shutdown_requested ? 0 : 1;
}
