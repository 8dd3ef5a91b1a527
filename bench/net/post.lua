-- SPDX-License-Identifier: MIT
-- wrk script for bench/net/run.sh: every request POSTs one JSON-RPC message as
-- application/json, a ping (the default) or a batch of N pings with ids 1..N.
--   wrk -t2 -c64 -d5s -s bench/net/post.lua http://127.0.0.1:PORT/ [-- N]
-- Prints one extra line, prefixed "RESULT", for run.sh to read.

local request_text

function init(args)
  local n = tonumber(args[1] or "1")
  local body
  if n <= 1 then
    body = '{"jsonrpc":"2.0","method":"ping","id":1}'
  else
    local members = {}
    for i = 1, n do
      members[i] = '{"jsonrpc":"2.0","method":"ping","id":' .. i .. '}'
    end
    body = "[" .. table.concat(members, ",") .. "]"
  end
  wrk.method = "POST"
  wrk.body = body
  wrk.headers["Content-Type"] = "application/json"
  request_text = wrk.format()
end

function request()
  return request_text
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d rps=%.0f p50_us=%d p99_us=%d max_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.requests / (summary.duration / 1e6), latency:percentile(50),
    latency:percentile(99), latency.max, e.connect, e.read, e.write, e.status, e.timeout))
end
