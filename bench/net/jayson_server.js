// SPDX-License-Identifier: MIT
// A peer for bench/net/run.sh: a jayson (Node.js) JSON-RPC 2.0 HTTP server answering `ping`
// ({} or {"nonce": X}) on 127.0.0.1: HTTP POST, and WebSocket (jayson's server on the `ws`
// package, one JSON-RPC message per text message) on the same port.
// usage: node jayson_server.js PORT
'use strict';
const jayson = require('jayson');

const port = Number(process.argv[2] || 8080);
const server = new jayson.Server({
  ping(params, callback) {
    const result = {};
    if (params && typeof params === 'object' && !Array.isArray(params) && 'nonce' in params) {
      result.nonce = params.nonce;
    }
    callback(null, result);
  },
});
const http = server.http();
server.websocket({ server: http });  // upgrades on the HTTP port
http.listen(port, '127.0.0.1', () => {
  process.stderr.write(`jayson_server: listening on http://127.0.0.1:${port}/\n`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
