// SPDX-License-Identifier: MIT
// Interoperability: spec_server driven over HTTP by jayson, a JSON-RPC 2.0 client we did not
// write. Every reply is compared whole with assert.deepStrictEqual.
//
//   node jayson_client.js <path to spec_server>
//
// Starts `spec_server --http --port 0`, reads the port it prints on stderr, runs the checks,
// prints one line per check and an `N passed, M failed` summary, and exits non-zero on any
// failure. The server is always killed.
'use strict';

const assert = require('node:assert');
const { spawn } = require('node:child_process');
const jayson = require('jayson');

const serverPath = process.argv[2];
if (!serverPath) {
  console.error('usage: node jayson_client.js <path to spec_server>');
  process.exit(2);
}

const STARTUP_TIMEOUT_MS = 5000;
const REQUEST_TIMEOUT_MS = 5000;
const SUITE_TIMEOUT_MS = 30000;

// ---- The server ---------------------------------------------------------------------------------

let server = null;

function killServer() {
  if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
}
process.on('exit', killServer);

function startServer() {
  return new Promise((resolve, reject) => {
    server = spawn(serverPath, ['--http', '--host', '127.0.0.1', '--port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const timer = setTimeout(() => {
      reject(new Error(`spec_server did not report its port within ${STARTUP_TIMEOUT_MS} ms; stderr: ${stderr}`));
    }, STARTUP_TIMEOUT_MS);
    server.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    server.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`spec_server exited early (code ${code}, signal ${signal}); stderr: ${stderr}`));
    });
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      stderr += chunk;
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
}

// ---- jayson, promisified (a two-argument callback gets the whole response) ---------------------

function send(client, ...args) {
  return new Promise((resolve, reject) => {
    client.request(...args, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

// The same, with jayson's three-argument callback that splits a batch into errors and successes.
function sendSplit(client, batch) {
  return new Promise((resolve, reject) => {
    client.request(batch, (err, errors, successes) => (err ? reject(err) : resolve({ errors, successes })));
  });
}

const result = (id, value) => ({ jsonrpc: '2.0', id, result: value });
const error = (id, code, message, data) =>
  ({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });

// ---- The checks -------------------------------------------------------------------------------

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

check('subtract with positional params', async (client) => {
  assert.deepStrictEqual(await send(client, 'subtract', [42, 23], 1), result(1, 19));
  assert.deepStrictEqual(await send(client, 'subtract', [23, 42], 2), result(2, -19));
});

check('subtract with named params', async (client) => {
  assert.deepStrictEqual(await send(client, 'subtract', { subtrahend: 23, minuend: 42 }, 'named'),
                         result('named', 19));
  assert.deepStrictEqual(await send(client, 'subtract', { minuend: 42, subtrahend: 23 }, 4), result(4, 19));
});

check("jayson's generated id is echoed", async (client) => {
  const request = client.request('subtract', [5, 3]);  // no callback: only builds the request
  assert.strictEqual(typeof request.id, 'string');
  assert.deepStrictEqual(await send(client, request), result(request.id, 2));
});

check('a batch: a request, a notification, get_data, an unknown method', async (client) => {
  const batch = [
    client.request('subtract', [42, 23], 'b1'),
    client.request('update', [1, 2, 3, 4, 5], null),  // a notification: no entry
    client.request('get_data', null, 'b2'),
    client.request('foo.get', { name: 'myself' }, 'b3'),
  ];
  assert.ok(!('id' in batch[1]), 'jayson sends a notification without an id');
  assert.deepStrictEqual(await send(client, batch), [
    result('b1', 19),
    result('b2', ['hello', 5]),
    error('b3', -32601, 'Method not found'),
  ]);
  assert.deepStrictEqual(await sendSplit(client, batch), {
    errors: [error('b3', -32601, 'Method not found')],
    successes: [result('b1', 19), result('b2', ['hello', 5])],
  });
});

check('ping echoes the nonce', async (client) => {
  assert.deepStrictEqual(await send(client, 'ping', { nonce: 'jayson-7f3a' }, 'p1'),
                         result('p1', { nonce: 'jayson-7f3a' }));
  assert.deepStrictEqual(await send(client, 'ping', { nonce: { n: [1, 2.5, null, true] } }, 'p2'),
                         result('p2', { nonce: { n: [1, 2.5, null, true] } }));
});

check('notifications get nothing back (HTTP 204)', async (client) => {
  assert.strictEqual(await send(client, 'notify_hello', [7], null), undefined);
  assert.strictEqual(await send(client, [client.request('update', [1], null),
                                         client.request('foobar', null, null)]), undefined);
});

check('errors: invalid params and an empty batch', async (client) => {
  assert.deepStrictEqual(await send(client, 'subtract', { minuend: 42 }, 'e1'),
                         error('e1', -32602, 'Invalid params',
                               { param: 'subtrahend', reason: 'missing required parameter' }));
  assert.deepStrictEqual(await send(client, []),
                         error(null, -32600, 'Invalid Request', { reason: 'empty batch' }));
});

check('a cancel in a batch stops a sleep before it starts', async (client) => {
  const started = Date.now();
  assert.deepStrictEqual(await send(client, [
    client.request('sleep', { ms: 10000 }, 's1'),
    client.request('notifications/cancel', { id: 's1' }, null),
  ]), [error('s1', -32800, 'Request cancelled')]);
  assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
});

// ---- Runner -----------------------------------------------------------------------------------

async function main() {
  const suiteTimer = setTimeout(() => {
    console.error(`interop: still running after ${SUITE_TIMEOUT_MS} ms, giving up`);
    killServer();
    process.exit(1);
  }, SUITE_TIMEOUT_MS);
  suiteTimer.unref();

  let passed = 0;
  let failed = 0;
  try {
    const port = await startServer();
    const client = jayson.client.http({ host: '127.0.0.1', port, timeout: REQUEST_TIMEOUT_MS });
    for (const { name, fn } of checks) {
      try {
        await fn(client);
        passed += 1;
        console.log(`ok   ${name}`);
      } catch (err) {
        failed += 1;
        console.log(`FAIL ${name}\n${String(err && err.stack ? err.stack : err).replace(/^/gm, '     ')}`);
      }
    }
  } catch (err) {
    failed += 1;
    console.log(`FAIL setup: ${err && err.message ? err.message : err}`);
  } finally {
    killServer();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed === checks.length ? 0 : 1);
}

main();
