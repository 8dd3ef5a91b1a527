// SPDX-License-Identifier: MIT
// Interoperability: mcp_server driven by the official MCP TypeScript SDK's Client over stdio
// (StdioClientTransport) or MCP Streamable HTTP (StreamableHTTPClientTransport), clients we did
// not write. Every check compares exact values.
//
//   node mcp_sdk_client.js <path to mcp_server> [--http]
//
// Over stdio the SDK spawns the server; over HTTP this script does (`--http 127.0.0.1:0`) and
// reads its URL. The checks run in order in one session: initialize, tools/list, tools/call
// (embed, embed_sparse, batch), progress, logging, cancellation, roots/list answered by the
// client, then the session's end (HTTP: DELETE, after which its id is unknown) and the server's
// exit code. Prints one line per check and an
// `N passed, M failed` summary; exits non-zero on any failure.
'use strict';

const assert = require('node:assert');
const { sleep, waitFor, runChecks } = require('./checks.js');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { spawn } = require('node:child_process');
const {
  LATEST_PROTOCOL_VERSION,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} = require('@modelcontextprotocol/sdk/types.js');

const serverPath = process.argv[2];
const overHttp = process.argv[3] === '--http';
if (!serverPath || (process.argv.length > 3 && !overHttp)) {
  console.error('usage: node mcp_sdk_client.js <path to mcp_server> [--http]');
  process.exit(2);
}

const SUITE_TIMEOUT_MS = 60000;
const DIMENSIONS = 384;
const MODEL = 'hashing-384';
// What the client answers to the server's roots/list.
const ROOTS = [
  { uri: 'file:///projects/alpha', name: 'alpha' },
  { uri: 'file:///projects/beta', name: 'beta' },
];

// ---- A transport that also records every message, both ways, with the time it passed --------

const recording = (Transport) => class extends Transport {
  constructor(...args) {
    super(...args);
    this.received = [];
    this.sent = [];
  }
  // The SDK's Client sets onmessage once it connects: record each message before it sees it.
  set onmessage(handler) {
    this._handler = handler;
  }
  get onmessage() {
    const handler = this._handler;
    if (!handler) return undefined;
    return (message, extra) => {
      this.received.push({ at: Date.now(), message });
      handler(message, extra);
    };
  }
  send(message, options) {
    this.sent.push({ at: Date.now(), message });
    return super.send(message, options);
  }
};

class RecordingStdio extends recording(StdioClientTransport) {
  // The SDK keeps the server's process private; the exit code is read from it.
  get child() {
    return this._process;
  }
}

class RecordingHttp extends recording(StreamableHTTPClientTransport) {
  constructor(url, child) {
    super(new URL(url));
    this.url = url;
    this.server = child;
  }
  get child() {
    return this.server;
  }
}

function checkUnitVector(vector, where) {
  assert.strictEqual(vector.length, DIMENSIONS, `${where}: length`);
  assert.ok(vector.every(Number.isFinite), `${where}: every value is a finite number`);
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  assert.ok(Math.abs(norm - 1) < 1e-5, `${where}: L2 norm is ${norm}, not 1`);
}

// A successful tool result: the text content is the structured content as JSON.
function structured(result) {
  assert.strictEqual(result.isError, false);
  assert.strictEqual(result.content.length, 1);
  assert.strictEqual(result.content[0].type, 'text');
  assert.deepStrictEqual(JSON.parse(result.content[0].text), result.structuredContent);
  return result.structuredContent;
}

// ---- The client -------------------------------------------------------------------------------

// The SDK hands the server only a few variables (PATH, HOME, ...); the sanitizer builds' options
// (suppressions, halt_on_error) must reach it too.
const sanitizerEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => /^[A-Z]+SAN_OPTIONS$/.test(key)));
let serverStderr = '';
let transport = null;
if (!overHttp) {
  transport = new RecordingStdio({ command: serverPath, args: [], env: sanitizerEnv, stderr: 'pipe' });
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (chunk) => { serverStderr += chunk; });
}

// Over HTTP: starts mcp_server on a free port and makes the transport once it says where.
function startHttpServer() {
  const child = spawn(serverPath, ['--http', '127.0.0.1:0'], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      serverStderr += chunk;
      const url = /MCP Streamable HTTP on (http:\/\/\S+\/mcp)\n/.exec(serverStderr);
      if (url && transport === null) {
        transport = new RecordingHttp(url[1], child);
        resolve();
      }
    });
    child.once('exit', (code, signal) => reject(new Error(`mcp_server ended (${code}, ${signal}) before listening`)));
  });
}

const client = new Client({ name: 'batchrpc-interop', version: '1.0.0' },
                          { capabilities: { roots: { listChanged: false } } });
const rootsRequests = [];
client.setRequestHandler(ListRootsRequestSchema, (request) => {
  rootsRequests.push(request);
  return { roots: ROOTS };
});
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => logs.push(notification.params));
const clientErrors = [];
client.onerror = (err) => clientErrors.push(String(err && err.message ? err.message : err));

const embedded = (inputs) => client.callTool({ name: 'embed', arguments: { inputs } }).then(structured);
const texts = (n, prefix) => Array.from({ length: n }, (_, i) => `${prefix} text number ${i}`);

// ---- The checks, in order ---------------------------------------------------------------------

const checks = [];
const check = (name, fn) => checks.push({ name, fn });
let serverExit = null;  // a promise of { code, signal }, from connect on

check('initialize: version negotiated, capabilities and serverInfo', async () => {
  if (overHttp) await startHttpServer();
  const exited = overHttp ? new Promise((resolve) => transport.child.once('exit', (code, signal) => resolve({ code, signal }))) : null;
  await client.connect(transport);
  const child = transport.child;
  assert.ok(child, 'the server was spawned');
  serverExit = exited ?? new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  if (overHttp) assert.match(transport.sessionId, /^[0-9a-f]{32}$/);

  const init = transport.sent.find((s) => s.message.method === 'initialize').message;
  assert.strictEqual(init.params.protocolVersion, LATEST_PROTOCOL_VERSION);
  assert.deepStrictEqual(init.params.capabilities, { roots: { listChanged: false } });
  const reply = transport.received.find((r) => r.message.id === init.id).message;
  // The SDK asks for its latest revision; the server answers its own latest when it does not
  // speak the one asked for, and the SDK accepts that one.
  const expected = ['2025-06-18', '2025-03-26', '2024-11-05'].includes(LATEST_PROTOCOL_VERSION)
    ? LATEST_PROTOCOL_VERSION : '2025-06-18';
  assert.strictEqual(reply.result.protocolVersion, expected);
  assert.deepStrictEqual(client.getServerCapabilities(), { tools: { listChanged: false }, logging: {} });
  const info = client.getServerVersion();
  assert.deepStrictEqual(Object.keys(info).sort(), ['name', 'version']);
  assert.strictEqual(info.name, 'batchrpc-mcp');
  assert.match(info.version, /^\d+\.\d+\.\d+/);
  // The SDK confirms with notifications/initialized.
  assert.ok(transport.sent.some((s) => s.message.method === 'notifications/initialized' && !('id' in s.message)));
  assert.deepStrictEqual(await client.ping(), {});
});

check('listTools: names, and every input schema is a JSON Schema object', async () => {
  const { tools } = await client.listTools();
  assert.deepStrictEqual(tools.map((t) => t.name),
                         ['embed', 'embed_sparse', 'embed_multi', 'rerank', 'embed_chunked', 'list_roots', 'batch']);
  for (const tool of tools) {
    assert.strictEqual(typeof tool.inputSchema, 'object', `${tool.name}: inputSchema`);
    assert.strictEqual(tool.inputSchema.type, 'object', `${tool.name}: inputSchema.type`);
    assert.strictEqual(typeof tool.description, 'string', `${tool.name}: description`);
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
  assert.deepStrictEqual(byName.embed.required, ['inputs']);
  assert.deepStrictEqual(byName.embed.properties.inputs,
                         { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, maxItems: 1024 });
  assert.deepStrictEqual(byName.embed.properties.encoding.enum, ['float', 'base64']);
  assert.deepStrictEqual(byName.rerank.required, ['query', 'passages']);
  assert.deepStrictEqual(byName.embed_chunked.required, ['inputs']);
  assert.deepStrictEqual(Object.keys(byName.embed_chunked.properties), ['inputs', 'chunkSize', 'delayMs']);
  assert.deepStrictEqual(byName.list_roots, { type: 'object', properties: {}, additionalProperties: false });
  assert.deepStrictEqual(byName.batch.required, ['operations']);
});

check('callTool embed: one unit vector of 384 floats per input, deterministic', async () => {
  const result = await embedded(['hello world', 'good morning']);
  assert.deepStrictEqual(Object.keys(result), ['model', 'dimensions', 'encoding', 'embeddings']);
  assert.strictEqual(result.model, MODEL);
  assert.strictEqual(result.dimensions, DIMENSIONS);
  assert.strictEqual(result.encoding, 'float');
  assert.strictEqual(result.embeddings.length, 2);
  result.embeddings.forEach((v, i) => checkUnitVector(v, `embeddings[${i}]`));
  assert.notDeepStrictEqual(result.embeddings[0], result.embeddings[1]);
  // The same text gives the same vector, alone or beside another.
  assert.deepStrictEqual((await embedded(['good morning'])).embeddings[0], result.embeddings[1]);
});

check('callTool embed_sparse: ascending indices, one weight each', async () => {
  const result = structured(await client.callTool({ name: 'embed_sparse', arguments: { inputs: ['sparse vectors here'] } }));
  assert.strictEqual(result.model, MODEL);
  assert.strictEqual(result.embeddings.length, 1);
  const { indices, values } = result.embeddings[0];
  assert.strictEqual(indices.length, 3);  // three tokens, three buckets
  assert.strictEqual(values.length, 3);
  assert.ok(indices.every((x, i) => Number.isInteger(x) && x < result.dimensions && (i === 0 || x > indices[i - 1])));
});

check('callTool an invalid argument: the SDK rejects with -32602 and the parameter named', async () => {
  await assert.rejects(client.callTool({ name: 'embed', arguments: { inputs: [] } }), (err) => {
    assert.ok(err instanceof McpError, String(err));
    assert.strictEqual(err.code, -32602);
    assert.strictEqual(err.data.param, 'inputs');
    return true;
  });
});

check('callTool batch: two operations, both results as their own calls give them', async () => {
  const rerankArgs = { query: 'cat', passages: ['stock market news', 'a cat sat on the mat'], top_k: 2 };
  const result = structured(await client.callTool({
    name: 'batch',
    arguments: { operations: [{ tool: 'embed', arguments: { inputs: ['alpha'] } },
                              { tool: 'rerank', arguments: rerankArgs }] },
  }));
  const direct = {
    embed: await client.callTool({ name: 'embed', arguments: { inputs: ['alpha'] } }),
    rerank: await client.callTool({ name: 'rerank', arguments: rerankArgs }),
  };
  const alone = { embed: structured(direct.embed), rerank: structured(direct.rerank) };
  // The budget counts bytes of each result's compact JSON, the text tools/call answers with.
  const outputChars = Buffer.byteLength(direct.embed.content[0].text) + Buffer.byteLength(direct.rerank.content[0].text);
  assert.deepStrictEqual(result, {
    success: true, operationCount: 2, completedCount: 2, failedCount: 0, stoppedEarly: false,
    results: [{ tool: 'embed', result: alone.embed }, { tool: 'rerank', result: alone.rerank }],
    meta: { truncated: false, totalOutputChars: outputChars },
  });
  assert.deepStrictEqual(alone.rerank.results.map((r) => r.index), [1, 0]);  // the cat passage first
  assert.ok(alone.rerank.results[0].score > alone.rerank.results[1].score);
});

// The SDK (1.32.2) runs notification handlers a microtask later but response handlers at once,
// and forgets a call's progress handler with its response: a progress notification that
// arrives in the same read as the response is dropped, reported to onerror. The wire shows
// what the server sent; onprogress sees a prefix of it.
const lateProgress = /^Received a progress notification for an unknown token: /;
function takeLateProgressErrors(token) {
  const late = clientErrors.filter((e) => lateProgress.test(e) && JSON.parse(e.replace(lateProgress, '')).params.progressToken === token);
  for (const e of late) clientErrors.splice(clientErrors.indexOf(e), 1);
  return late.length;
}

check('progress: embed_chunked reports each chunk in rising order, and logs at info', async () => {
  await client.setLoggingLevel('info');
  const inputs = texts(6, 'progress');
  const progress = [];
  const result = structured(await client.callTool({ name: 'embed_chunked', arguments: { inputs, chunkSize: 2, delayMs: 50 } },
                                                  undefined, { onprogress: (p) => progress.push(p) }));
  const expected = [
    { progress: 2, total: 6, message: 'embedded 2 of 6 texts' },
    { progress: 4, total: 6, message: 'embedded 4 of 6 texts' },
    { progress: 6, total: 6, message: 'embedded 6 of 6 texts' },
  ];
  const request = transport.sent.find((s) => s.message.method === 'tools/call' &&
                                              s.message.params.arguments.inputs?.[0] === inputs[0]).message;
  assert.deepStrictEqual(request.params._meta, { progressToken: request.id });
  const onWire = transport.received.filter((r) => r.message.method === 'notifications/progress' &&
                                                  r.message.params.progressToken === request.id);
  assert.deepStrictEqual(onWire.map((r) => r.message.params), expected.map((p) => ({ progressToken: request.id, ...p })));
  const reply = transport.received.find((r) => r.message.id === request.id);
  assert.ok(onWire.every((r) => transport.received.indexOf(r) < transport.received.indexOf(reply)), 'progress before the reply');
  // The first two precede a 50 ms pause, so onprogress has them; the last may be dropped (above).
  assert.ok(progress.length >= 2, `onprogress was called ${progress.length} times`);
  assert.deepStrictEqual(progress, expected.slice(0, progress.length));
  assert.strictEqual(takeLateProgressErrors(request.id), expected.length - progress.length);
  // Chunked or not, the same vectors.
  assert.deepStrictEqual(result, await embedded(inputs));
  assert.deepStrictEqual(logs, [{ level: 'info', logger: 'batchrpc-mcp', data: 'embed_chunked: 6 texts in 3 chunks' }]);
});

check('logging/setLevel warning: info messages are no longer sent', async () => {
  await client.setLoggingLevel('warning');
  logs.length = 0;
  structured(await client.callTool({ name: 'embed_chunked', arguments: { inputs: ['quiet'] } }));
  await client.ping();  // anything sent before the ping's reply has arrived by now
  assert.deepStrictEqual(logs, []);
});

check('two calls at once: the progress of each comes before its own result', async () => {
  const batches = [texts(4, 'concurrent a'), texts(4, 'concurrent b')];
  const results = await Promise.all(batches.map((inputs) => client.callTool(
    { name: 'embed_chunked', arguments: { inputs, chunkSize: 1, delayMs: 30 } }, undefined, { onprogress: () => {} })));
  batches.forEach((inputs, i) => {
    const request = transport.sent.find((s) => s.message.method === 'tools/call' &&
                                                s.message.params.arguments.inputs?.[0] === inputs[0]).message;
    const progress = transport.received.filter((r) => r.message.method === 'notifications/progress' &&
                                                      r.message.params.progressToken === request.id);
    assert.deepStrictEqual(progress.map((r) => r.message.params.progress), [1, 2, 3, 4]);
    const reply = transport.received.find((r) => r.message.id === request.id);
    assert.ok(progress.every((r) => transport.received.indexOf(r) < transport.received.indexOf(reply)),
              `call ${i}: progress after the result`);
    takeLateProgressErrors(request.id);
    assert.strictEqual(structured(results[i]).embeddings.length, 4);
  });
});

check('cancel: an AbortController stops embed_chunked promptly; the server stays usable', async () => {
  const controller = new AbortController();
  const inputs = texts(40, 'cancel');  // 39 pauses of 250 ms: about 10 s if not cancelled
  let abortedAt = 0;
  const call = client.callTool({ name: 'embed_chunked', arguments: { inputs, chunkSize: 1, delayMs: 250 } }, undefined, {
    signal: controller.signal,
    onprogress: () => {
      if (abortedAt === 0) {
        abortedAt = Date.now();
        controller.abort('the test cancels');
      }
    },
  });
  await assert.rejects(call, (err) => {
    assert.ok(err instanceof McpError, String(err));
    assert.match(err.message, /the test cancels/);
    return true;
  });
  assert.ok(abortedAt > 0, 'a progress notification came before the abort');
  const request = transport.sent.find((s) => s.message.method === 'tools/call' &&
                                              s.message.params.name === 'embed_chunked' &&
                                              s.message.params.arguments.inputs.length === 40).message;
  const cancel = transport.sent.find((s) => s.message.method === 'notifications/cancelled');
  assert.deepStrictEqual(cancel.message.params, { requestId: request.id, reason: 'the test cancels' });
  // As MCP asks, the cancelled request gets no response. The tool stops at its next pause: a
  // second later (four more chunks if it went on) at most the reports that crossed the cancel
  // have come, and the SDK has heard of no unknown response.
  await sleep(1000);
  assert.strictEqual(transport.received.find((r) => r.message.id === request.id), undefined,
                     'a response to the cancelled request');
  const late = transport.received.filter((r) => r.message.method === 'notifications/progress' &&
                                                r.message.params.progressToken === request.id);
  assert.ok(late.length <= 2, `${late.length} progress notifications for the cancelled call`);
  takeLateProgressErrors(request.id);  // any report that crossed the cancel
  assert.deepStrictEqual(clientErrors.splice(0), []);
  assert.deepStrictEqual(await client.ping(), {});
  checkUnitVector((await embedded(['still here'])).embeddings[0], 'after the cancel');
});

check('roots/list: the server asks, the client answers, the tool returns the answer', async () => {
  const result = structured(await client.callTool({ name: 'list_roots', arguments: {} }));
  assert.deepStrictEqual(result, { roots: ROOTS });
  assert.strictEqual(rootsRequests.length, 1);
  assert.strictEqual(rootsRequests[0].method, 'roots/list');
  const asked = transport.received.find((r) => r.message.method === 'roots/list').message;
  assert.strictEqual(asked.id, 'srv-1');
  const answered = transport.sent.find((s) => s.message.id === 'srv-1').message;
  assert.deepStrictEqual(answered, { jsonrpc: '2.0', id: 'srv-1', result: { roots: ROOTS } });
});

if (overHttp) {
  check('session end: DELETE ends it, its id is unknown afterwards, SIGTERM stops the server', async () => {
    assert.deepStrictEqual(clientErrors, []);
    const sessionId = transport.sessionId;
    await transport.terminateSession();
    assert.strictEqual(transport.sessionId, undefined);
    const after = await fetch(transport.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.strictEqual(after.status, 404);
    assert.strictEqual(await after.text(), 'Unknown session\n');
    await client.close();
    transport.child.kill('SIGTERM');
    assert.deepStrictEqual(await serverExit, { code: 0, signal: null });
  });
}

if (!overHttp) check('close: the server exits with code 0 at the end of its input', async () => {
  assert.deepStrictEqual(clientErrors, []);
  const started = Date.now();
  await client.close();
  // The SDK sends SIGTERM after 2 s: an exit by itself is code 0 and no signal.
  assert.deepStrictEqual(await serverExit, { code: 0, signal: null });
  assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
});

// ---- Runner -----------------------------------------------------------------------------------

runChecks('mcp interop', checks, {
  timeoutMs: SUITE_TIMEOUT_MS,
  abandon: () => transport.child?.kill('SIGKILL'),
  finish: () => {
    transport.child?.kill('SIGKILL');
    return serverStderr;
  },
});
