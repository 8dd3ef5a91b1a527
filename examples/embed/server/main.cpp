// SPDX-License-Identifier: MIT
// embed_server: the embed plugin's methods (embed, embed/sparse, embed/multi, rerank) on the
// reference model, plus the built-ins, served over stdio or HTTP with spec_server's flags (see
// --help). Every method is also a tool of the same name (`tools/list`, `tools/call`), beside
// the `batch` tool. Try: embed_server --stdio < examples/embed/sample_batch.jsonl
#include "../../common/server_main.hpp"
#include "../../mcp_server/embed_schemas.hpp"
#include "embed/hashing_model.hpp"
#include "embed/methods.hpp"

int main(int argc, char** argv) {
  // The weights are generated from the seed here, once; the model outlives the router.
  const embed::HashingModel model{{.dimensions = 384, .seed = 42}};
  return examples::run_server(argc, argv, "embed_server", [&model](rpc::Router& router) {
    embed::register_methods(router, model);

    rpc::Tools tools{router};  // the registry lives on in the router's tools/list and tools/call
    tools.expose("ping", {.description = "Echoes the nonce it is given.",
                          .input_schema = rpc::json(R"({"type":"object","properties":{"nonce":{}}})")});
    tools.expose("info", {.description = "Describes the server, its model and the capabilities this session is granted."});
    const rpc::Json embed_schema = rpc::json(mcp_example::embed_schema);
    tools.expose("embed", {.description = "Dense embeddings: one L2-normalised vector per input text.",
                           .input_schema = embed_schema});
    tools.expose("embed/sparse", {.description = "Sparse embeddings: indices (ascending) and weights per input text.",
                                  .input_schema = embed_schema});
    tools.expose("embed/multi", {.description = "Multi-vector embeddings: one vector per token of each input text.",
                                 .input_schema = embed_schema});
    tools.expose("rerank", {.description = "Scores passages against a query by cosine similarity, best first.",
                            .input_schema = rpc::json(mcp_example::rerank_schema)});
    tools.add_batch_tool();
  });
}
