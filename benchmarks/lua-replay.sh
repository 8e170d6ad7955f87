#!/usr/bin/env bash
# What a change to limiter-sync-redis/lua/flush.lua costs Redis, on real traffic: captures the script calls of the accuracy
# kit's Zipf over 1,000 keys on 4 nodes (AccuracyKitIT, Redis, fixed window, 60 s of traffic) with
# MONITOR, then replays them against two redis-servers, one running flush.lua as git has it at BASE
# and one as the working tree has it, and prints the scripts' time on each (lua_replay.py; the answers
# must match call by call). Both servers run on one core (taskset -c 1 where taskset exists) and take
# the calls in turn, 200 at a time, so that both see the machine alike.
#
#   benchmarks/lua-replay.sh                 # BASE = HEAD
#   BASE=48ed773 benchmarks/lua-replay.sh
#   CAPTURE=/tmp/monitor.txt benchmarks/lua-replay.sh   # replay a capture made before
#   ROUNDS=3 benchmarks/lua-replay.sh                   # replay it three times (the order alternating)
#   KIT_CASE=redis KIT_ARGS= benchmarks/lua-replay.sh    # capture all of AccuracyKitIT's Redis cases
#                                                         # (sliding windows, leases, buckets too), 10 s each
#   SAVE_CAPTURE=/tmp/all.txt benchmarks/lua-replay.sh  # keep the capture, to replay it with CAPTURE=
#
# Needs redis-server, redis-cli, python3, and for the capture a build (./mvnw -o -q install -DskipTests).
# Only loopback, only free ports. Not part of CI. The figures of 2026-12-04 are in the README (Distributed
# limits, "Redis CPU, not only commands").
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BASE="${BASE:-HEAD}"
ROUNDS="${ROUNDS:-1}"
WORK="$(mktemp -d)"
# (pids, cleanup on exit, free_port)
source "$ROOT/benchmarks/common.sh"

PIN=()
if command -v taskset >/dev/null; then PIN=(taskset -c 1); fi

CAPTURE="${CAPTURE:-}"
if [[ -z "$CAPTURE" ]]; then
  CAPTURE="$WORK/monitor.txt"
  # the kit starts its own redis-server through SLUICE_REDIS_SERVER: this wrapper starts it and a
  # MONITOR that writes every command it runs to the capture
  cat > "$WORK/redis-monitored" <<EOF
#!/usr/bin/env bash
port=""; prev=""
for a in "\$@"; do if [ "\$prev" = "--port" ]; then port=\$a; fi; prev=\$a; done
( for i in \$(seq 1 100); do redis-cli -p "\$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  exec redis-cli -p "\$port" MONITOR > "$CAPTURE" ) &
exec ${PIN[*]} redis-server "\$@"
EOF
  chmod +x "$WORK/redis-monitored"
  KIT_CASE="${KIT_CASE-redis ZIPF_1K FIXED_WINDOW 4 APPROXIMATE}"
  KIT_ARGS="${KIT_ARGS--Dsluice.kit.zipf1kSeconds=60}"
  echo ">> capturing: AccuracyKitIT, $KIT_CASE ($KIT_ARGS)"
  SLUICE_REDIS_SERVER="$WORK/redis-monitored" ./mvnw -B -q -o -pl limiter-sync-hazelcast verify \
    -Dmaven.javadoc.skip=true -Dmaven.source.skip=true -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
    -Dit.test=AccuracyKitIT "-Dsluice.kit.case=$KIT_CASE" \
    "-DargLine=$KIT_ARGS" > "$WORK/capture.log" 2>&1 \
    || { tail -40 "$WORK/capture.log"; exit 1; }
  sleep 1
  if [[ -n "${SAVE_CAPTURE:-}" ]]; then cp "$CAPTURE" "$SAVE_CAPTURE"; fi
fi

# (the scripts sat in the repository's lua/ folder before 2026-12-05; flush.lua's helpers in
# flush_lib.lua since that day, sent after the prelude: the base's, where it has one, for both sides)
LUA=limiter-sync-redis/lua
base_file() { git show "$BASE:$LUA/$1" 2>/dev/null || git show "$BASE:lua/$1" 2>/dev/null; }
base_file flush.lua > "$WORK/flush-base.lua"
base_file prelude.lua > "$WORK/prelude.lua"
base_file flush_lib.lua > "$WORK/flush_lib-base.lua" || true
cat "$WORK/prelude.lua" "$LUA/flush_lib.lua" > "$WORK/prelude-new.lua"
cat "$WORK/prelude.lua" "$WORK/flush_lib-base.lua" > "$WORK/prelude-base.lua"
start_redis() {
  local port; port="$(free_port)"
  "${PIN[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis-$port.log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo "$port"
}
A="$(start_redis)"
B="$(start_redis)"
# (start_redis runs in a subshell, whose pids+= the cleanup on exit never saw: both servers outlived
# every run; their pids, from the servers themselves)
for port in "$A" "$B"; do
  pids+=("$(redis-cli -p "$port" info server | tr -d '\r' | sed -n 's/^process_id://p')")
done
for round in $(seq 1 "$ROUNDS"); do
  # (the working tree's version on the first server in even rounds: lines name each file)
  echo ">> round $round: flush.lua at $BASE ($WORK/flush-base.lua) against the working tree's ($LUA/flush.lua)"
  if (( round % 2 == 1 )); then
    python3 benchmarks/lua_replay.py "$CAPTURE" "$A" "$WORK/flush-base.lua" "$WORK/prelude-base.lua" "$B" "$LUA/flush.lua" "$WORK/prelude-new.lua"
  else
    python3 benchmarks/lua_replay.py "$CAPTURE" "$A" "$LUA/flush.lua" "$WORK/prelude-new.lua" "$B" "$WORK/flush-base.lua" "$WORK/prelude-base.lua"
  fi
done
