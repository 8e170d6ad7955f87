#!/usr/bin/env bash
# The sidecar (sluice serve) beside an empty Jetty handler, in one run: requests/s and p50/p99/p99.9
# of each, and the ratio sidecar / empty handler, round by round (issue 17, item 3). Writes
# benchmarks/results/sidecar.md.
#
#   benchmarks/run-sidecar.sh                          # 3 rounds, 10 s per measurement after warm-ups
#   ROUNDS=5 DURATION=20s CONNECTIONS=64 benchmarks/run-sidecar.sh
#   SERVER_CPUS=1 LOAD_CPUS=0 benchmarks/run-sidecar.sh   # servers on core 1, wrk and redis on core 0
#   SKIP_BUILD=1 ...                                     # use the sluice.jar and test classes already built
#   SIDECAR_CLASSES=DIR ...   # the sidecar's classes compiled from another commit, ahead of sluice.jar's
#                             # (a before/after comparison, each against the empty handler of its own run)
#   JAR=FILE JAR_LABEL=TEXT ...   # another sluice.jar (built from another commit), named in the results
#
# Both servers are started once, each in its own JVM with the same flags and CPU set (taskset): the
# sidecar (`sluice serve`, Redis batched, the default mode, on a redis-server started here) and
# EmptyJettyMain (limiter-sidecar's test classes: the same Jetty, thread pool, connector and HTTP
# settings through SluiceServer.jetty, a handler that answers 200 and nothing else). Every round
# measures the empty handler, allowed checks (10,000 keys of open=1000/1m: each key sees one or two
# requests a second, far from its limit) and denied checks (100 keys of tight=10/1h, spent in the
# warm-up), with the same wrk load; the order alternates between rounds. Then CheckAllocationMain
# measures the bytes the sidecar allocates per check. Only loopback, only free ports. Not part of CI.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-10s}"
WARMUP="${WARMUP:-10s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-64}"
MAX_THREADS="${MAX_THREADS:-200}"
ALL_CPUS="0-$(( $(nproc) - 1 ))"
SERVER_CPUS="${SERVER_CPUS:-$ALL_CPUS}"
LOAD_CPUS="${LOAD_CPUS:-$ALL_CPUS}"
JVM_FLAGS=(${JVM_FLAGS:--Xms512m -Xmx512m})
OUT="${OUT:-benchmarks/results/sidecar.md}"
WORK="$(mktemp -d)"
mkdir -p "$(dirname "$OUT")"

for tool in wrk redis-server redis-cli java taskset python3; do
  command -v "$tool" >/dev/null || { echo "run-sidecar: $tool not found" >&2; exit 1; }
done

# (pids, cleanup on exit, free_port)
source "$ROOT/benchmarks/common.sh"

if [[ -z "${SKIP_BUILD:-}" ]]; then
  echo ">> building sluice.jar and the sidecar's test classes"
  ./mvnw -B -q -o -pl limiter-cli -am package -DskipTests
fi
# (both can be copies elsewhere, e.g. to keep measuring while the worktree rebuilds)
JAR="${JAR:-limiter-cli/target/sluice.jar}"
TEST_CLASSES="${TEST_CLASSES:-limiter-sidecar/target/test-classes}"
CP="$JAR:$TEST_CLASSES"

wait_for() {  # wait_for <log> <pid>: until the log says it listens
  for _ in $(seq 1 600); do
    if grep -q "listening on" "$1"; then return 0; fi
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "run-sidecar: a server did not start:" >&2; cat "$1" >&2; return 1
}

cpu_ticks() {  # cpu_ticks <pid>: user + system clock ticks so far
  awk '{print $14 + $15}' "/proc/$1/stat"
}

redis_commands() {  # commands redis-server has run so far (INFO commandstats: a script and each command in it), without INFO's
  redis-cli -p "$REDIS_PORT" info commandstats | awk -F'[:=,]' '/^cmdstat_/ && $1 != "cmdstat_info" { s += $3 } END { print s + 0 }'
}

REDIS_PORT="$(free_port)"
taskset -c "$LOAD_CPUS" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!; pids+=("$REDIS_PID")
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

SIDECAR_PORT="$(free_port)"
SIDECAR_CP="${SIDECAR_CLASSES:+$SIDECAR_CLASSES:}$JAR"
taskset -c "$SERVER_CPUS" java "${JVM_FLAGS[@]}" -cp "$SIDECAR_CP" io.sluice.cli.Sluice serve --port "$SIDECAR_PORT" \
  --limit "open=1000/1m" --limit "tight=10/1h" --max-threads "$MAX_THREADS" \
  --redis "redis://127.0.0.1:$REDIS_PORT" --redis-timeout 2s >"$WORK/sidecar.log" 2>&1 &
SIDECAR_PID=$!; pids+=("$SIDECAR_PID")
EMPTY_PORT="$(free_port)"
taskset -c "$SERVER_CPUS" java "${JVM_FLAGS[@]}" -cp "$CP" io.sluice.sidecar.EmptyJettyMain "$EMPTY_PORT" "$MAX_THREADS" \
  >"$WORK/empty.log" 2>&1 &
EMPTY_PID=$!; pids+=("$EMPTY_PID")
wait_for "$WORK/sidecar.log" "$SIDECAR_PID"
wait_for "$WORK/empty.log" "$EMPTY_PID"

wrk_run() {  # wrk_run <port> <limit> <keys> <duration> <out>
  taskset -c "$LOAD_CPUS" /usr/bin/time -f "%U %S" -o "$5.time" \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$4" -s benchmarks/sidecar.lua "http://127.0.0.1:$1/check" -- "$2" "$3" >"$5"
}

# case name, port, server pid, limit, keys
CASES=("empty|$EMPTY_PORT|$EMPTY_PID|open|10000" "allowed|$SIDECAR_PORT|$SIDECAR_PID|open|10000"
  "denied|$SIDECAR_PORT|$SIDECAR_PID|tight|100")

echo ">> warm-up ($WARMUP each)"
for c in "${CASES[@]}"; do
  IFS='|' read -r name port pid limit keys <<<"$c"
  wrk_run "$port" "$limit" "$keys" "$WARMUP" "$WORK/warmup-$name.txt"
done

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
rows=()
declare -A empty_rps
ratios_allowed=(); ratios_denied=()
for round in $(seq 1 "$ROUNDS"); do
  order=("${CASES[@]}")
  if (( round % 2 == 0 )); then order=("${CASES[2]}" "${CASES[1]}" "${CASES[0]}"); fi
  declare -A rps_of=() line_of=()
  for c in "${order[@]}"; do
    IFS='|' read -r name port pid limit keys <<<"$c"
    echo ">> round $round: $name"
    server_before="$(cpu_ticks "$pid")"; redis_before="$(cpu_ticks "$REDIS_PID")"; commands_before="$(redis_commands)"
    out="$WORK/r$round-$name.txt"
    wrk_run "$port" "$limit" "$keys" "$DURATION" "$out"
    server_cpu=$(( $(cpu_ticks "$pid") - server_before )); redis_cpu=$(( $(cpu_ticks "$REDIS_PID") - redis_before ))
    commands=$(( $(redis_commands) - commands_before ))
    stats="$(grep '^STATS' "$out")"
    get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$stats"; }
    secs="$(get seconds)"
    wrk_cpu="$(awk '{print $1 + $2}' "$out.time")"
    rps_of[$name]="$(get rps)"
    # cores used over the measurement: server JVM, redis-server, wrk
    line_of[$name]="$(awk -v s="$secs" -v a="$server_cpu" -v b="$redis_cpu" -v w="$wrk_cpu" \
      -v rps="$(get rps)" -v p50="$(get p50_us)" -v p99="$(get p99_us)" -v p999="$(get p999_us)" \
      -v n2="$(get non2xx)" -v se="$(get socket_errors)" -v n="$(get requests)" -v c="$commands" \
      'BEGIN { printf "%.0f | %.2f | %.2f | %.2f | %d | %d | %.2f / %.2f / %.2f | %.0f", rps, p50/1000, p99/1000, p999/1000, n, n2 + se, a/100/s, b/100/s, w/s, (n > 0 ? 1000 * c / n : 0) }')"
  done
  for name in empty allowed denied; do
    ratio="$(awk -v x="${rps_of[$name]}" -v e="${rps_of[empty]}" 'BEGIN { printf "%.2f", x / e }')"
    [[ "$name" == allowed ]] && ratios_allowed+=("$ratio")
    [[ "$name" == denied ]] && ratios_denied+=("$ratio")
    rows+=("| $round | $name | ${line_of[$name]} | $ratio |")
  done
  unset rps_of line_of
done

spread() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {printf "median %.2f, range %.2f-%.2f", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[1], a[NR]}'; }

echo ">> allocation per check (CheckAllocationMain, its own JVM)"
java "${JVM_FLAGS[@]}" -cp "${SIDECAR_CLASSES:+$SIDECAR_CLASSES:}$CP" io.sluice.sidecar.CheckAllocationMain \
  "redis://127.0.0.1:$REDIS_PORT" "${ALLOC_REQUESTS:-100000}" \
  >"$WORK/alloc.txt" 2>"$WORK/alloc.err" || { cat "$WORK/alloc.err" >&2; exit 1; }

{
  echo "# The sidecar beside an empty Jetty handler"
  echo
  echo "\`benchmarks/run-sidecar.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- limiter-sidecar || echo ' (with uncommitted changes)')${SIDECAR_CLASSES:+, the sidecar classes from \`$SIDECAR_CLASSES\` ahead of sluice.jar (${SIDECAR_LABEL:-another commit})}${JAR_LABEL:+, sluice.jar: $JAR_LABEL}:"
  echo "$(nproc) cores **shared by the servers, redis-server and wrk** (and by other work on the machine: load average"
  echo "$LOAD_BEFORE before the rounds), $(java -version 2>&1 | head -1), Jetty $(unzip -p "$JAR" META-INF/maven/org.eclipse.jetty/jetty-server/pom.properties 2>/dev/null | sed -n 's/^version=//p')."
  echo "Servers pinned to CPUs $SERVER_CPUS (each its own JVM, \`${JVM_FLAGS[*]}\`, max threads $MAX_THREADS), wrk and redis-server to $LOAD_CPUS."
  echo "Load: \`wrk -t$THREADS -c$CONNECTIONS -d$DURATION\` (closed loop, keep-alive) after a $WARMUP warm-up of each case,"
  echo "the same POST bodies (\`{\"key\":\"user-N\",\"limit\":\"...\"}\`) to both servers; $ROUNDS rounds, order alternating."
  echo "Sidecar: \`sluice serve --limit open=1000/1m --limit tight=10/1h --redis ...\` (Redis batched, the default mode)."
  echo "Allowed: 10,000 keys of \`open\` (each key a request or two a second, far from 1,000 a minute); denied: 100"
  echo "keys of \`tight\`, spent in the warm-up. Empty: EmptyJettyMain, the sidecar's Jetty settings and a handler that"
  echo "answers 200 without reading the body. Latency is wrk's (from send to answer, closed loop)."
  echo
  echo "| round | case | requests/s | p50 ms | p99 ms | p99.9 ms | requests | errors (non-2xx, socket) | cores used: server / redis / wrk | Redis commands / 1,000 requests | ratio to empty |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Ratio sidecar / empty handler, requests/s in the same round: allowed $(spread "${ratios_allowed[@]}");"
  echo "denied $(spread "${ratios_denied[@]}"). (Denied checks are all 429, counted as errors by wrk, as they should be.)"
  echo
  echo "Allocation per request on the server (CheckAllocationMain, its own JVM: every thread but the client's, ${ALLOC_REQUESTS:-100000} keep-alive requests after as many to warm up):"
  echo
  sed 's/^/- /' "$WORK/alloc.txt"
} >"$OUT"
echo ">> wrote $OUT"
cat "$OUT"
