# Sourced by the benchmark scripts (benchmarks/run-*.sh, limiter-sidecar/loadtest.sh) once they have set
# WORK, their scratch folder: the servers a script starts (their pids appended to `pids`) are stopped
# when it exits, however it exits, and WORK is removed; free_port names a free loopback port.
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
