// SPDX-License-Identifier: MIT
// lsp_server's stand-in for a real workspace: made-up source files, three symbols each, that
// `workspace/symbol` scans one file at a time (slowly, so its progress and cancellation show).
#pragma once

#include <batchrpc/batchrpc.hpp>
#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lsp_example {

// LSP's SymbolKind values used here.
enum class SymbolKind : int { klass = 5, function = 12, constant = 14 };

struct Symbol {
  std::string name;
  SymbolKind kind;
  std::string uri;
  unsigned line;
};

using File = std::vector<Symbol>;

// File i is `demo:///src/module<i>.cpp`, with Widget<i>, parse_widget<i> and kMaxWidgets<i>.
inline std::vector<File> make_workspace(std::size_t files) {
  std::vector<File> workspace;
  for (std::size_t i = 0; i < files; ++i) {
    const std::string n = std::to_string(i);
    const std::string uri = "demo:///src/module" + n + ".cpp";
    workspace.push_back({{"Widget" + n, SymbolKind::klass, uri, 10},
                         {"parse_widget" + n, SymbolKind::function, uri, 20},
                         {"kMaxWidgets" + n, SymbolKind::constant, uri, 30}});
  }
  return workspace;
}

// LSP leaves matching to the server: here, a case-insensitive substring (empty matches all).
inline bool matches(std::string_view name, std::string_view query) {
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  if (query.size() > name.size()) return false;
  for (std::size_t start = 0; start + query.size() <= name.size(); ++start) {
    std::size_t i = 0;
    while (i < query.size() && lower(name[start + i]) == lower(query[i])) ++i;
    if (i == query.size()) return true;
  }
  return false;
}

// One LSP SymbolInformation.
inline void write_symbol(rpc::ResultWriter& out, const Symbol& symbol) {
  const auto position = [&out](unsigned line, std::size_t character) {
    out.start_object();
    out.key("line");
    out.unsigned_integer(line);
    out.key("character");
    out.unsigned_integer(character);
    out.end_object();
  };
  out.start_object();
  out.key("name");
  out.string(symbol.name);
  out.key("kind");
  out.integer(static_cast<int>(symbol.kind));
  out.key("location");
  out.start_object();
  out.key("uri");
  out.string(symbol.uri);
  out.key("range");
  out.start_object();
  out.key("start");
  position(symbol.line, 0);
  out.key("end");
  position(symbol.line, symbol.name.size());
  out.end_object();
  out.end_object();
  out.end_object();
}

// A file's matches as a JSON array (for a partial result).
inline rpc::Json symbols_json(const std::vector<const Symbol*>& symbols) {
  rpc::Buffer text;
  rpc::ResultWriter out(text);
  out.start_array();
  for (const Symbol* symbol : symbols) write_symbol(out, *symbol);
  out.end_array();
  return rpc::Json::trusted(text.str());
}

}  // namespace lsp_example
