#!/usr/bin/env bash
# Load test of the sidecar (sluice serve) with wrk on loopback: requests/s and latency percentiles
# for allowed and denied traffic, with the embedded Hazelcast store, Redis batched (default) and
# Redis exact (batch size 1). Writes limiter-sidecar/results/loadtest.md.
#
#   limiter-sidecar/loadtest.sh                     # 10 s per run after a 5 s warm-up
#   DURATION=20s CONNECTIONS=100 limiter-sidecar/loadtest.sh
#   STORES="hazelcast" limiter-sidecar/loadtest.sh  # a subset of: hazelcast redis redis-exact
#   REDIS_TIMEOUT=2s (default): the sidecar's Redis command timeout, generous for a loaded machine
#
# Needs wrk and redis-server (Debian packages wrk, redis-server). Every server is started here on a
# free loopback port and stopped at the end. Not part of CI.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-5s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
STORES="${STORES:-hazelcast redis redis-exact}"
OUT="${OUT:-limiter-sidecar/results/loadtest.md}"
WORK="$(mktemp -d)"
mkdir -p "$(dirname "$OUT")"

for tool in wrk redis-server java; do
  command -v "$tool" >/dev/null || { echo "loadtest: $tool not found (apt-get install wrk redis-server)" >&2; exit 1; }
done

# (pids, cleanup on exit, free_port)
source "$ROOT/benchmarks/common.sh"

echo ">> building"
./mvnw -B -q -pl limiter-cli -am package -DskipTests  # the sidecar as users run it: sluice serve
JAR="limiter-cli/target/sluice.jar"

start_server() {  # start_server <log> <args...>; sets PORT and SERVER_PID (no subshell: pids must stick)
  local log="$1"; shift
  PORT="$(free_port)"
  java -Xms512m -Xmx512m -jar "$JAR" serve --port "$PORT" "$@" >"$log" 2>&1 &
  SERVER_PID=$!
  pids+=("$SERVER_PID")
  for _ in $(seq 1 600); do
    if grep -q "listening on" "$log"; then return 0; fi
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "loadtest: server did not start:" >&2; cat "$log" >&2; return 1
}

stop() {  # stop <pid>: ends one process this script started, and waits for it
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

run_wrk() {  # run_wrk <port> <limit> <keys> <out>
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s limiter-sidecar/loadtest.lua "http://127.0.0.1:$1/check" -- "$2" "$3" >/dev/null
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s limiter-sidecar/loadtest.lua \
    "http://127.0.0.1:$1/check" -- "$2" "$3" >"$4"
}

row() {  # row <store> <traffic> <wrk output>
  local rps p50 p99 total non2xx
  rps="$(awk '/^Requests\/sec:/ {print $2}' "$3")"
  p50="$(awk '$1=="50%" {print $2}' "$3")"
  p99="$(awk '$1=="99%" {print $2}' "$3")"
  total="$(awk '/requests in/ {print $1}' "$3")"
  non2xx="$(awk '/Non-2xx or 3xx responses:/ {print $5}' "$3")"
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$(printf '%.0f' "$rps")" "$p50" "$p99" "$total" "${non2xx:-0}"
}

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
LIMITS=(--limit "open=1000000/1m" --limit "tight=10/1h")
rows=()
for store in $STORES; do
  REDIS_PID=""
  case "$store" in
    hazelcast) args=(--hazelcast-cluster "sluice-loadtest-$$") ;;
    redis|redis-exact)
      rport="$(free_port)"
      redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis-$store.log" 2>&1 &
      REDIS_PID=$!
      pids+=("$REDIS_PID")
      for _ in $(seq 1 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
      args=(--redis "redis://127.0.0.1:$rport" --redis-timeout "${REDIS_TIMEOUT:-2s}")
      [[ "$store" == redis-exact ]] && args+=(--batch-size 1)
      ;;
    *) echo "loadtest: unknown store $store" >&2; exit 1 ;;
  esac
  echo ">> $store: starting the sidecar"
  start_server "$WORK/server-$store.log" "${LIMITS[@]}" "${args[@]}"
  port="$PORT"
  echo ">> $store: allowed traffic (limit open, 10,000 keys)"
  run_wrk "$port" open 10000 "$WORK/$store-allowed.txt"
  rows+=("$(row "$store" "allowed (10k keys)" "$WORK/$store-allowed.txt")")
  echo ">> $store: denied traffic (limit tight: 10/h, 100 keys)"
  run_wrk "$port" tight 100 "$WORK/$store-denied.txt"
  rows+=("$(row "$store" "denied (100 keys)" "$WORK/$store-denied.txt")")
  cat "$WORK/$store-allowed.txt" "$WORK/$store-denied.txt"
  stop "$SERVER_PID"
  if [[ -n "$REDIS_PID" ]]; then stop "$REDIS_PID"; fi
done

{
  echo "# Sidecar load test"
  echo
  echo "\`limiter-sidecar/loadtest.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores, $(java -version 2>&1 | head -1)," \
    "$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2): wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency after a $WARMUP warm-up," \
    "server and wrk on the same machine (loopback). Limits: \`open=1000000/1m\` (never reached: 10,000 keys at about 1-3 requests a second each) and \`tight=10/1h\`" \
    "(every key spent within the warm-up, so the measured run is all 429). Load average before the run: $LOAD_BEFORE" \
    "(other builds share the machine)."
  echo
  echo "| store | traffic | requests/s | p50 | p99 | requests | non-2xx |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >"$OUT"
echo ">> wrote $OUT"
cat "$OUT"
