#!/usr/bin/env bash
# Builds and runs the example on 127.0.0.1:${PORT:-8080}.
#   examples/spring-boot-webflux/run.sh                                   # embedded Hazelcast store
#   SLUICE_REDIS=redis://127.0.0.1:6379 PORT=8081 examples/spring-boot-webflux/run.sh   # two instances,
#   SLUICE_REDIS=redis://127.0.0.1:6379 PORT=8082 examples/spring-boot-webflux/run.sh   # one limit
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
./mvnw -B -q -pl examples/spring-boot-webflux -am package -DskipTests \
  dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
exec java -cp "examples/spring-boot-webflux/target/classes:$(cat examples/spring-boot-webflux/target/classpath.txt)" \
  io.sluice.examples.webflux.ExampleApplication "$@"
