#!/usr/bin/env bash
# Runs the multi-region scenarios (RegionCoordinatorIT: three regional redis-servers, two nodes per
# region, coordinator replicas in a Hazelcast cluster, simulated time) and writes the comparison of
# demand-based shares with the static G/R split to region-coordinator/results/regions.md; then the same
# in real time (RegionRealTimeIT: coordinator replicas as processes of their own, the system clock,
# rotating demand, a leader killed with SIGKILL, a regional Redis killed) to results/regions-realtime.md,
# and once more with a sliding window quota to results/regions-realtime-sliding.md, and with a token-bucket
# quota (a refill of 300 per second, burst 60: its nodes decide in exact mode) to
# results/regions-realtime-bucket.md, and with batched nodes (token claims, batch 100; a refill of 3,000
# per second, burst 600) to results/regions-realtime-bucket-batched.md.
#   region-coordinator/run-report.sh        (about 10 minutes; needs redis-server on the PATH; run the
#                                            real-time part on a quiet machine: its figures are timing)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/region-coordinator/results"
mkdir -p "$out"
./mvnw -B -q verify -pl region-coordinator -am \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test='RegionCoordinatorIT,RegionRealTimeIT' -Dfailsafe.failIfNoSpecifiedTests=false -Dsluice.realtime=true \
  -Dsluice.report.dir="$out"
./mvnw -B -q verify -pl region-coordinator -am \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test='RegionRealTimeIT' -Dfailsafe.failIfNoSpecifiedTests=false -Dsluice.realtime=true \
  -Dsluice.realtime.sliding=true -Dsluice.report.dir="$out"
./mvnw -B -q verify -pl region-coordinator -am \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test='RegionRealTimeIT' -Dfailsafe.failIfNoSpecifiedTests=false -Dsluice.realtime=true \
  -Dsluice.realtime.bucket=60 -Dsluice.realtime.g=300 -Dsluice.report.dir="$out"
./mvnw -B -q verify -pl region-coordinator -am \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test='RegionRealTimeIT' -Dfailsafe.failIfNoSpecifiedTests=false -Dsluice.realtime=true \
  -Dsluice.realtime.bucket=600 -Dsluice.realtime.g=3000 -Dsluice.realtime.bucketBatch=100 -Dsluice.report.dir="$out"
cat "$out/regions.md" "$out/regions-realtime.md" "$out/regions-realtime-sliding.md" "$out/regions-realtime-bucket.md" \
  "$out/regions-realtime-bucket-batched.md"
