#!/usr/bin/env bash
# Sluice's RLS (`sluice envoy`, Redis, defaults) on 1,000 descriptors of 1,000 a minute, driven by ghz at
# concurrency 16 for SLICES slices of 30 s in a row (default 5): requests/s, Redis commands and script calls
# per 1,000 decisions in each, so that the keys' first minute window (new keys: every decision asks the
# store) shows apart from the windows after. Needs sluice.jar built (./mvnw -B -q -o -pl limiter-cli -am
# package -DskipTests), redis-server, ghz and grpcurl (see run-envoy.sh). Not part of CI.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$(mktemp -d)"
source "$ROOT/benchmarks/common.sh"
GHZ="${GHZ:-$(command -v ghz || echo ~/go/bin/ghz)}"; GRPCURL="${GRPCURL:-$(command -v grpcurl || echo ~/go/bin/grpcurl)}"
REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
pids+=($!)
sleep 0.5
cat >"$WORK/bench.yaml" <<Y
domain: bench
descriptors:
  - key: many
    rate_limit:
      unit: minute
      requests_per_unit: 1000
Y
SL_GRPC="$(free_port)"
java -Xms512m -Xmx512m -jar "$ROOT/limiter-cli/target/sluice.jar" envoy --config "$WORK/bench.yaml" --grpc-port "$SL_GRPC" \
  --redis "redis://127.0.0.1:$REDIS_PORT" >"$WORK/sluice.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do
  "$GRPCURL" -plaintext -max-time 2 -protoset-out "$WORK/rls.protoset" "127.0.0.1:$SL_GRPC" describe \
    envoy.service.ratelimit.v3.RateLimitService >/dev/null 2>&1 && break
  sleep 0.2
done
counts() { redis-cli -p "$REDIS_PORT" info commandstats | tr -d '\r' | awk -F'[:=,]' '
    /^cmdstat_/ && $1 != "cmdstat_info" { sum += $3 }
    /^cmdstat_(eval|evalsha):/ { scripts += $3 }
    END { printf "%d %d\n", sum, scripts }'; }
for slice in $(seq 1 "${SLICES:-5}"); do
  read -r c0 s0 <<<"$(counts)"
  "$GHZ" --insecure --protoset "$WORK/rls.protoset" --call envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit \
    -c 16 --connections 4 -z 30s -t 5s -O json \
    -d '{"domain":"bench","descriptors":[{"entries":[{"key":"many","value":"v{{mod .RequestNumber 1000}}"}]}]}' \
    "127.0.0.1:$SL_GRPC" >"$WORK/ghz-$slice.json"
  read -r c1 s1 <<<"$(counts)"
  n=$(python3 -c "import json;d=json.load(open('$WORK/ghz-$slice.json'));print(d['count'])")
  rps=$(python3 -c "import json;d=json.load(open('$WORK/ghz-$slice.json'));print(round(d['rps']))")
  echo "slice $slice ($(date -u +%H:%M:%S)): calls $n, $rps/s, Redis commands/1k $(( (c1-c0)*1000/n )), script calls/1k $(( (s1-s0)*1000/n ))"
done
