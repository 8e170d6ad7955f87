#!/usr/bin/env bash
# Runs the multi-region scenarios (RegionCoordinatorIT: three regional redis-servers, two nodes per
# region, coordinator replicas in a Hazelcast cluster, simulated time) and writes the comparison of
# demand-based shares with the static G/R split to region-coordinator/results/regions.md.
#   region-coordinator/run-report.sh        (about 2 minutes; needs redis-server on the PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/region-coordinator/results"
mkdir -p "$out"
./mvnw -B -q verify -pl region-coordinator -am \
  -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=RegionCoordinatorIT -Dfailsafe.failIfNoSpecifiedTests=false \
  -Dsluice.report.dir="$out"
cat "$out/regions.md"
