#!/usr/bin/env bash
# The sidecar's first seconds on keys it has never seen: most allowed checks are a key's first (or
# second) on the node and ask Redis for a claim, so this measures the decisions that wait, not HTTP.
# Per run: a fresh redis-server and a fresh `sluice serve --limit open=1000/1m --redis ...` (Redis batched,
# the default mode), wrk -t2 -c64 for DURATION on 10,000 keys of open (each a request or so a second),
# then the sidecar's own meters (decisions, decisions that waited, store calls, deltas flushed) and Redis's
# INFO commandstats. Several jars (built from different commits) alternate, ROUNDS times each, so that a
# before/after comparison is made in one run. Writes benchmarks/results/sidecar-cold.md. Not part of CI.
#
#   benchmarks/run-sidecar-cold.sh                                  # limiter-cli/target/sluice.jar, 2 rounds
#   JARS="/tmp/before.jar /tmp/after.jar" LABELS="before after" ROUNDS=3 benchmarks/run-sidecar-cold.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
ROUNDS="${ROUNDS:-2}"
DURATION="${DURATION:-15s}"
JARS=(${JARS:-limiter-cli/target/sluice.jar})
LABELS=(${LABELS:-this})
OUT="${OUT:-benchmarks/results/sidecar-cold.md}"
WORK="$(mktemp -d)"
for tool in wrk redis-server redis-cli java curl python3; do
  command -v "$tool" >/dev/null || { echo "run-sidecar-cold: $tool not found" >&2; exit 1; }
done
(( ${#JARS[@]} == ${#LABELS[@]} )) || { echo "run-sidecar-cold: as many LABELS as JARS" >&2; exit 1; }
# (pids, cleanup on exit, free_port)
source "$ROOT/benchmarks/common.sh"

metric() {  # metric <metrics file> <name>: the value of the open limit's series
  sed -n "s/^$2{[^}]*limit=\"open\"[^}]*} \([0-9.E+]*\)$/\1/p" "$1" | head -1
}

rows=()
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq 1 "$ROUNDS"); do
  for i in "${!JARS[@]}"; do
    # (the order alternates between rounds)
    j=$(( round % 2 == 1 ? i : ${#JARS[@]} - 1 - i ))
    jar="${JARS[$j]}"; label="${LABELS[$j]}"
    echo ">> round $round: $label"
    rport="$(free_port)"; sport="$(free_port)"
    redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
    rpid=$!; pids+=("$rpid")
    for _ in $(seq 1 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
    java -Xms512m -Xmx512m -cp "$jar" io.sluice.cli.Sluice serve --port "$sport" --limit "open=1000/1m" \
      --max-threads 200 --redis "redis://127.0.0.1:$rport" --redis-timeout 2s >"$WORK/sidecar.log" 2>&1 &
    spid=$!; pids+=("$spid")
    for _ in $(seq 1 300); do grep -q "listening on" "$WORK/sidecar.log" && break; sleep 0.1; done
    wrk -t2 -c64 -d"$DURATION" -s benchmarks/sidecar.lua "http://127.0.0.1:$sport/check" -- open 10000 >"$WORK/wrk.txt"
    curl -s "http://127.0.0.1:$sport/metrics" >"$WORK/metrics.txt"
    evalsha="$(redis-cli -p "$rport" info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')"
    commands="$(redis-cli -p "$rport" info commandstats | awk -F'[:=,]' '/^cmdstat_/ && $1 != "cmdstat_info" { s += $3 } END { print s + 0 }')"
    kill "$spid" "$rpid"; wait "$spid" "$rpid" 2>/dev/null || true
    stats="$(grep '^STATS' "$WORK/wrk.txt")"
    get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$stats"; }
    allowed="$(grep 'result="allowed"' "$WORK/metrics.txt" | metric /dev/stdin sluice_decisions_total)"
    waited="$(metric "$WORK/metrics.txt" sluice_sync_decisions_waited_seconds_count)"
    calls="$(metric "$WORK/metrics.txt" sluice_sync_store_calls_total)"
    deltas="$(metric "$WORK/metrics.txt" sluice_sync_flush_deltas_total)"
    rows+=("$(awk -v r="$round" -v l="$label" -v rps="$(get rps)" -v p50="$(get p50_us)" -v p99="$(get p99_us)" \
      -v n="$(get requests)" -v e="$(( $(get non2xx) + $(get socket_errors) ))" -v a="$allowed" -v w="$waited" \
      -v c="$calls" -v d="$deltas" -v x="$evalsha" -v m="$commands" \
      'BEGIN { printf "| %d | %s | %.0f | %.1f | %.1f | %d | %d | %.1f%% | %.0f | %.0f | %.0f | %.0f |", r, l, rps, p50/1000, p99/1000, n, e,
        (a > 0 ? 100 * w / a : 0), (a > 0 ? 1000 * c / a : 0), (a > 0 ? 1000 * d / a : 0), (a > 0 ? 1000 * x / a : 0), (a > 0 ? 1000 * m / a : 0) }')")
  done
done

{
  echo "# The sidecar's first $DURATION on 10,000 new keys"
  echo
  echo "\`benchmarks/run-sidecar-cold.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC, commit $(git rev-parse --short HEAD); $(nproc) cores"
  echo "shared by the sidecar, redis-server and wrk (load average $LOAD_BEFORE before the runs), $(java -version 2>&1 | head -1)."
  echo "Each run: a fresh redis-server and \`sluice serve --limit open=1000/1m --redis ...\` (Redis batched, the default"
  echo "mode), \`wrk -t2 -c64 -d$DURATION\` at once (no warm-up) on 10,000 keys of \`open\` (each a request or so a second,"
  echo "far below 1,000 a minute); then the sidecar's meters and Redis's INFO commandstats. Jars: $(for i in "${!JARS[@]}"; do printf '%s = `%s`; ' "${LABELS[$i]}" "${JARS[$i]}"; done)"
  echo "order alternating between rounds. Per 1,000 decisions (the sidecar's \`sluice_decisions_total\`):"
  echo
  echo "| round | jar | requests/s | p50 ms | p99 ms | requests | errors | decisions that waited | store calls | deltas flushed | EVALSHA | Redis commands |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >"$OUT"
echo ">> wrote $OUT"
cat "$OUT"
