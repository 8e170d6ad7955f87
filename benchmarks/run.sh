#!/usr/bin/env bash
# Builds the benchmarks, runs KeyedDecisionBenchmark with 1 and 2 threads and IdleKeyFootprint, and
# writes benchmarks/results/{keyed-decisions.md, keyed-decisions-t*.json, idle-key-footprint.md}.
#
#   benchmarks/run.sh             # full run: -f 1 -wi 3 -w 2s -i 5 -r 2s  (~12 min on 2 cores)
#   QUICK=1 benchmarks/run.sh     # smoke run: -f 1 -wi 1 -w 1s -i 2 -r 1s (~4 min)
#
# Environment overrides:
#   JMH_OPTS         replaces the iteration/fork options above
#   THREADS          thread counts to run (default "1 2")
#   BENCH            JMH benchmark regex (default KeyedDecisionBenchmark)
#   FOOTPRINT_KEYS   keys for IdleKeyFootprint (default 1000000)
#   SKIP_BUILD=1     reuse benchmarks/target/benchmarks.jar
#   RESULTS_DIR      output directory (default benchmarks/results)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${RESULTS_DIR:-benchmarks/results}"
JAR=benchmarks/target/benchmarks.jar
mkdir -p "$OUT"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo ">> building"
  ./mvnw -B -q -pl limiter-node,benchmarks -am package -DskipTests
fi

if [[ -n "${JMH_OPTS:-}" ]]; then
  read -r -a jmh_opts <<<"$JMH_OPTS"
elif [[ "${QUICK:-0}" == 1 ]]; then
  jmh_opts=(-f 1 -wi 1 -w 1s -i 2 -r 1s)
else
  jmh_opts=(-f 1 -wi 3 -w 2s -i 5 -r 2s)
fi
bench="${BENCH:-KeyedDecisionBenchmark}"

results=()
for t in ${THREADS:-1 2}; do
  json="$OUT/keyed-decisions-t$t.json"
  echo ">> JMH $bench, $t thread(s): ${jmh_opts[*]}"
  java -jar "$JAR" "$bench" "${jmh_opts[@]}" -t "$t" -foe true -prof gc -rf json -rff "$json" \
    | tee "$OUT/keyed-decisions-t$t.log"
  results+=("$json")
done

echo ">> idle key footprint"
java -Xms4g -Xmx4g -XX:+UseSerialGC -cp "$JAR" io.sluice.benchmarks.IdleKeyFootprint \
  "$OUT/idle-key-footprint.md" "${FOOTPRINT_KEYS:-1000000}"

echo ">> tables"
python3 benchmarks/jmh_to_md.py "$OUT/keyed-decisions.md" "${results[@]}"
echo ">> wrote $OUT/keyed-decisions.md and $OUT/idle-key-footprint.md"
