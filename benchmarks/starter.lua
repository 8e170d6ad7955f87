-- wrk script of benchmarks/run-starter.sh: GET requests carrying one of KEYS API keys (X-API-Key), picked at
-- random; CASE allowed sends every request to /api/hello (a limit far above the load), CASE half sends every
-- other one to /api/tight (a limit spent in the warm-up, so those are denied). One machine-readable line at
-- the end (wrk's own summary rounds its units).
--   wrk -s starter.lua http://127.0.0.1:PORT -- CASE KEYS
local requests = {}
local half = false
local n = 0

function init(args)
  half = (args[1] or "allowed") == "half"
  local keys = tonumber(args[2] or "100")
  for i = 1, keys do
    requests[2 * i - 1] = wrk.format("GET", "/api/hello", { ["X-API-Key"] = "key-" .. i })
    requests[2 * i] = wrk.format("GET", "/api/tight", { ["X-API-Key"] = "key-" .. i })
  end
  math.randomseed(os.time() + (tonumber(tostring({}):sub(8)) or 0))
end

function request()
  n = n + 1
  local key = math.random(#requests / 2)
  if half and n % 2 == 0 then
    return requests[2 * key]
  end
  return requests[2 * key - 1]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "STATS requests=%d seconds=%.3f rps=%.1f p50_us=%d p99_us=%d max_us=%d non2xx=%d socket_errors=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect + e.read + e.write + e.timeout))
end
