#!/usr/bin/env bash
# Fieldline fuzz campaign (issue 13): server's MqttFuzzIT for as long as DURATION says instead of the
# 12 s of `mvn verify` - Jazzer mutates MQTT 3.1.1 and MQTT 5 packets over plain and TLS sockets to
# a live server on 127.0.0.1 (real Cassandra child JVM) while a bystander device publishes QoS 1; the
# same oracles as the short run, and at the end the campaign must have sent MIN_PACKETS fuzzed
# packets. Stops by itself after DURATION (Jazzer's max_duration), or after EXECUTIONS executions if
# set, or at the first finding. docs/fuzzing.md explains the campaign and keeps its figures.
#
#   bench/fuzz.sh [extra Maven arguments]
#
# Environment (defaults in brackets):
#   DURATION [30m]        how long Jazzer fuzzes (Jazzer duration: 90s, 30m, 2h)
#   EXECUTIONS [0]        stop after this many executions as well (0: no limit)
#   MIN_PACKETS [1000000] fuzzed packets the campaign must have sent, or the run fails
#   LEAK [paranoid]       Netty's leak detection level in the test JVM (paranoid: every buffer)
#   CORPUS [bench/results/fuzz-corpus]  Jazzer's directory: the corpus it grows (kept between runs,
#                         so a run starts where the last one stopped), findings (crash-*) and
#                         reproducers. Empty it to start from the committed seeds only
#   OFFLINE [1]           1: Maven offline (-o)
#
# Results: server/target/fuzz/MqttFuzzIT.txt, copied to bench/results/fuzz-<time>.txt with the
# Maven log next to it (bench/results is not committed).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-30m}
EXECUTIONS=${EXECUTIONS:-0}
MIN_PACKETS=${MIN_PACKETS:-1000000}
LEAK=${LEAK:-paranoid}
CORPUS=${CORPUS:-bench/results/fuzz-corpus}
OFFLINE=${OFFLINE:-1}

mkdir -p bench/results "$CORPUS"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
log="bench/results/fuzz-$stamp.log"
offline=()
if [[ "$OFFLINE" == 1 ]]; then
  offline=(-o)
fi

echo "fuzz campaign: DURATION=$DURATION EXECUTIONS=$EXECUTIONS MIN_PACKETS=$MIN_PACKETS LEAK=$LEAK" \
  "CORPUS=$CORPUS; log $log"
status=0
JAZZER_FUZZ=1 mvn -B "${offline[@]}" verify -pl server -am \
  -Dit.test=MqttFuzzIT -Dtest=NoSuchTest \
  -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false \
  -Djazzer.max_duration="$DURATION" -Djazzer.max_executions="$EXECUTIONS" \
  -Djazzer.internal.basedir="$(cd "$CORPUS" && pwd)" \
  -Dfieldline.fuzz.min-packets="$MIN_PACKETS" \
  -Dio.netty.leakDetection.level="$LEAK" \
  "$@" >"$log" 2>&1 || status=$?

if [[ -f server/target/fuzz/MqttFuzzIT.txt ]]; then
  cp server/target/fuzz/MqttFuzzIT.txt "bench/results/fuzz-$stamp.txt"
  cat "bench/results/fuzz-$stamp.txt"
fi
grep -E "Tests run:|BUILD|FuzzTestFinding|Test unit written" "$log" | tail -n 8 || true
exit "$status"
