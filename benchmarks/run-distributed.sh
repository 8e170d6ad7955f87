#!/usr/bin/env bash
# Builds the benchmarks and runs io.sluice.benchmarks.DistributedBenchmark: Sluice's SyncedLimiter over
# Redis (batch 1, default, 1000) side by side with Bucket4j + Lettuce (plain CAS and
# Optimizations.delaying), Redisson's RRateLimiter and the same Sluice node in-process, against one
# local redis-server that the harness starts on a free loopback port; then the 4-node over-admission
# run. Writes benchmarks/results/distributed.md and distributed.csv.
#
#   benchmarks/run-distributed.sh            # full run: 2 s warm-up + 3 s per cell, 1/2/8 threads (~8 min with the 100,000-key rows)
#   QUICK=1 benchmarks/run-distributed.sh    # smoke run: 0.5 s + 1 s per cell, 1/2 threads (~2 min),
#                                            # written to benchmarks/target/distributed-quick/ unless RESULTS_DIR
#
# Environment overrides:
#   SKIP_BUILD=1     reuse benchmarks/target/benchmarks.jar
#   RESULTS_DIR      output directory
#   REDIS_URI        use this (loopback) Redis instead of starting redis-server; its stats get reset
#   REDIS_SERVER     redis-server binary (default: redis-server on PATH)
#   BENCH_ARGS       more arguments for DistributedBenchmark (e.g. "--only Sluice --threads 1,8")
#   JAVA_OPTS        JVM options (default: -Xms1g -Xmx1g)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JAR=benchmarks/target/benchmarks.jar

if [[ "${QUICK:-0}" == 1 ]]; then
  OUT="${RESULTS_DIR:-benchmarks/target/distributed-quick}"
  args=(--quick)
else
  OUT="${RESULTS_DIR:-benchmarks/results}"
  args=()
fi
mkdir -p "$OUT"
args+=(--out "$OUT/distributed.md" --csv "$OUT/distributed.csv")
[[ -n "${REDIS_URI:-}" ]] && args+=(--redis "$REDIS_URI")
[[ -n "${REDIS_SERVER:-}" ]] && args+=(--redis-server "$REDIS_SERVER")
if [[ -n "${BENCH_ARGS:-}" ]]; then
  read -r -a extra <<<"$BENCH_ARGS"
  args+=("${extra[@]}")
fi

if [[ -z "${REDIS_URI:-}" ]] && ! command -v "${REDIS_SERVER:-redis-server}" >/dev/null 2>&1; then
  echo "run-distributed: redis-server not found (Debian: apt-get install redis-server), or set REDIS_URI" >&2
  exit 1
fi

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo ">> building"
  ./mvnw -B -q -pl benchmarks -am package -DskipTests
fi

read -r -a java_opts <<<"${JAVA_OPTS:--Xms1g -Xmx1g}"
echo ">> DistributedBenchmark ${args[*]}"
set +e
java "${java_opts[@]}" -cp "$JAR" io.sluice.benchmarks.DistributedBenchmark "${args[@]}" \
  2>&1 | tee "$OUT/distributed.log"
status=${PIPESTATUS[0]}
set -e
if [[ $status != 0 ]]; then
  echo ">> DistributedBenchmark FAILED (exit $status); see $OUT/distributed.log" >&2
  exit "$status"
fi
echo ">> wrote $OUT/distributed.md and $OUT/distributed.csv"
