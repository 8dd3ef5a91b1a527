// SPDX-License-Identifier: MIT
// embed_server: the embed plugin's methods (embed, embed/sparse, embed/multi, rerank) on the
// reference model, plus the built-ins, served over stdio or HTTP with spec_server's flags (see
// --help). Try: embed_server --stdio < examples/embed/sample_batch.jsonl
#include "../../common/server_main.hpp"
#include "embed/hashing_model.hpp"
#include "embed/methods.hpp"

int main(int argc, char** argv) {
  // The weights are generated from the seed here, once; the model outlives the router.
  const embed::HashingModel model{{.dimensions = 384, .seed = 42}};
  return examples::run_server(argc, argv, "embed_server", [&model](rpc::Router& router) {
    embed::register_methods(router, model);
  });
}
