// SPDX-License-Identifier: MIT
// The floor: RapidJSON alone, parsing a request and writing a reply, as a hand-written server
// without batchrpc would.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>

int main() {
  rapidjson::Document doc;
  doc.Parse(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})");
  if (doc.HasParseError() || !doc.IsObject()) return 1;
  const auto& params = doc["params"];
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("jsonrpc");
  w.String("2.0");
  w.Key("id");
  w.Int(doc["id"].GetInt());
  w.Key("result");
  w.Int(params[0].GetInt() - params[1].GetInt());
  w.EndObject();
  std::puts(out.GetString());
  return 0;
}
