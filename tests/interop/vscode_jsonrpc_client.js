// SPDX-License-Identifier: MIT
// Interoperability: lsp_server driven over stdio (Content-Length framing) by vscode-jsonrpc,
// the JSON-RPC library under VS Code's language client, which we did not write. Every check
// compares exact values.
//
//   node vscode_jsonrpc_client.js <path to lsp_server>
//
// The checks run in order on one connection: initialize and window/logMessage, a
// workspace/configuration request from the server, $/progress (work done and partial results),
// a request cancelled with $/cancelRequest, then shutdown and exit; and last, exit without
// shutdown on a second server. Prints one line per check and an `N passed, M failed` summary;
// exits non-zero on any failure.
'use strict';

const assert = require('node:assert');
const { spawn } = require('node:child_process');
const { sleep, waitFor, runChecks } = require('./checks.js');
const {
  CancellationTokenSource,
  ProgressType,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} = require('vscode-jsonrpc/node');

const serverPath = process.argv[2];
if (!serverPath) {
  console.error('usage: node vscode_jsonrpc_client.js <path to lsp_server>');
  process.exit(2);
}

const SUITE_TIMEOUT_MS = 60000;
const FILES = 10;
const DELAY_MS = 200;  // per file: a whole scan takes about 2 s
const SERVER_ARGS = ['--files', String(FILES), '--index-delay-ms', String(DELAY_MS)];

// The symbols lsp_server makes up for file i (see examples/lsp_server/workspace.hpp).
function symbolsOf(i) {
  const uri = `demo:///src/module${i}.cpp`;
  const symbol = (name, kind, line) => ({
    name, kind, location: { uri, range: { start: { line, character: 0 }, end: { line, character: name.length } } },
  });
  return [symbol(`Widget${i}`, 5, 10), symbol(`parse_widget${i}`, 12, 20), symbol(`kMaxWidgets${i}`, 14, 30)];
}
const allSymbols = Array.from({ length: FILES }, (_, i) => symbolsOf(i)).flat();

// ---- A server, with a connection that records every message both ways -----------------------

function startServer() {
  const child = spawn(serverPath, SERVER_ARGS, { stdio: ['pipe', 'pipe', 'pipe'] });
  const server = { child, stderr: '', sent: [], received: [] };
  server.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => { server.stderr += chunk; });

  class RecordingReader extends StreamMessageReader {
    listen(callback) {
      return super.listen((message) => {
        server.received.push(message);
        callback(message);
      });
    }
  }
  class RecordingWriter extends StreamMessageWriter {
    write(message) {
      server.sent.push(message);
      return super.write(message);
    }
  }
  server.connection = createMessageConnection(new RecordingReader(child.stdout), new RecordingWriter(child.stdin));
  return server;
}

const main = startServer();
const connection = main.connection;
const logMessages = [];
connection.onNotification('window/logMessage', (params) => logMessages.push(params));
const configurationRequests = [];
connection.onRequest('workspace/configuration', (params) => {
  configurationRequests.push(params);
  return params.items.map((item) => (item.section === 'demo' ? { greeting: 'hello', tabSize: 4 } : null));
});
const unexpected = [];
connection.onUnhandledNotification((message) => unexpected.push(message));
connection.onUnhandledProgress((params) => unexpected.push(params));
connection.onError(([err]) => unexpected.push(String(err)));
connection.listen();

const workDone = new ProgressType();
function progressOf(token) {
  const values = [];
  const subscription = connection.onProgress(workDone, token, (value) => values.push(value));
  return { values, dispose: () => subscription.dispose() };
}
const report = (done) => ({ kind: 'report', message: `${done} of ${FILES} files`, percentage: (done * 100) / FILES });

// ---- The checks, in order ---------------------------------------------------------------------

const checks = [];
const check = (name, fn) => checks.push({ name, fn });

check('initialize and initialized: capabilities, serverInfo, window/logMessage', async () => {
  const result = await connection.sendRequest('initialize', {
    processId: process.pid, rootUri: null, capabilities: { workspace: { configuration: true }, window: { workDoneProgress: true } },
  });
  assert.deepStrictEqual(Object.keys(result), ['capabilities', 'serverInfo']);
  assert.deepStrictEqual(result.capabilities, { workspaceSymbolProvider: { workDoneProgress: true } });
  assert.strictEqual(result.serverInfo.name, 'batchrpc-lsp');
  assert.match(result.serverInfo.version, /^\d+\.\d+\.\d+/);
  await connection.sendNotification('initialized', {});
  await waitFor('window/logMessage', () => logMessages.length > 0, 3000);
  assert.deepStrictEqual(logMessages, [{ type: 3, message: 'batchrpc-lsp: initialized' }]);
});

check('workspace/configuration: the server asks, the client answers, the server returns the answer', async () => {
  const result = await connection.sendRequest('demo/configuration', { section: 'demo' });
  assert.deepStrictEqual(result, [{ greeting: 'hello', tabSize: 4 }]);
  assert.deepStrictEqual(configurationRequests, [{ items: [{ section: 'demo' }] }]);
  const asked = main.received.find((m) => m.method === 'workspace/configuration');
  assert.strictEqual(asked.id, 'srv-1');
});

check('$/progress: begin, one report per file, end, under the workDoneToken given', async () => {
  const progress = progressOf('wd-1');
  const result = await connection.sendRequest('workspace/symbol', { query: 'widget3', workDoneToken: 'wd-1' });
  progress.dispose();
  assert.deepStrictEqual(result, symbolsOf(3).slice(0, 2));  // not kMaxWidgets3: "widgets3"
  assert.deepStrictEqual(progress.values, [
    { kind: 'begin', title: 'Indexing symbols', cancellable: true, message: `0 of ${FILES} files` },
    ...Array.from({ length: FILES }, (_, i) => report(i + 1)),
    { kind: 'end', message: '2 symbols' },
  ]);
});

check('partial results: each file\'s matches under the partialResultToken, then []', async () => {
  const partials = progressOf('pr-1');
  const result = await connection.sendRequest('workspace/symbol', { query: 'PARSE', partialResultToken: 'pr-1' });
  partials.dispose();
  assert.deepStrictEqual(result, []);
  assert.deepStrictEqual(partials.values, allSymbols.filter((s) => s.kind === 12).map((s) => [s]));
});

check('$/cancelRequest: a cancelled workspace/symbol is answered -32800 promptly', async () => {
  const source = new CancellationTokenSource();
  let cancelledAt = 0;
  const progress = [];
  const subscription = connection.onProgress(workDone, 'wd-2', (value) => {
    progress.push(value);
    if (value.kind === 'report' && cancelledAt === 0) {
      cancelledAt = Date.now();
      source.cancel();
    }
  });
  const call = connection.sendRequest('workspace/symbol', { query: '', workDoneToken: 'wd-2' }, source.token);
  await assert.rejects(call, (err) => {
    assert.ok(err instanceof ResponseError, String(err));
    assert.strictEqual(err.code, -32800);
    assert.strictEqual(err.message, 'Request cancelled');
    return true;
  });
  const tookMs = Date.now() - cancelledAt;
  subscription.dispose();
  const request = main.sent.find((m) => m.method === 'workspace/symbol' && m.params.workDoneToken === 'wd-2');
  assert.deepStrictEqual(main.sent.filter((m) => m.method === '$/cancelRequest'), [
    { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: request.id } },
  ]);
  // The rest of the scan would take more than 1.5 s.
  assert.ok(tookMs < 1000, `answered ${tookMs} ms after the cancel`);
  // begin, the reports sent before the cancel arrived (rising), and end.
  assert.deepStrictEqual(progress[0], { kind: 'begin', title: 'Indexing symbols', cancellable: true, message: `0 of ${FILES} files` });
  assert.deepStrictEqual(progress[progress.length - 1], { kind: 'end', message: 'cancelled' });
  const reports = progress.slice(1, -1);
  assert.ok(reports.length >= 1 && reports.length < FILES, `${reports.length} reports`);
  assert.deepStrictEqual(reports, reports.map((_, i) => report(i + 1)));
});

check('shutdown then exit: the server exits with code 0', async () => {
  assert.strictEqual(await connection.sendRequest('shutdown'), null);
  await connection.sendNotification('exit');
  // stdin stays open: the exit notification alone ends the process.
  const exit = await Promise.race([main.exited, sleep(3000).then(() => 'still running 3 s after exit')]);
  assert.deepStrictEqual(exit, { code: 0, signal: null });
  assert.deepStrictEqual(unexpected, []);
});

check('exit without shutdown: the server exits with code 1', async () => {
  const other = startServer();
  other.connection.listen();
  await other.connection.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  await other.connection.sendNotification('exit');
  const exit = await Promise.race([other.exited, sleep(3000).then(() => 'still running 3 s after exit')]);
  assert.deepStrictEqual(exit, { code: 1, signal: null });
  other.connection.dispose();
});

// ---- Runner -----------------------------------------------------------------------------------

runChecks('lsp interop', checks, {
  timeoutMs: SUITE_TIMEOUT_MS,
  abandon: () => main.child.kill('SIGKILL'),
  finish: () => {
    connection.dispose();
    if (main.child.exitCode === null) main.child.kill('SIGKILL');
    return main.stderr;
  },
});
