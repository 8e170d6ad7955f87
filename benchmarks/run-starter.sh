#!/usr/bin/env bash
# The Spring Boot starter measured (issue 15): the startup time it adds to an empty Boot app, and the
# throughput of a one-endpoint app behind it, beside the same app behind a Bucket4j filter on the same
# Redis and behind nothing. Servlet (Tomcat, Spring MVC) and reactive (Reactor Netty, WebFlux).
# Writes benchmarks/results/starter.md and benchmarks/results/starter-throughput.md.
#
#   benchmarks/run-starter.sh                  # both parts (about 7 minutes on 2 quiet cores with SKIP_BUILD=1)
#   PARTS=startup benchmarks/run-starter.sh    # or PARTS=throughput
#   STARTS=9 ROUNDS=3 DURATION=10s WARMUP=10s benchmarks/run-starter.sh   # longer, for a quiet machine
#   SKIP_BUILD=1 ...                           # reuse benchmarks/spring-boot/target (classes, classpath.txt)
#   NOTE="quiet machine" ...                   # a line written under each result's heading
#
# The app is benchmarks/spring-boot's HelloApp (GET /api/hello, GET /api/tight), each variant in its own
# JVM with the same flags (JVM_FLAGS). The build writes one runtime classpath holding everything; each
# variant runs on that classpath with jars taken out (listed in starter.md): servlet apps without the
# WebFlux stack, reactive apps without Tomcat and Spring MVC, the empty apps without the starter's jars
# (Sluice's modules, Lettuce and the Netty and Reactor jars it brings, Hazelcast, Micrometer core,
# Resilience4j) and without Bucket4j.
#
# Startup: STARTS starts of each variant, the variants in a different order every time (rotated): the
# empty app; the starter's jars on the classpath but sluice.enabled=false (what the jars alone cost); the
# starter on Redis (sluice.store.redis-uri); the starter on its default store, an embedded Hazelcast member
# (on a free port and a cluster name of its own). Figure: the JVM's uptime when
# ApplicationReadyEvent fires (RuntimeMXBean, from the JVM's start), printed by the app, which then halts.
#
# Throughput: per stack, four servers started once: none (the empty app: the ceiling), sluice (the
# starter's defaults: sliding window counter, batch 100), sluice-exact (sluice.sync.batch-size=1, as the
# examples' application.yml: one Redis script per decision) and bucket4j (Bucket4jFilters: one token per
# request from a bucket in Redis through LettuceBasedProxyManager, written by hand in the shape of the
# Bucket4j Spring Boot starter, which is not in this machine's Maven repository). Limits: /api/hello
# OPEN_LIMIT a minute per API key (far above the load: every request allowed), /api/tight 1 an hour per
# API key (spent in the warm-up: denied). Load: wrk -tTHREADS -cCONNECTIONS -dDURATION with KEYS API keys
# (starter.lua): "allowed" (every request to /api/hello) and "half" (every other one to /api/tight), after
# a WARMUP run of "half" on each server; ROUNDS rounds, the servers' order rotated each round. Ratios are
# to the ceiling in the same round. One redis-server on a free loopback port, started and stopped here.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CMD=""   # the command as run, with the settings given in the environment (for the result files)
for v in SKIP_BUILD PARTS STARTS ROUNDS DURATION WARMUP THREADS CONNECTIONS KEYS OPEN_LIMIT JVM_FLAGS RESULTS_DIR; do
  [[ -n "${!v:-}" ]] && CMD+="$v=${!v// /\\ } "
done
CMD+="benchmarks/run-starter.sh"
PARTS="${PARTS:-startup,throughput}"
STARTS="${STARTS:-5}"
ROUNDS="${ROUNDS:-2}"
DURATION="${DURATION:-5s}"
WARMUP="${WARMUP:-10s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-32}"
KEYS="${KEYS:-100}"
OPEN_LIMIT="${OPEN_LIMIT:-1000000000}"
JVM_FLAGS=(${JVM_FLAGS:--Xms512m -Xmx512m})
RESULTS_DIR="${RESULTS_DIR:-benchmarks/results}"
NOTE="${NOTE:-}"
MODULE=benchmarks/spring-boot
WORK="$(mktemp -d)"
LOGS="$MODULE/target/run-starter-logs"   # every app's log of the last run, kept
mkdir -p "$RESULTS_DIR"

for tool in wrk redis-server redis-cli java python3; do
  command -v "$tool" >/dev/null || { echo "run-starter: $tool not found" >&2; exit 1; }
done

# (pids, cleanup on exit, free_port)
source "$ROOT/benchmarks/common.sh"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo ">> building $MODULE (and what it depends on; nothing is installed)"
  ./mvnw -B -q -o -pl "$MODULE" -am package -DskipTests \
    dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
fi
[[ -f "$MODULE/target/classpath.txt" && -d "$MODULE/target/classes" ]] || {
  echo "run-starter: $MODULE/target/classpath.txt missing: run without SKIP_BUILD=1" >&2; exit 1; }
rm -rf "$LOGS"; mkdir -p "$LOGS"

# ------------------------------------------------------------------ the variants' classpaths
python3 - "$MODULE/target/classpath.txt" "$ROOT/$MODULE/target/classes" "$WORK" <<'EOF'
import re, sys
full = open(sys.argv[1]).read().strip().split(':')
classes, work = sys.argv[2], sys.argv[3]
def has(*patterns):
    return lambda p: any(re.search(x, p) for x in patterns)
# what Lettuce (limiter-sync-redis) brings: the Netty and Reactor jars a servlet app has only through it
lettuce_netty = has(r'/io/netty/netty-(common|handler|transport|buffer|resolver|transport-native-unix-common|'
                    r'codec-base|resolver-dns|codec-dns)/', r'/io/projectreactor/reactor-core/', r'/org/reactivestreams/')
starter = has(r'/target/(sluice-spring-boot-starter|limiter-[a-z-]+)-[^/]*\.jar$', r'/io/micrometer/micrometer-core/',
              r'/org/hdrhistogram/', r'/org/latencyutils/', r'/io/github/resilience4j/', r'/io/lettuce/',
              r'/redis/clients/', r'/com/hazelcast/')
bucket4j = has(r'/com/bucket4j/')
webflux = has(r'/spring-boot-starter-webflux/', r'/spring-boot-starter-reactor-netty/', r'/io/projectreactor/',
              r'/spring-webflux/', r'/io/netty/', r'/org/reactivestreams/')
servlet = has(r'/spring-boot-starter-web/', r'/spring-boot-starter-tomcat/', r'/org/apache/tomcat/', r'/spring-webmvc/')
variants = {
    'servlet-empty':    lambda p: webflux(p) or starter(p) or lettuce_netty(p) or bucket4j(p),
    'servlet-starter':  lambda p: (webflux(p) and not lettuce_netty(p)) or bucket4j(p),
    'servlet-all':      lambda p: webflux(p) and not lettuce_netty(p),
    'reactive-empty':   lambda p: servlet(p) or starter(p) or bucket4j(p),
    'reactive-starter': lambda p: servlet(p) or bucket4j(p),
    'reactive-all':     lambda p: servlet(p),
}
for name, out in variants.items():
    kept = [p for p in full if not out(p)]
    open(f'{work}/cp-{name}.txt', 'w').write(':'.join([classes] + kept))
    open(f'{work}/jars-{name}.txt', 'w').write('\n'.join(re.sub(r'.*/', '', p) for p in kept) + '\n')
EOF
jar_count() { wc -l <"$WORK/jars-$1.txt" | tr -d ' '; }
# the jars one variant has beyond another
jars_beyond() { comm -23 <(sort "$WORK/jars-$1.txt") <(sort "$WORK/jars-$2.txt") | sed 's/\.jar$//' | paste -sd' ' | sed 's/ /, /g'; }

# ------------------------------------------------------------------ redis
REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$WORK/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
REDIS_URI="redis://127.0.0.1:$REDIS_PORT"
REDIS_VERSION="$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')"
JAVA_VERSION="$(java -version 2>&1 | head -1)"
COMMIT="$(git rev-parse --short HEAD)"
[[ -z "$(git status --porcelain -- benchmarks ':!benchmarks/results' sluice-spring-boot-starter limiter-http limiter-node \
  limiter-sync limiter-sync-redis limiter-sync-hazelcast)" ]] || COMMIT+=" (with uncommitted changes)"

# the starter's settings in every Sluice variant (as arguments, as an application.yml would set them)
sluice_args() {  # sluice_args <key-prefix>
  echo "--sluice.limits.api.limit=$OPEN_LIMIT" "--sluice.limits.api.window=1m" \
    "--sluice.limits.tight.limit=1" "--sluice.limits.tight.window=1h" \
    "--sluice.rules.endpoints[0].method=GET" "--sluice.rules.endpoints[0].path=/api/hello" \
    "--sluice.rules.endpoints[0].rules=api@api-key" \
    "--sluice.rules.endpoints[1].method=GET" "--sluice.rules.endpoints[1].path=/api/tight" \
    "--sluice.rules.endpoints[1].rules=tight@api-key" \
    "--sluice.filter.api-key-header=X-API-Key" "--sluice.store.key-prefix=$1"
}
# (rules are "LIMIT by IDENTITY": written with @ above so that the words survive word splitting)
expand_rules() { local a; for a in "$@"; do printf '%s\n' "${a//@/ by }"; done; }

# start_app <log> <classpath-variant> <args...>: starts HelloApp in the background; sets APP_PID
start_app() {
  local log="$1" cp="$2"; shift 2
  local args=()
  : >"$log"
  mapfile -t args < <(expand_rules "$@")
  java "${JVM_FLAGS[@]}" -cp "$(cat "$WORK/cp-$cp.txt")" io.sluice.benchmarks.boot.HelloApp \
    --server.address=127.0.0.1 --spring.main.banner-mode=off "${args[@]}" >"$log" 2>&1 &
  APP_PID=$!
}

wait_ready() {  # wait_ready <log> <pid> [exits]: until the app prints READY (or, with exits, exits after it)
  for _ in $(seq 1 1200); do
    if grep -q '^READY ' "$1"; then
      [[ "${3:-}" == exits ]] && { wait "$2" 2>/dev/null || true; }
      return 0
    fi
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  kill "$2" 2>/dev/null || true
  echo "run-starter: an app did not start:" >&2; tail -40 "$1" >&2; return 1
}

# ================================================================== startup
if [[ ",$PARTS," == *,startup,* ]]; then
  LOAD_BEFORE="$(loadavg)"
  START_TIME="$(date -u '+%Y-%m-%d %H:%M')"
  variants=(servlet-empty servlet-disabled servlet-redis servlet-hazelcast reactive-empty reactive-disabled reactive-redis reactive-hazelcast)
  : >"$WORK/startup.tsv"
  echo ">> startup: $STARTS starts of each of ${variants[*]}"
  for run in $(seq 1 "$STARTS"); do
    n=${#variants[@]}
    for i in $(seq 0 $((n - 1))); do
      v="${variants[$(( (i + run - 1) % n ))]}"
      stack="${v%%-*}"
      port="$(free_port)"
      case "$v" in
        *-empty) cp="$stack-empty"; extra=() ;;
        *-disabled) cp="$stack-starter"; read -r -a extra <<<"$(sluice_args startup) --sluice.enabled=false" ;;
        *-redis) cp="$stack-starter"; read -r -a extra <<<"$(sluice_args startup) --sluice.store.redis-uri=$REDIS_URI" ;;
        *-hazelcast) cp="$stack-starter"
          read -r -a extra <<<"$(sluice_args startup) --sluice.store.hazelcast-port=$(free_port) --sluice.store.hazelcast-cluster-name=bench-$RANDOM$RANDOM" ;;
      esac
      log="$LOGS/start-$v-$run.log"
      t0=$(date +%s%N)
      start_app "$log" "$cp" "--server.port=$port" --bench.exit-on-ready=true "${extra[@]}"
      pid=$APP_PID
      wait_ready "$log" "$pid" exits
      t1=$(date +%s%N)
      uptime_ms="$(sed -n 's/^READY uptime_ms=\([0-9]*\).*/\1/p' "$log")"
      started="$(sed -n 's/.*Started HelloApp in \([0-9.]*\) seconds.*/\1/p' "$log")"
      printf '%s\t%s\t%s\t%s\t%s\n' "$v" "$run" "$uptime_ms" "$started" "$(( (t1 - t0) / 1000000 ))" >>"$WORK/startup.tsv"
      printf '   run %s %-20s ready at %5s ms (context %ss)\n' "$run" "$v" "$uptime_ms" "$started"
    done
  done
  LOAD_AFTER="$(loadavg)"
  OUT="$RESULTS_DIR/starter.md"
  {
    echo "# Startup time the Sluice starter adds to an empty Spring Boot app"
    echo
    [[ -n "$NOTE" ]] && { echo "**$NOTE**"; echo; }
    echo "\`$CMD\` on $START_TIME UTC, commit $COMMIT: $(nproc) cores, load average"
    echo "$LOAD_BEFORE before the starts and $LOAD_AFTER after (1, 5, 15 minutes), $JAVA_VERSION, Spring Boot"
    echo "$(sed -n 's|^spring-boot-\([0-9][^/]*\)\.jar$|\1|p' "$WORK/jars-servlet-empty.txt" | head -1), redis-server $REDIS_VERSION."
    echo "Each start its own JVM (\`${JVM_FLAGS[*]}\`), INFO logging to a file; $STARTS starts of each variant, the"
    echo "variants' order rotated every time. Figure: the JVM's uptime (RuntimeMXBean) when ApplicationReadyEvent"
    echo "fires, i.e. from the JVM's start to \"application ready\"; the app then halts."
    echo
    python3 - "$WORK/startup.tsv" <<'EOF'
import statistics, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
by = {}
for v, run, up, started, wall in rows:
    by.setdefault(v, []).append((int(up), float(started or 'nan'), int(wall)))
label = {'empty': 'empty app (no starter)', 'disabled': '+ starter\'s jars, `sluice.enabled=false`', 'redis': '+ starter, Redis store',
         'hazelcast': '+ starter, embedded Hazelcast (the default store)'}
print('| stack | variant | ready at, median ms | min–max ms | added to the empty app, ms (medians) | Spring\'s "Started in", median s | launch to exit, median ms |')
print('|---|---|---:|---:|---:|---:|---:|')
for stack in ('servlet', 'reactive'):
    base = statistics.median(u for u, _, _ in by.get(stack + '-empty', [(0, 0, 0)]))
    for kind in ('empty', 'disabled', 'redis', 'hazelcast'):
        xs = by.get(f'{stack}-{kind}')
        if not xs:
            continue
        ups = [u for u, _, _ in xs]
        med = statistics.median(ups)
        added = '—' if kind == 'empty' else f'{med - base:+,.0f} ({(med - base) / base * 100:+.0f}%)'
        print(f'| {stack} | {label[kind]} | {med:,.0f} | {min(ups):,}–{max(ups):,} | {added} | '
              f'{statistics.median(s for _, s, _ in xs):.2f} | {statistics.median(w for _, _, w in xs):,.0f} |')
print()
print('Every start, ms to ready (in the order run):')
print()
for v in by:
    print(f'- {v}: ' + ', '.join(str(u) for u, _, _ in by[v]))
EOF
    echo
    echo "Classpaths (the same build, jars taken out per variant):"
    echo
    echo "- servlet, empty app: $(jar_count servlet-empty) jars (spring-boot-starter-web's)"
    echo "- servlet, + starter: $(jar_count servlet-starter) jars; beyond the empty app: $(jars_beyond servlet-starter servlet-empty)"
    echo "- reactive, empty app: $(jar_count reactive-empty) jars (spring-boot-starter-webflux's)"
    echo "- reactive, + starter: $(jar_count reactive-starter) jars; beyond the empty app: $(jars_beyond reactive-starter reactive-empty)"
    echo
    echo "Starter configuration in both starter variants: two limits (\`api\` $OPEN_LIMIT/1m, \`tight\` 1/1h), two endpoint"
    echo "rules keyed by \`api-key\`; no Actuator on the classpath (with it, the starter also binds its meters and"
    echo "registers its health indicator, and Actuator's own start-up adds more)."
  } >"$OUT"
  echo ">> wrote $OUT"
fi

# ================================================================== throughput
if [[ ",$PARTS," == *,throughput,* ]]; then
  LOAD_BEFORE="$(loadavg)"
  START_TIME="$(date -u '+%Y-%m-%d %H:%M')"
  servers=(none sluice sluice-exact bucket4j)
  : >"$WORK/throughput.tsv"; : >"$WORK/warnings.txt"
  for stack in servlet reactive; do
    redis-cli -p "$REDIS_PORT" flushall >/dev/null
    declare -A port=()
    started_pids=()
    for s in "${servers[@]}"; do
      port[$s]="$(free_port)"
      case "$s" in
        none) cp="$stack-empty"; extra=() ;;
        sluice) cp="$stack-all"; read -r -a extra <<<"$(sluice_args sluice-batched) --sluice.store.redis-uri=$REDIS_URI" ;;
        sluice-exact) cp="$stack-all"
          read -r -a extra <<<"$(sluice_args sluice-exact) --sluice.store.redis-uri=$REDIS_URI --sluice.sync.batch-size=1" ;;
        bucket4j) cp="$stack-all"
          extra=(--sluice.enabled=false --bench.limiter=bucket4j "--bench.redis-uri=$REDIS_URI" "--bench.limit=$OPEN_LIMIT" --bench.tight-limit=1) ;;
      esac
      start_app "$LOGS/$stack-$s.log" "$cp" "--server.port=${port[$s]}" "${extra[@]}"
      pids+=("$APP_PID"); started_pids+=("$APP_PID")
      wait_ready "$LOGS/$stack-$s.log" "$APP_PID"
    done
    echo ">> throughput, $stack: servers up (${servers[*]}); warm-up $WARMUP each"
    for s in "${servers[@]}"; do
      wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s benchmarks/starter.lua "http://127.0.0.1:${port[$s]}" -- half "$KEYS" >/dev/null
      # a denied request to be sure the tight limit is spent and the open one is not
      code_tight="$(curl -s -o /dev/null -w '%{http_code}' -H 'X-API-Key: key-1' "http://127.0.0.1:${port[$s]}/api/tight")"
      code_open="$(curl -s -o /dev/null -w '%{http_code}' -H 'X-API-Key: key-1' "http://127.0.0.1:${port[$s]}/api/hello")"
      echo "   $s: /api/tight $code_tight, /api/hello $code_open after the warm-up"
    done
    n=${#servers[@]}
    for round in $(seq 1 "$ROUNDS"); do
      for i in $(seq 0 $((n - 1))); do
        s="${servers[$(( (i + round - 1) % n ))]}"
        for case in allowed half; do
          line="$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s benchmarks/starter.lua \
            "http://127.0.0.1:${port[$s]}" -- "$case" "$KEYS" | grep '^STATS ')"
          printf '%s\t%s\t%s\t%s\t%s\n' "$stack" "$round" "$s" "$case" "$line" >>"$WORK/throughput.tsv"
          printf '   %s round %s %-13s %-8s %s\n' "$stack" "$round" "$s" "$case" "${line#STATS }"
        done
      done
    done
    for p in "${started_pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${started_pids[@]}"; do wait "$p" 2>/dev/null || true; done
    for s in "${servers[@]}"; do
      echo "   $s: $(grep -c -E ' (WARN|ERROR) ' "$LOGS/$stack-$s.log" || true) WARN/ERROR lines in $LOGS/$stack-$s.log"
      grep -E ' (WARN|ERROR) ' "$LOGS/$stack-$s.log" | sed "s/^[^ ]* *\(WARN\|ERROR\) .* : /- $stack $s: \1 /" \
        >>"$WORK/warnings.txt" || true
    done
    unset port
  done
  LOAD_AFTER="$(loadavg)"
  OUT="$RESULTS_DIR/starter-throughput.md"
  {
    echo "# The starter's throughput beside a Bucket4j filter and no limiter (servlet and WebFlux)"
    echo
    [[ -n "$NOTE" ]] && { echo "**$NOTE**"; echo; }
    echo "\`$CMD\` on $START_TIME UTC, commit $COMMIT: $(nproc) cores **shared by the"
    echo "servers, redis-server and wrk**, load average $LOAD_BEFORE before and $LOAD_AFTER after (1, 5, 15 minutes),"
    echo "$JAVA_VERSION, redis-server $REDIS_VERSION, Bucket4j $(sed -n 's/^bucket4j_jdk17-core-\(.*\)\.jar$/\1/p' "$WORK/jars-servlet-all.txt")."
    echo "Each server its own JVM (\`${JVM_FLAGS[*]}\`, INFO logging to a file), started once per stack; load"
    echo "\`wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency\` (closed loop, keep-alive), $KEYS API keys in \`X-API-Key\` picked at"
    echo "random, after a $WARMUP warm-up of each server; $ROUNDS rounds, the servers' order rotated each round."
    echo
    echo "- **none**: the app without any limiter (its classpath without the starter or Bucket4j): the ceiling."
    echo "- **sluice**: the starter on Redis with its defaults (sliding window counter, batch 100, sync every 100 ms)."
    echo "- **sluice-exact**: the same with \`sluice.sync.batch-size=1\` (the examples' setting): one Redis script per decision."
    echo "- **bucket4j**: \`Bucket4jFilters\`, a filter (servlet \`Filter\`, WebFlux \`WebFilter\` over the async bucket)"
    echo "  taking one token per request from a Bucket4j bucket in Redis through \`LettuceBasedProxyManager\`"
    echo "  (compare-and-swap, no local optimization), keyed by the API key; **written by hand**, in the shape of"
    echo "  the Bucket4j Spring Boot starter (com.giffing), which is not in this machine's Maven repository."
    echo "  Token bucket, where Sluice's limits are sliding window counters."
    echo
    echo "Limits: \`/api/hello\` $OPEN_LIMIT a minute per API key (every request allowed); \`/api/tight\` 1 an hour per API"
    echo "key, spent in the warm-up. Cases: **allowed**, every request to \`/api/hello\`; **half**, every other request"
    echo "to \`/api/tight\` (denied, 429)."
    echo
    python3 - "$WORK/throughput.tsv" <<'EOF'
import statistics, sys
rows = []
for l in open(sys.argv[1]):
    if not l.strip():
        continue
    stack, rnd, server, case, stats = l.rstrip('\n').split('\t')
    kv = dict(x.split('=') for x in stats.split()[1:])
    rows.append((stack, int(rnd), server, case, {k: float(v) for k, v in kv.items()}))
ceil = {(st, r, c): s for st, r, sv, c, s in rows if sv == 'none'}
print('| stack | case | limiter | requests/s (median of rounds) | ratio to none | p99 ms | p99 ratio to none | denied |')
print('|---|---|---|---:|---:|---:|---:|---:|')
order = ['none', 'sluice', 'sluice-exact', 'bucket4j']
for stack in ('servlet', 'reactive'):
    for case in ('allowed', 'half'):
        for server in order:
            xs = [(r, s) for st, r, sv, c, s in rows if st == stack and sv == server and c == case]
            if not xs:
                continue
            rps = statistics.median(s['rps'] for _, s in xs)
            p99 = statistics.median(s['p99_us'] for _, s in xs) / 1000
            ratios = [s['rps'] / ceil[(stack, r, case)]['rps'] for r, s in xs if (stack, r, case) in ceil]
            pr = [s['p99_us'] / ceil[(stack, r, case)]['p99_us'] for r, s in xs if (stack, r, case) in ceil]
            denied = sum(s['non2xx'] for _, s in xs) / max(1, sum(s['requests'] for _, s in xs))
            def fmt(v):
                return f'{statistics.median(v):.2f}x' + (f' ({min(v):.2f}–{max(v):.2f})' if len(v) > 1 else '')
            name = 'WebFlux' if stack == 'reactive' else 'servlet'
            print(f'| {name} | {case} | {server} | {rps:,.0f} | {fmt(ratios) if server != "none" else "1"} | {p99:.1f} | '
                  f'{fmt(pr) if server != "none" else "1"} | {denied * 100:.1f}% |')
print()
print('Ratios: median over the rounds of (limiter / none in the same round), the rounds\' range in brackets.')
print('"denied": non-2xx answers (429) of all requests in the measured rounds.')
print()
print('Every measurement:')
print()
print('| stack | round | limiter | case | requests | requests/s | p50 ms | p99 ms | max ms | non-2xx | socket errors |')
print('|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|')
for stack, r, server, case, s in rows:
    print(f'| {stack} | {r} | {server} | {case} | {s["requests"]:,.0f} | {s["rps"]:,.0f} | {s["p50_us"] / 1000:.2f} | '
          f'{s["p99_us"] / 1000:.2f} | {s["max_us"] / 1000:.1f} | {s["non2xx"]:,.0f} | {s["socket_errors"]:,.0f} |')
EOF
    echo
    if [[ -s "$WORK/warnings.txt" ]]; then
      echo "WARN and ERROR lines in the servers' logs (a Sluice circuit breaker that opened means some decisions"
      echo "were made by the failure policy, local-share, while the store's calls were too slow or failed):"
      echo
      cat "$WORK/warnings.txt"
    else
      echo "No WARN or ERROR lines in the servers' logs."
    fi
  } >"$OUT"
  echo ">> wrote $OUT"
fi
