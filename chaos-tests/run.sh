#!/usr/bin/env bash
# Runs the chaos suite (ChaosIT: eleven fault scenarios, three fallback policies each, about 5 minutes on
# 2 cores) and writes its report to chaos-tests/results/{chaos.md,chaos.csv}.
#
#   chaos-tests/run.sh                         # local redis-server and toxiproxy-server processes
#   CHAOS_BACKEND=containers chaos-tests/run.sh  # Redis and Toxiproxy in Docker (Testcontainers)
#
# Needs what ./run-tests installs (redis-server, toxiproxy-server); the same tests also run in
# ./run-tests, writing their report under chaos-tests/target/chaos-report instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${RESULTS_DIR:-$ROOT/chaos-tests/results}"
mkdir -p "$OUT"
./mvnw -B -q verify -pl chaos-tests -am \
  -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ChaosIT,RegionChaosIT -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dchaos.results="$OUT" -Dchaos.backend="${CHAOS_BACKEND:-auto}"
echo "chaos report: $OUT/chaos.md"
