#!/usr/bin/env bash
# Sluice's Envoy rate limit service (sluice envoy) beside envoyproxy/ratelimit (service_cmd), in one
# run, on one redis-server and the same configuration file (issue 16, item 4): requests/s, p50/p99,
# Redis commands per 1,000 decisions, and over/under-admission. Writes benchmarks/results/envoy.md.
#
#   benchmarks/run-envoy.sh                               # 3 rounds, 10 s per measurement after warm-ups
#   ROUNDS=5 DURATION=20s CONCURRENCY=32 benchmarks/run-envoy.sh
#   SKIP_BUILD=1 ...                                      # use the sluice.jar and test classes already built
#   SERVICE_CMD=... GHZ=... GRPCURL=...                   # the Go tools (default: on the PATH, then ~/go/bin)
#   RL_HEADERS=true ...     # envoyproxy/ratelimit also answers with its RateLimit-* headers
#                           # (LIMIT_RESPONSE_HEADERS_ENABLED, off by default; Sluice sends its own by default)
#
# Both servers are started once on the same Redis with the same YAML file (envoyproxy/ratelimit's
# format, which Sluice reads): envoyproxy/ratelimit with its defaults (no local cache, Redis pool of
# 10, no pipeline window, stats off) and `sluice envoy` with its defaults (Redis batched). ghz drives
# each at a fixed concurrency, the same calls to both (ghz finds the messages in a protoset that
# grpcurl takes from Sluice's server reflection: envoyproxy/ratelimit has no reflection):
#   hot:  one descriptor of HOT_LIMIT a second (closed loop, so the demand is whatever the server
#         answers: about twice the limit on the machine this was written on; the table gives it)
#   many: 1,000 descriptor values in turn (v0 .. v999, call n gets value n mod 1,000), each of
#         1,000 a minute: allowed, the traffic of many clients
# Every round measures the four, the order of the servers alternating between rounds. Redis commands:
# INFO commandstats before and after a measurement, the sum of every command's calls but INFO's
# (Redis counts the commands a Lua script runs as well as the script call: both are in the sum, as
# they are in total_commands_processed), and the script calls alone. Then RlsAccuracyMain
# (limiter-envoy's test classes) counts OK and OVER_LIMIT answers per descriptor per window against
# the exact fixed window, on uniform and on Zipf traffic. Only loopback, only free ports.
# Not part of CI.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-10s}"
CONCURRENCY="${CONCURRENCY:-16}"
CONNECTIONS="${CONNECTIONS:-4}"
HOT_LIMIT="${HOT_LIMIT:-2000}"     # about half of what either server answers here: a demand near twice the limit
ACC_LIMIT="${ACC_LIMIT:-100}"         # accuracy: a limit per descriptor
ACC_UNIT="${ACC_UNIT:-minute}"        # per minute (or second: see RlsAccuracyMain on windows and latency),
ACC_VALUES="${ACC_VALUES:-50}"        # on this many descriptors,
ACC_CALLS="${ACC_CALLS:-200}"         # each sent this many calls a window (twice the limit),
ACC_WINDOWS="${ACC_WINDOWS:-1}"       # for this many windows; and at the same time
ACC_ZIPF_VALUES="${ACC_ZIPF_VALUES:-1000}"  # Zipf traffic over this many descriptors of the same limit (the hottest
                                      # sent ACC_CALLS a window, most far below the limit)
JVM_FLAGS=(${JVM_FLAGS:--Xms512m -Xmx512m})
OUT="${OUT:-benchmarks/results/envoy.md}"
WORK="$(mktemp -d)"
mkdir -p "$(dirname "$OUT")"

gobin="$(go env GOBIN 2>/dev/null || true)"; [ -n "$gobin" ] || gobin="$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin"
tool() {  # tool <env value> <name>: the binary, from its variable, the PATH or Go's bin folder
  if [ -n "$1" ]; then echo "$1"; elif command -v "$2" >/dev/null; then command -v "$2"; else echo "$gobin/$2"; fi
}
SERVICE_CMD="$(tool "${SERVICE_CMD:-}" service_cmd)"
GHZ="$(tool "${GHZ:-}" ghz)"
GRPCURL="$(tool "${GRPCURL:-}" grpcurl)"
for t in "$SERVICE_CMD" "$GHZ" "$GRPCURL"; do
  [ -x "$t" ] || { echo "run-envoy: $t not found; go install github.com/envoyproxy/ratelimit/src/service_cmd@v1.4.1-0.20260122083618-3fb702589d36, github.com/bojand/ghz/cmd/ghz@v0.121.0, github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4" >&2; exit 1; }
done
for tool in redis-server redis-cli java python3; do
  command -v "$tool" >/dev/null || { echo "run-envoy: $tool not found" >&2; exit 1; }
done

# (pids, cleanup on exit, free_port)
source "$ROOT/benchmarks/common.sh"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  echo ">> building sluice.jar and limiter-envoy's test classes"
  ./mvnw -B -q -o -pl limiter-cli -am package -DskipTests
fi
JAR="${JAR:-limiter-cli/target/sluice.jar}"
TEST_CLASSES="${TEST_CLASSES:-limiter-envoy/target/test-classes}"

REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!; pids+=("$REDIS_PID")
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# the one configuration, where envoyproxy/ratelimit reads it: RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/config/*.yaml
CONFIG_DIR="$WORK/runtime/ratelimit/config"
mkdir -p "$CONFIG_DIR"
CONFIG="$CONFIG_DIR/bench.yaml"
cat >"$CONFIG" <<EOF
domain: bench
descriptors:
  - key: hot
    rate_limit:
      unit: second
      requests_per_unit: $HOT_LIMIT
  - key: many
    rate_limit:
      unit: minute
      requests_per_unit: 1000
  - key: acc
    rate_limit:
      unit: $ACC_UNIT
      requests_per_unit: $ACC_LIMIT
  - key: accz
    rate_limit:
      unit: $ACC_UNIT
      requests_per_unit: $ACC_LIMIT
EOF

RL_GRPC="$(free_port)"
REDIS_SOCKET_TYPE=tcp REDIS_URL="127.0.0.1:$REDIS_PORT" RUNTIME_ROOT="$WORK/runtime" RUNTIME_SUBDIRECTORY=ratelimit \
  RUNTIME_WATCH_ROOT=false USE_STATSD=false LIMIT_RESPONSE_HEADERS_ENABLED="${RL_HEADERS:-false}" GRPC_HOST=127.0.0.1 GRPC_PORT="$RL_GRPC" HOST=127.0.0.1 \
  PORT="$(free_port)" DEBUG_HOST=127.0.0.1 DEBUG_PORT="$(free_port)" LOG_LEVEL=warn \
  "$SERVICE_CMD" >"$WORK/ratelimit.log" 2>&1 &
RL_PID=$!; pids+=("$RL_PID")

SL_GRPC="$(free_port)"
java "${JVM_FLAGS[@]}" -jar "$JAR" envoy --config "$CONFIG" --grpc-port "$SL_GRPC" \
  --redis "redis://127.0.0.1:$REDIS_PORT" >"$WORK/sluice.log" 2>&1 &
SL_PID=$!; pids+=("$SL_PID")

wait_grpc() {  # wait_grpc <port> <pid> <log>: until a ShouldRateLimit call is answered
  for _ in $(seq 1 600); do
    if "$GRPCURL" -plaintext -max-time 2 -protoset "$WORK/rls.protoset" -d '{"domain":"bench","descriptors":[{"entries":[{"key":"many","value":"probe"}]}]}' \
        "127.0.0.1:$1" envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit >/dev/null 2>&1; then return 0; fi
    kill -0 "$2" 2>/dev/null || break
    sleep 0.2
  done
  echo "run-envoy: a server did not answer:" >&2; cat "$3" >&2; return 1
}
for _ in $(seq 1 600); do
  "$GRPCURL" -plaintext -max-time 2 -protoset-out "$WORK/rls.protoset" "127.0.0.1:$SL_GRPC" describe \
    envoy.service.ratelimit.v3.RateLimitService >/dev/null 2>&1 && break
  kill -0 "$SL_PID" 2>/dev/null || { cat "$WORK/sluice.log" >&2; exit 1; }
  sleep 0.2
done
wait_grpc "$SL_GRPC" "$SL_PID" "$WORK/sluice.log"
wait_grpc "$RL_GRPC" "$RL_PID" "$WORK/ratelimit.log"

# The calls' messages, written once: ghz turns each into a message once and sends them round-robin
# (call n gets message n mod their number), so no call runs a template. (With the many case's values
# made by a template, {{mod .RequestNumber 1000}}, and template functions on, ghz built a template with
# its whole function table for every call of both cases, and took most of a core from the servers:
# GHZ_TEMPLATES=true measures that way again.)
HOT_MESSAGE='{"domain":"bench","descriptors":[{"entries":[{"key":"hot","value":"one"}]}]}'
echo "[$HOT_MESSAGE]" >"$WORK/hot.json"
python3 -c 'import json; print(json.dumps([{"domain": "bench", "descriptors": [{"entries": [{"key": "many", "value": "v%d" % i}]}]} for i in range(1000)]))' >"$WORK/many.json"
GHZ_TEMPLATES="${GHZ_TEMPLATES:-false}"

ghz_run() {  # ghz_run <port> <case> <duration> <out>
  local input=(-D "$WORK/$2.json" --disable-template-functions --disable-template-data)
  if [[ "$GHZ_TEMPLATES" == true ]]; then
    case "$2" in
      hot) input=(-d "$HOT_MESSAGE") ;;
      many) input=(-d '{"domain":"bench","descriptors":[{"entries":[{"key":"many","value":"v{{mod .RequestNumber 1000}}"}]}]}') ;;
    esac
  fi
  "$GHZ" --insecure --protoset "$WORK/rls.protoset" --call envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit \
    -c "$CONCURRENCY" --connections "$CONNECTIONS" -z "$3" -t 5s -O json "${input[@]}" "127.0.0.1:$1" >"$4"
}

redis_counts() {  # "<sum of commandstats calls, INFO excluded> <of which script calls>"
  redis-cli -p "$REDIS_PORT" info commandstats | tr -d '\r' | awk -F'[:=,]' '
    /^cmdstat_/ && $1 != "cmdstat_info" { sum += $3 }
    /^cmdstat_(eval|evalsha|eval_ro|evalsha_ro|fcall|fcall_ro):/ { scripts += $3 }
    END { printf "%d %d\n", sum, scripts }'
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# server name, port, pid
SERVERS=("ratelimit|$RL_GRPC|$RL_PID" "sluice|$SL_GRPC|$SL_PID")

echo ">> warm-up ($WARMUP each)"
for s in "${SERVERS[@]}"; do
  IFS='|' read -r name port pid <<<"$s"
  for c in hot many; do ghz_run "$port" "$c" "$WARMUP" "$WORK/warmup-$name-$c.json"; done
done

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
declare -A rps_sum=() cmd_sum=() n_sum=()
for round in $(seq 1 "$ROUNDS"); do
  order=("${SERVERS[@]}")
  if (( round % 2 == 0 )); then order=("${SERVERS[1]}" "${SERVERS[0]}"); fi
  for c in hot many; do
    for s in "${order[@]}"; do
      IFS='|' read -r name port pid <<<"$s"
      echo ">> round $round: $c on $name"
      out="$WORK/r$round-$name-$c.json"
      read -r cmds_before scripts_before <<<"$(redis_counts)"
      server_before="$(cpu_ticks "$pid")"; redis_before="$(cpu_ticks "$REDIS_PID")"
      ghz_run "$port" "$c" "$DURATION" "$out"
      server_cpu=$(( $(cpu_ticks "$pid") - server_before )); redis_cpu=$(( $(cpu_ticks "$REDIS_PID") - redis_before ))
      read -r cmds_after scripts_after <<<"$(redis_counts)"
      line="$(python3 - "$out" "$((cmds_after - cmds_before))" "$((scripts_after - scripts_before))" \
          "$server_cpu" "$redis_cpu" "$HOT_LIMIT" "$c" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cmds, scripts, server_cpu, redis_cpu, hot_limit, case = (int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
    int(sys.argv[5]), int(sys.argv[6]), sys.argv[7])
# ghz's -z ends with the calls in flight cut off (it closes its connections: "use of closed network
# connection"), at most one per worker; the rest would be the server's errors
errors = r.get("errorDistribution") or {}
cut = sum(n for e, n in errors.items() if "use of closed network connection" in e or "context canceled" in e)
ok = (r.get("statusCodeDistribution") or {}).get("OK", 0)
secs = r["total"] / 1e9
rps = ok / secs
lat = {p["percentage"]: p["latency"] / 1e6 for p in (r.get("latencyDistribution") or [])}
demand = f"{rps / hot_limit:.0f}x" if case == "hot" else "-"
print(f"{rps:.0f}|{lat.get(50, 0):.2f}|{lat.get(99, 0):.2f}|{ok}|{r['count'] - ok - cut} ({cut})|{cmds * 1000 / ok:.0f}"
      f"|{scripts * 1000 / ok:.0f}|{server_cpu / 100 / secs:.2f} / {redis_cpu / 100 / secs:.2f}|{demand}")
PY
)"
      IFS='|' read -r rps p50 p99 count errors per1k scripts1k cores demand <<<"$line"
      rows+=("| $round | $c | $name | $rps | $p50 | $p99 | $count | $errors | $per1k | $scripts1k | $cores | $demand |")
      rps_sum[$c-$name]="${rps_sum[$c-$name]:-} $rps"
      cmd_sum[$c-$name]="${cmd_sum[$c-$name]:-} $per1k"
    done
  done
done

median() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

echo ">> accuracy: $ACC_VALUES descriptors of $ACC_LIMIT a $ACC_UNIT, $ACC_CALLS calls a $ACC_UNIT each, and Zipf over $ACC_ZIPF_VALUES, $ACC_WINDOWS window(s)"
# both servers and both traffics at once, in the same windows (their counters are apart: each server has
# its own keys, each traffic its own descriptor key)
acc_pids=()
for s in "${SERVERS[@]}"; do
  IFS='|' read -r name port pid <<<"$s"
  java -cp "$JAR:$TEST_CLASSES" io.sluice.envoy.RlsAccuracyMain "127.0.0.1:$port" bench acc "$ACC_LIMIT" \
    "$ACC_UNIT" "$ACC_VALUES" "$ACC_CALLS" "$ACC_WINDOWS" uniform >"$WORK/acc-uniform-$name.txt" &
  acc_pids+=($!)
  java -cp "$JAR:$TEST_CLASSES" io.sluice.envoy.RlsAccuracyMain "127.0.0.1:$port" bench accz "$ACC_LIMIT" \
    "$ACC_UNIT" "$ACC_ZIPF_VALUES" "$ACC_CALLS" "$ACC_WINDOWS" zipf >"$WORK/acc-zipf-$name.txt" &
  acc_pids+=($!)
done
for p in "${acc_pids[@]}"; do wait "$p"; done
acc_rows=()
for traffic in uniform zipf; do
  for s in "${SERVERS[@]}"; do
    IFS='|' read -r name port pid <<<"$s"
    kv="$(tail -1 "$WORK/acc-$traffic-$name.txt")"
    get() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$kv"; }
    acc_rows+=("| $traffic | $name | $(get windows) | $(get sent) | $(get admitted) | $(get exact) | $(get over) ($(get windows_over) windows) | $(get under) ($(get windows_under) windows) | $(get errors) $(get error_codes) | $(get ambiguous) |")
  done
done

{
  echo "# Sluice's RLS beside envoyproxy/ratelimit"
  echo
  echo "\`benchmarks/run-envoy.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- limiter-envoy limiter-sync limiter-sync-redis || echo ' (with uncommitted changes)'):"
  echo "$(nproc) cores **shared by both servers, redis-server, ghz** (and by other work on the machine: load average"
  echo "$LOAD_BEFORE before the rounds), $(java -version 2>&1 | head -1), $(redis-server --version | cut -d' ' -f1-3)."
  echo "envoyproxy/ratelimit: \`service_cmd\` v1.4.1-0.20260122083618-3fb702589d36, its defaults (Redis pool 10, no local"
  echo "cache, no pipeline window), LIMIT_RESPONSE_HEADERS_ENABLED=${RL_HEADERS:-false} (its RateLimit-* response headers;"
  echo "Sluice sends its RateLimit fields by default); Sluice: \`java ${JVM_FLAGS[*]} -jar sluice.jar envoy --config bench.yaml --redis ...\`"
  echo "(Redis batched, the default). One redis-server, one configuration file:"
  echo
  echo '```yaml'
  cat "$CONFIG"
  echo '```'
  echo
  echo "Load: \`ghz -c $CONCURRENCY --connections $CONNECTIONS -z $DURATION\` (closed loop) after a $WARMUP warm-up of each"
  echo "case on each server; $ROUNDS rounds, the order of the servers alternating. hot: every call on \`hot=one\`"
  echo "($HOT_LIMIT a second; the demand column is requests/s over the limit); many: \`many=v<n mod 1000>\` for call n"
  if [[ "$GHZ_TEMPLATES" == true ]]; then echo "(made by ghz's template, template functions on: GHZ_TEMPLATES=true)."; else echo "(1,000 messages in a file that ghz sends in turn, templates off: \`-D many.json --disable-template-functions --disable-template-data\`)."; fi
  echo "Redis commands per 1,000 decisions: all commands Redis ran (INFO commandstats, the sum of calls: a Lua script"
  echo "call (EVALSHA) and every command the script runs each count, INFO excluded) / calls answered; the next column is"
  echo "the script calls alone (round trips of Sluice's flushes; envoyproxy/ratelimit sends INCRBY and EXPIRE, no"
  echo "scripts). Both include a server's background work during its measurement (Sluice's flushes and node heartbeats),"
  echo "and the other server's, idle then. Latency is ghz's. Requests/s: calls answered OK (gRPC) a second; the"
  echo "calls in flight when ghz's time ends are cut off (ghz closes its connections), at most one per worker."
  echo
  echo "| round | case | server | requests/s | p50 ms | p99 ms | calls answered | gRPC errors (cut off at the end) | Redis commands / 1,000 | of which script calls / 1,000 | cores: server / redis | demand / limit |"
  echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  for c in hot many; do
    rl="$(median "${rps_sum[$c-ratelimit]}")"; sl="$(median "${rps_sum[$c-sluice]}")"
    rc="$(median "${cmd_sum[$c-ratelimit]}")"; sc="$(median "${cmd_sum[$c-sluice]}")"
    echo "- $c, medians: requests/s ratelimit $rl, Sluice $sl (Sluice / ratelimit $(awk -v a="$sl" -v b="$rl" 'BEGIN{printf "%.2f", a/b}')x);"
    echo "  Redis commands per 1,000 decisions ratelimit $rc, Sluice $sc (Sluice / ratelimit $(awk -v a="$sc" -v b="$rc" 'BEGIN{printf "%.3f", (b>0? a/b : 0)}'))."
  done
  echo
  echo "Accuracy (RlsAccuracyMain, both servers and both traffics at once, each traffic on descriptors of its own of $ACC_LIMIT a $ACC_UNIT,"
  echo "calls paced from 10% to 90% into each window, for $ACC_WINDOWS window(s)): uniform, $ACC_VALUES descriptors \`acc=v0..\` each sent"
  echo "$ACC_CALLS calls a $ACC_UNIT; zipf, $ACC_ZIPF_VALUES descriptors \`accz=v0..\`, each call on a descriptor drawn from a Zipf distribution"
  echo "(s = 1.1, seeded: the same calls to both servers), the hottest sent $ACC_CALLS calls a $ACC_UNIT and most far fewer. OK and OVER_LIMIT"
  echo "answers counted per descriptor per window. Exact = the sum over those windows of min(limit, calls answered); over ="
  echo "admitted beyond the limit in a window; under = admitted short of min(limit, calls answered); a call that failed"
  echo "(gRPC errors, by status: a deadline of 5 s passed, or the server refused it) has no answer to count. Ambiguous: answers that came back after"
  echo "their window had ended (counted in the window they were sent in)."
  echo
  echo "| traffic | server | descriptor-windows | calls | admitted | exact | over | under | gRPC errors | ambiguous |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${acc_rows[@]}"
} >"$OUT"
echo ">> wrote $OUT"
cat "$OUT"
