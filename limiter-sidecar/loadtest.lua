-- wrk script for the sidecar's POST /check: spreads requests over KEYS keys of one limit.
--   wrk -s loadtest.lua http://127.0.0.1:8080/check -- LIMIT KEYS
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
