// SPDX-License-Identifier: MIT
// What the interop clients share: waiting for a condition, and running named checks in order
// with one line each and an `N passed, M failed` summary.
'use strict';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls `predicate` until it returns something truthy (returned), or fails after `timeoutMs`.
async function waitFor(what, predicate, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = predicate();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

// Runs `checks` ([{name, fn}]) in order, then `finish()` (which stops the server and returns
// its stderr, shown when a check failed), and exits 0 only when every check passed. The whole
// run is abandoned after `timeoutMs`, calling `abandon()` first.
async function runChecks(label, checks, { timeoutMs, abandon, finish }) {
  const suiteTimer = setTimeout(() => {
    console.error(`${label}: still running after ${timeoutMs} ms, giving up`);
    abandon();
    process.exit(1);
  }, timeoutMs);
  suiteTimer.unref();

  let passed = 0;
  let failed = 0;
  for (const { name, fn } of checks) {
    try {
      await fn();
      passed += 1;
      console.log(`ok   ${name}`);
    } catch (err) {
      failed += 1;
      console.log(`FAIL ${name}\n${String(err && err.stack ? err.stack : err).replace(/^/gm, '     ')}`);
    }
  }
  const stderr = finish();
  if (failed > 0 && stderr) console.log(`server stderr:\n${stderr}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed === checks.length ? 0 : 1);
}

module.exports = { sleep, waitFor, runChecks };
