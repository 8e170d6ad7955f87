-- wrk script of benchmarks/run-sidecar.sh: POST /check over KEYS keys of LIMIT, and one machine-readable
-- line at the end (wrk's own summary has no p99.9 and rounds its units).
--   wrk -s sidecar.lua http://127.0.0.1:PORT/check -- LIMIT KEYS
-- The empty Jetty handler gets the same requests (it does not read them).
local bodies = {}

function init(args)
  local limit = args[1] or "open"
  local keys = tonumber(args[2] or "1000")
  for i = 1, keys do
    bodies[i] = string.format('{"key":"user-%d","limit":"%s"}', i, limit)
  end
  math.randomseed(os.time() + (tonumber(tostring({}):sub(8)) or 0))
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  return wrk.format(nil, nil, nil, bodies[math.random(#bodies)])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "STATS requests=%d seconds=%.3f rps=%.1f p50_us=%d p99_us=%d p999_us=%d max_us=%d non2xx=%d socket_errors=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max,
    e.status, e.connect + e.read + e.write + e.timeout))
end
