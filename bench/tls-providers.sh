#!/usr/bin/env bash
# Which TLS engine should serve Fieldline's MQTT-over-TLS listener: the JDK's (what ships) or
# OpenSSL's (BoringSSL through netty-tcnative-boringssl-static, at the Netty BOM's version)? Runs
# TlsProviderBench (perf-gatling, io.fieldline.perf.tls) once per certificate key and protocol, each
# in a JVM of its own: the server side of full handshakes and of a QoS 1 telemetry flow's records
# (one ~130-byte PUBLISH read, one PUBACK written), measured as CPU time of one thread without
# sockets, the two providers taking turns round after round. The server itself is not touched: it
# keeps the JDK provider; tcnative is on perf-gatling's classpath only.
#
#   bench/tls-providers.sh
#
# Environment (defaults in brackets):
#   KEYS ["ec rsa"]                  server certificate keys (bench/tls-cert.sh): ec (P-256), rsa (2048 bits)
#   PROTOCOLS ["TLSv1.3 TLSv1.2"]    what the client offers (the server offers both, as TlsContext does)
#   ROUND_SECONDS [10]               per provider and round: half full handshakes, half records
#   ROUNDS [5]                       rounds per key and protocol; figures are medians over them
#   WARMUP [20]                      seconds before the rounds of each JVM, half per provider
#   CLIENT [jdk]                     the client's engine, jdk or openssl (its CPU is shown, not compared)
#   JAVA_OPTS [-Xms512m -Xmx512m -XX:+UseG1GC]
# Certificates, one Markdown section per key and protocol and all of them in providers.md go to
# bench/results/<stamp>-tls-providers/. Takes the bench lock (/tmp/fieldline-bench.lock) as
# bench/run.sh does: CPU time of one thread is robust to other load, but not to shared caches.
# Duration: about KEYS × PROTOCOLS × (WARMUP + ROUNDS × 2 × ROUND_SECONDS + 5) s (defaults: about 9 min).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

KEYS=${KEYS:-ec rsa}
PROTOCOLS=${PROTOCOLS:-TLSv1.3 TLSv1.2}
ROUND_SECONDS=${ROUND_SECONDS:-10}
ROUNDS=${ROUNDS:-5}
WARMUP=${WARMUP:-20}
CLIENT=${CLIENT:-jdk}
JAVA_OPTS=${JAVA_OPTS:--Xms512m -Xmx512m -XX:+UseG1GC}
for key in $KEYS; do
  if [ "$key" != ec ] && [ "$key" != rsa ]; then
    echo "tls-providers: KEYS takes ec and rsa, not $key" >&2
    exit 2
  fi
done
for protocol in $PROTOCOLS; do
  if [ "$protocol" != TLSv1.3 ] && [ "$protocol" != TLSv1.2 ]; then
    echo "tls-providers: PROTOCOLS takes TLSv1.3 and TLSv1.2, not $protocol" >&2
    exit 2
  fi
done
if [ "$CLIENT" != jdk ] && [ "$CLIENT" != openssl ]; then
  echo "tls-providers: CLIENT must be jdk or openssl" >&2
  exit 2
fi

# One benchmark at a time (see bench/run.sh).
bench_lock=/tmp/fieldline-bench.lock
if [[ "$(tr '\0' ' ' <"/proc/$PPID/cmdline" 2>/dev/null || true)" != flock*"$bench_lock"* ]]; then
  exec 9>"$bench_lock"
  if ! flock -n 9; then
    echo "[tls-providers $(date -u +%H:%M:%S)] another benchmark holds $bench_lock; waiting for it" >&2
    flock 9
  fi
fi

run="$root/bench/results/$(date -u +%Y%m%dT%H%M%SZ)-tls-providers"
mkdir -p "$run"
log() { echo "[tls-providers $(date -u +%H:%M:%S)] $*" | tee -a "$run/bench.log" >&2; }

# Build perf-gatling when its classes are missing or older than its sources (no install needed: the
# bench runs from target/classes and the runtime classpath file).
bench_class=perf-gatling/target/classes/io/fieldline/perf/tls/TlsProviderBench.class
if [ ! -f "$bench_class" ] || [ ! -f perf-gatling/target/perf.classpath ] \
  || [ -n "$(find pom.xml perf-gatling/pom.xml perf-gatling/src/main -newer "$bench_class" -print -quit)" ]; then
  log "building (mvn -pl perf-gatling -am package, tests skipped)"
  mvn -q -B -DskipTests -pl perf-gatling -am package >"$run/build.log" 2>&1 \
    || { log "build failed, see $run/build.log"; exit 1; }
fi
perf_cp="$root/perf-gatling/target/classes:$(cat perf-gatling/target/perf.classpath)"

cores=$(nproc)
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
cpu_model=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
machine="$cores cores ($cpu_model), $mem RAM, load average before $(cut -d' ' -f1-3 /proc/loadavg)"

for key in $KEYS; do
  "$root/bench/tls-cert.sh" "$run/tls-$key" "$key" >>"$run/bench.log" 2>&1
  key_name="EC P-256"
  [ "$key" = rsa ] && key_name="RSA 2048"
  for protocol in $PROTOCOLS; do
    log "$key_name, $protocol: $ROUNDS rounds of $ROUND_SECONDS s per provider after $WARMUP s of warm-up"
    # shellcheck disable=SC2086
    java $JAVA_OPTS -cp "$perf_cp" io.fieldline.perf.tls.TlsProviderBench \
      --cert-dir "$run/tls-$key" --key-name "$key_name" --protocol "$protocol" \
      --seconds "$ROUND_SECONDS" --rounds "$ROUNDS" --warmup "$WARMUP" --client "$CLIENT" \
      --machine "$machine" \
      --command "KEYS=$key PROTOCOLS=$protocol ROUND_SECONDS=$ROUND_SECONDS ROUNDS=$ROUNDS WARMUP=$WARMUP CLIENT=$CLIENT bench/tls-providers.sh" \
      --out "$run/$key-$protocol.md" >/dev/null 2>>"$run/bench.log" \
      || { log "TlsProviderBench failed, see $run/bench.log"; exit 1; }
    { cat "$run/$key-$protocol.md"; echo; } >>"$run/providers.md"
  done
done
cat "$run/providers.md"
log "done: $run/providers.md"
