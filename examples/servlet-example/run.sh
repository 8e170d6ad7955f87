#!/usr/bin/env bash
# Builds and runs the example service on 127.0.0.1:${1:-8081}.
#   examples/servlet-example/run.sh [port]
#   TRUSTED_PROXIES="10.0.0.0/8" examples/servlet-example/run.sh    # behind a load balancer
#   SLUICE_REDIS=redis://127.0.0.1:6379 examples/servlet-example/run.sh 8081   # limits shared through Redis:
#   SLUICE_REDIS=redis://127.0.0.1:6379 examples/servlet-example/run.sh 8082   # a second instance, one limit
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
./mvnw -B -q -pl examples/servlet-example -am package -DskipTests \
  dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
exec java -cp "examples/servlet-example/target/classes:$(cat examples/servlet-example/target/classpath.txt)" \
  io.sluice.examples.servlet.ExampleService "$@"
