#!/usr/bin/env bash
# Fieldline benchmark: one scenario against Fieldline (PUBACK after the Cassandra write), the same
# rows through the raw Cassandra driver (the storage ceiling), the same scenario against a local
# Fieldline cluster (scripts/local-cluster.sh: devices spread over its nodes, so most of their
# messages are forwarded to their owner over gRPC), and against Mosquitto and HiveMQ CE (no storage);
# one summary, appended to docs/performance.md.
#
#   bench/run.sh DevicesAtRate | MaxThroughput | ConnectionStorm | ColdStart | GatewayFleet | RpcRoundTrip | LiveUpdates
#
# ColdStart: DevicesAtRate on a freshly started Fieldline (new data directory: cold JVM, cold
# Cassandra). The Gatling JVM is started with the server and waits for the device file; devices are
# provisioned the moment /health/ready answers and the load starts as soon as the file is there.
# Nothing is left out: the first COLD seconds from the first connection are reported as "cold", the
# next COLD seconds as "warm" (also the steady window of the main table). Defaults differ: DEVICES
# 1000, DURATION 2 × COLD, PHASES "fieldline" (raw is never run: it would find a warm Cassandra).
#
# GatewayFleet: gateways (issue #17), from a cold start as ColdStart. GATEWAYS gateway devices
# (POST /api/device with "additionalInfo":{"gateway":true}, DeviceProvisioner --gateways true)
# connect at RAMP/s and each publishes RATE QoS QOS messages/s on v1/gateway/telemetry for DURATION s,
# one in flight per gateway, every message one point (KEYS values, the message's ts) for each of
# its CHILDREN children ("<gateway>-child-<i>", created by Fieldline on the first message: that cost
# is in the cold window). The row check (GatewayRowsCheck) finds every child by name over REST and
# looks up every point of every acknowledged message. The report adds a points table (cold / warm /
# whole run): persisted points/s, PUBACK p50/p99/max, CPU µs per point and points/s per core of the
# server and Cassandra. ColdStart prints the same table (1 point per message) for the device
# comparison at the same point rate (DEVICES = GATEWAYS × CHILDREN × RATE). Defaults differ:
# DURATION 3 × COLD, PHASES "fieldline" (mosquitto and hivemq may be added; raw, cluster and locust
# are refused).
#
# RpcRoundTrip: server-side two-way RPC (issue #14). DEVICES devices connect and answer every RPC
# request at once (respondToRpc: subscribe to v1/devices/me/rpc/request/+, answer on .../response/n
# with an echo of the request); SETTLE s after the last connect a REST caller in the same Gatling run
# starts RPC_RATE calls/s of POST /api/rpc/twoway/{id} (open model, devices round-robin, timeout
# RPC_TIMEOUT ms) for DURATION s, each checked for 200 and its own echo. Reported (RpcReport): round
# trip p50/p95/p99/p99.9/max over all calls, over the first COLD s of calls (fresh server: the run
# starts one) and over the rest; calls lost by status; answered/s and the downlink rate (requests
# the devices received per second); CPU per process. Phases: fieldline (one node) and cluster
# (CLUSTER_NODES >= 2 nodes: every device connects to node 2, every call goes to node 1, so each
# request and answer crosses the cluster). Defaults differ: DEVICES 1000, DURATION 2 × COLD,
# PHASES "fieldline cluster"; KEYS, QOS, RATE do not apply.
#
# LiveUpdates: publish → WebSocket update (issue #15). DEVICES devices connect at RAMP/s and publish
# RATE QoS QOS messages/s each for DURATION s, every message stamped with the generator's clock as
# its "ts"; from the first connection WS_SESSIONS WebSocket sessions (/api/ws, Gatling's WebSocket
# support, logged in as the admin) open SUBSCRIPTIONS live subscriptions in all (TIMESERIES,
# LATEST_TELEMETRY, one device each, spread evenly over the fleet), held until WS_GRACE s after the
# last device stopped, an empty command every 30 s as keep-alive. Every update is matched to the
# message it carries (LiveUpdateStats): publish → update (arrival − ts) and PUBACK → update (arrival
# − that message's PUBACK), updates expected (acknowledged messages newer than a subscription's
# first update, which is not timed) / received / lost. Reported (LiveReport) for the first COLD s
# from the first connection (the server was just started) and the rest, beside the PUBACK latency
# of the same windows; CPU per process; the #15 target (p99 ≤ 50 ms on top of the PUBACK, 0 lost)
# met or missed by how much. Phases: fieldline and cluster (devices on node 2, WebSocket on node
# 1: each update crosses the cluster). Defaults differ: DEVICES 1000, DURATION 2 × COLD, PHASES
# "fieldline". No row check: the timestamps are not the ledger's. With WS_SESSIONS above the
# server's default 20 sessions per user, the server(s) get FIELDLINE_WS_MAX_SESSIONS_PER_USER.
#
# Environment (defaults in brackets):
#   DEVICES [2000]       devices (one MQTT connection each; at most 15000 and the open-files limit)
#   GATEWAYS [50]        GatewayFleet: gateways (one MQTT connection each; DEVICES is set to it)
#   CHILDREN [100]       GatewayFleet: children per gateway, one point each per message (1..1000,
#                        the server's default gateway.max-devices-per-message; a message must fit
#                        its default max-packet-size of 64 KiB: about 500 children with 4 keys)
#   RATE [1]             messages per second per device (DevicesAtRate; MaxThroughput is closed loop)
#   DURATION [60]        seconds each device publishes (at most 3900: an hour-long outage run fits)
#   RAMP [500]           new connections per second
#   SOURCES [DEVICES/100, rounded up]  loopback source addresses the devices connect from
#                        (127.1.x.y; device i uses address i mod SOURCES): the broker sees a fleet
#                        of sites of ~100 devices each, as in the field, instead of one host opening
#                        every connection (Fieldline's per-address connection budget, 500/s with a
#                        burst of 2,000, would otherwise refuse a 10,000-device storm). 0: the OS's
#                        choice, one address. Gatling phases only (Locust connects from 127.0.0.1)
#   KEYS [4]             telemetry keys per message (3..5)
#   QOS [1]              0 or 1
#   ACK_TIMEOUT [10]     seconds the generator waits for a PUBACK before the request is KO (a late
#                        PUBACK then counts nowhere; its message shows as "stored but not acked").
#                        GatewayFleet's first messages wait for their children to be created
#   HOLD [10]            ConnectionStorm: seconds each connection stays open; with STORM=reconnect,
#                        seconds all devices publish (after the ramp) before the drop
#   STORM [connect]      ConnectionStorm variant: connect (connect, 1 publish, hold, disconnect) or
#                        reconnect (all connect and publish QoS QOS at RATE; after RAMP + HOLD every
#                        socket is closed at once without DISCONNECT; every device reconnects at once,
#                        retrying each second while refused, and publishes for DURATION s more;
#                        reports the time until every device publishes again and CONNACK refusals)
#   COLD [60]            ColdStart: seconds of the cold window (then COLD seconds of warm);
#                        RpcRoundTrip: the first COLD seconds of calls; LiveUpdates: the first
#                        COLD seconds of messages from the first connection
#   RPC_RATE [500]       RpcRoundTrip: two-way calls per second
#   RPC_TIMEOUT [10000]  RpcRoundTrip: each call's "timeout" (ms); the server answers 504 after it
#   SETTLE [5]           RpcRoundTrip: seconds between the last device's connect and the first call
#   SUBSCRIPTIONS [100]  LiveUpdates: live subscriptions in all (one device each; at most DEVICES)
#   WS_SESSIONS [10]     LiveUpdates: WebSocket sessions the subscriptions are dealt over (10 × 10:
#                        ten dashboards of ten devices, one user, the server's default limits)
#   WS_GRACE [5]         LiveUpdates: seconds the sessions stay after the last device stopped
#   WARMUP [30]          seconds after the ramp left out of the steady window (JIT, token lookups)
#   PHASES ["fieldline raw mosquitto"]  which phases to run, in this order:
#                        fieldline locust tsung raw cluster mosquitto hivemq
#                        hivemq: embedded HiveMQ Community Edition (perf-gatling/hivemq-broker, a
#                        Maven project of its own: HiveMQ runs on Netty 4.1), one listener on
#                        127.0.0.1, in-memory persistence, every client accepted; nothing stored
#                        locust: never by default; runs right after fieldline (same server and
#                        devices). A load generator we did not write: Locust 2.47.0's own MqttUser
#                        (locust[mqtt], venv cached in bench/results/.venv-locust, installed from
#                        PyPI once), bench/locust/devices.py: one user per device token, DEVICES
#                        users spawned at RAMP/s, 1 QoS 1 message/s each ({"ts":..,"values":{KEYS
#                        keys}}, ~100 bytes), run time DURATION + DEVICES/RAMP s. Latency is Locust's
#                        publish -> PUBACK, raw float times; bench/generator_report.py prints the table
#                        (also in locust.md), rows are checked with StoredRowsCheck on the ledger
#                        the locustfile writes. DevicesAtRate only; RATE and QOS are ignored (1, 1).
#                        A locust-only run appends nothing to docs/performance.md.
#                        tsung: never by default; runs after fieldline and locust (same server and
#                        devices), or alone (PHASES=tsung: the first load after the server's start,
#                        the cold minute included). Debian's Tsung 1.7 (installed with tcpdump and
#                        tshark by apt-get when missing) and its MQTT plugin, a config written for
#                        the run (<run>/tsung.xml, bench/tsung/devices.xml.sh): DEVICES users, one
#                        per device token, arriving at TSUNG_RAMP/s (all in the first second by
#                        default, as Tsung does), each connects (username = token) and publishes
#                        DURATION QoS 1 messages ({"ts":..,"values":{KEYS keys}}, ~100 bytes), one
#                        after the other with 1 s between a PUBACK and the next message. Tsung keeps
#                        means only, so the traffic is captured on 127.0.0.1 (tcpdump) and decoded by
#                        Wireshark's tshark (bench/tsung/wire.py): PUBLISH -> PUBACK and CONNECT ->
#                        CONNACK per connection, and the ledger StoredRowsCheck checks (every
#                        acknowledged message stored). Tsung's own counters (published, pubacked)
#                        are reported beside the capture's. DevicesAtRate only; RATE and QOS are
#                        ignored (1, 1); TLS=1 is refused. A tsung-only run appends nothing to
#                        docs/performance.md; the table is in <run>/tsung.md
#   TSUNG_RAMP [DEVICES] tsung: users arriving per second
#   CLUSTER_NODES [2]    cluster phase: Fieldline nodes (one ZooKeeper, one Cassandra); device i
#                        connects to node (i mod N) + 1, so (N-1)/N of the messages are forwarded
#   RAW_MODE [rows]      raw writer: rows (one INSERT per row) or batch (one batch per message)
#   RAW_INFLIGHT [1024]  raw writer: requests in flight
#   TLS [0]              1: MQTT over TLS. A test CA and a server certificate for 127.0.0.1 are made
#                        for the run (bench/tls-cert.sh, openssl, in <run>/tls); Fieldline opens its
#                        TLS listener with them (JDK provider, what ships; the plain listener stays
#                        open, unused) and Gatling connects there through a Netty SslHandler that
#                        trusts the CA and checks 127.0.0.1. Each device's first connection is a
#                        full handshake; a device resumes only its own session (STORM=reconnect).
#                        mosquitto and hivemq get a TLS listener with the same certificate; raw (no
#                        MQTT) runs unchanged; cluster and locust are refused (their servers and
#                        clients speak clear text only). The command line, the heading and the
#                        column heads of the summary say TLS
#   TLS_KEY [ec]         TLS=1: key of the CA and server certificate: ec (P-256) or rsa (2048 bits)
#   TLS_CLIENT [jdk]     TLS=1: the Gatling client's TLS provider: jdk, or openssl (BoringSSL through
#                        netty-tcnative: less generator CPU beside the server on a small box);
#                        Fieldline's side is always the JDK's
#   EXPORT [none]        DevicesAtRate and ColdStart, PHASES=fieldline only: the change feed and its
#                        export (issue 28, docs/export.md), one run per value, compared by hand:
#                        none: as shipped (feed on, no sink), what every run before EXPORT measured;
#                        off: the server gets FIELDLINE_FEED_ENABLED=false, no feed at all (the
#                        baseline without the feature);
#                        kafka: a real Kafka 4.4 broker (./fieldline kafka: KRaft, one node, a child
#                        JVM with 256 MiB of heap, data in <run>/kafka) is started before the server
#                        and one KAFKA sink ("bench-kafka", filter {}, topic "fieldline-bench",
#                        default batching) is created over REST once the server is ready, before the
#                        devices are provisioned and the load starts. The topic is not created
#                        beforehand: the sink's producer has the broker auto-create it (one
#                        partition, the launcher's num.partitions) on its first send. The broker's
#                        kafka-topics is not on its classpath (kafka-tools is not a dependency of
#                        kafka_2.13), and one partition is what a one-node broker gets anyway; the
#                        first batch waits for the topic (a retry), which shows in the whole-run
#                        export latency, not the steady window's. The server's /metrics is scraped
#                        every 5 s (<run>/fieldline-metrics/) for the steady window. After the load
#                        the script waits (at most EXPORT_DRAIN s) for fieldline_export_lag_records
#                        to reach 0, then reads the topic to its end with a plain consumer
#                        (bench/kafka/CountRecords.java, kafka-clients from the broker's classpath)
#                        and stops the broker. Reported: records delivered
#                        (fieldline_export_delivered_total) and records in the topic against the
#                        messages acknowledged (one record per message here: one ts each), export
#                        latency storage -> delivered p50/p99/p99.9 (upper bounds of the histogram's
#                        buckets) over the steady window and the whole run, the broker's CPU;
#                        kafka-outage: as kafka, and the broker is stopped (SIGTERM: Kafka's
#                        controlled shutdown) OUTAGE_AFTER s after the load starts (the first feed
#                        entry) and started again (same port, same data) OUTAGE s after it went
#                        down, so the load runs on for DURATION - OUTAGE_AFTER - OUTAGE s after the
#                        restart (DURATION >= 2 x OUTAGE_AFTER + OUTAGE). The broker's own start (5 s idle, ~20 s on a loaded 2-core box)
#                        adds to the downtime: the report gives the time without a broker (stop to
#                        ready). Drain: from the restarted broker being ready until the lag is
#                        back to its level before the outage (polled every 0.5 s; the level is the
#                        median of fieldline_export_lag_records over the 10 s before the stop, 0
#                        when the sink kept up); backlog = the lag when the broker is ready again,
#                        drain rate = backlog / drain time (also: records delivered per second
#                        meanwhile, new ones included). The server's heap (jvm_memory_used_bytes
#                        {area="heap"}, and its old generation alone) is sampled every 2 s
#                        from the load start to the drain (<run>/export-samples.txt) and reported
#                        before / during the outage / during the drain
#   OUTAGE [60]          EXPORT=kafka-outage: seconds of broker downtime
#   OUTAGE_AFTER [OUTAGE] EXPORT=kafka-outage: seconds of load before the stop
#   EXPORT_DRAIN [300]   EXPORT=kafka*: at most this many seconds after the load for the export to
#                        deliver everything (lag 0) before the topic is counted
#   APPEND [1]           append the table to docs/performance.md
#   JFR [0]              1: record a JFR profile of the server (and Cassandra) during the run
#   SERVER_JAVA_OPTS     JVM options of the server and of each cluster node (default: those of
#                        ./fieldline)
#   GATLING_XMX [2g]     heap of the Gatling JVM
#   HIVEMQ_JAVA_OPTS     JVM options of the HiveMQ CE broker [-Xms256m -Xmx1g -XX:+UseG1GC]
# Everything binds 127.0.0.1 on free ports, lives in bench/results/<run>/ (data, logs, Gatling
# reports) and is stopped on exit, Ctrl-C or failure. One run at a time per machine: a run waits for
# the lock /tmp/fieldline-bench.lock held by another.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scenario=${1:-}
case "$scenario" in
  DevicesAtRate | MaxThroughput | ConnectionStorm | ColdStart | GatewayFleet | RpcRoundTrip | LiveUpdates) ;;
  *)
    echo "usage: bench/run.sh DevicesAtRate|MaxThroughput|ConnectionStorm|ColdStart|GatewayFleet|RpcRoundTrip|LiveUpdates (see the header for env)" >&2
    exit 2
    ;;
esac

COLD=${COLD:-60}
if [ "$scenario" = ColdStart ]; then
  DEVICES=${DEVICES:-1000}
  DURATION=${DURATION:-$((2 * COLD))}
  PHASES=${PHASES:-fieldline}
fi
if [ "$scenario" = RpcRoundTrip ]; then
  DEVICES=${DEVICES:-1000}
  DURATION=${DURATION:-$((2 * COLD))}
  PHASES=${PHASES:-fieldline cluster}
fi
GATEWAYS=${GATEWAYS:-50}
CHILDREN=${CHILDREN:-100}
if [ "$scenario" = GatewayFleet ]; then
  if ! [[ "$GATEWAYS" =~ ^[1-9][0-9]*$ ]] || ! [[ "$CHILDREN" =~ ^[1-9][0-9]*$ ]] || [ "$CHILDREN" -gt 1000 ]; then
    echo "bench: GATEWAYS must be a positive whole number, CHILDREN 1..1000" >&2
    exit 2
  fi
  DEVICES=$GATEWAYS
  DURATION=${DURATION:-$((3 * COLD))}
  PHASES=${PHASES:-fieldline}
  for phase in $PHASES; do
    case "$phase" in
      fieldline | mosquitto | hivemq) ;;
      *)
        echo "bench: GatewayFleet runs the phases fieldline, mosquitto and hivemq only (not $phase)" >&2
        exit 2
        ;;
    esac
  done
fi
if [ "$scenario" = LiveUpdates ]; then
  DEVICES=${DEVICES:-1000}
  DURATION=${DURATION:-$((2 * COLD))}
  PHASES=${PHASES:-fieldline}
fi
RPC_RATE=${RPC_RATE:-500}
RPC_TIMEOUT=${RPC_TIMEOUT:-10000}
SETTLE=${SETTLE:-5}
SUBSCRIPTIONS=${SUBSCRIPTIONS:-100}
WS_SESSIONS=${WS_SESSIONS:-10}
WS_GRACE=${WS_GRACE:-5}

DEVICES=${DEVICES:-2000}
RATE=${RATE:-1}
DURATION=${DURATION:-60}
RAMP=${RAMP:-500}
SOURCES=${SOURCES:-$(((DEVICES + 99) / 100))}
KEYS=${KEYS:-4}
QOS=${QOS:-1}
ACK_TIMEOUT=${ACK_TIMEOUT:-10}
HOLD=${HOLD:-10}
WARMUP=${WARMUP:-30}
STORM=${STORM:-connect}
PHASES=${PHASES:-fieldline raw mosquitto}
CLUSTER_NODES=${CLUSTER_NODES:-2}
RAW_MODE=${RAW_MODE:-rows}
RAW_INFLIGHT=${RAW_INFLIGHT:-1024}
TLS=${TLS:-0}
TLS_KEY=${TLS_KEY:-ec}
TLS_CLIENT=${TLS_CLIENT:-jdk}
APPEND=${APPEND:-1}
EXPORT=${EXPORT:-none}
OUTAGE=${OUTAGE:-60}
OUTAGE_AFTER=${OUTAGE_AFTER:-$OUTAGE}
EXPORT_DRAIN=${EXPORT_DRAIN:-300}
JFR=${JFR:-0}
GATLING_XMX=${GATLING_XMX:-2g}
HIVEMQ_JAVA_OPTS=${HIVEMQ_JAVA_OPTS:--Xms256m -Xmx1g -XX:+UseG1GC}
ADMIN_USER=admin@fieldline.local
ADMIN_PASSWORD=bench-password-$RANDOM$RANDOM

if [ "$DEVICES" -gt 15000 ] || [ "$DURATION" -gt 3900 ] || [ "$DEVICES" -lt 1 ]; then
  echo "bench: DEVICES must be 1..15000 and DURATION at most 3900 s" >&2
  exit 2
fi
if [ "$scenario" = ConnectionStorm ] || [ "$scenario" = ColdStart ]; then
  PHASES=${PHASES//raw/}
fi
# ColdStart and GatewayFleet: the load starts the moment the devices are provisioned.
cold_flow=0
if [ "$scenario" = ColdStart ] || [ "$scenario" = GatewayFleet ]; then cold_flow=1; fi
if [ "$scenario" = RpcRoundTrip ] || [ "$scenario" = LiveUpdates ]; then
  for phase in $PHASES; do
    if [ "$phase" != fieldline ] && [ "$phase" != cluster ]; then
      echo "bench: $scenario runs the phases fieldline and cluster only (not $phase)" >&2
      exit 2
    fi
  done
  if [[ " $PHASES " == *" cluster "* ]] && [ "${CLUSTER_NODES:-2}" -lt 2 ]; then
    echo "bench: $scenario's cluster phase needs CLUSTER_NODES >= 2 (devices on node 2, REST/WebSocket on node 1)" >&2
    exit 2
  fi
fi
if [ "$scenario" = LiveUpdates ]; then
  if ! [[ "$SUBSCRIPTIONS" =~ ^[1-9][0-9]*$ ]] || ! [[ "$WS_SESSIONS" =~ ^[1-9][0-9]*$ ]] \
    || ! [[ "$WS_GRACE" =~ ^[1-9][0-9]*$ ]]; then
    echo "bench: SUBSCRIPTIONS, WS_SESSIONS and WS_GRACE must be positive whole numbers" >&2
    exit 2
  fi
  if [ "$SUBSCRIPTIONS" -gt "$DEVICES" ] || [ "$WS_SESSIONS" -gt "$SUBSCRIPTIONS" ]; then
    echo "bench: LiveUpdates needs WS_SESSIONS <= SUBSCRIPTIONS <= DEVICES (one device per subscription)" >&2
    exit 2
  fi
  if [ $(((SUBSCRIPTIONS + WS_SESSIONS - 1) / WS_SESSIONS)) -gt 100 ]; then
    echo "bench: at most 100 subscriptions per session (the server's default): raise WS_SESSIONS" >&2
    exit 2
  fi
fi
if [ "$scenario" = RpcRoundTrip ]; then
  if ! [[ "$RPC_RATE" =~ ^[0-9]+([.][0-9]+)?$ ]] || ! [[ "$RPC_TIMEOUT" =~ ^[0-9]+$ ]] || ! [[ "$SETTLE" =~ ^[0-9]+$ ]]; then
    echo "bench: RPC_RATE must be a positive number, RPC_TIMEOUT (ms) and SETTLE (s) whole numbers" >&2
    exit 2
  fi
fi
if ! [[ "$ACK_TIMEOUT" =~ ^[1-9][0-9]*$ ]]; then
  echo "bench: ACK_TIMEOUT must be a positive whole number of seconds" >&2
  exit 2
fi
if [ "$STORM" != connect ] && [ "$STORM" != reconnect ]; then
  echo "bench: STORM must be connect or reconnect" >&2
  exit 2
fi
if ! [[ "$CLUSTER_NODES" =~ ^[1-9]$ ]]; then
  echo "bench: CLUSTER_NODES must be 1..9" >&2
  exit 2
fi
case "$EXPORT" in
  none) ;;
  off | kafka | kafka-outage)
    if [ "$scenario" != DevicesAtRate ] && [ "$scenario" != ColdStart ]; then
      echo "bench: EXPORT=$EXPORT runs with DevicesAtRate and ColdStart only" >&2
      exit 2
    fi
    if [ "$(echo $PHASES)" != fieldline ]; then
      echo "bench: EXPORT=$EXPORT measures the fieldline phase only: set PHASES=fieldline" >&2
      exit 2
    fi
    ;;
  *)
    echo "bench: EXPORT must be none, off, kafka or kafka-outage" >&2
    exit 2
    ;;
esac
if ! [[ "$OUTAGE" =~ ^[1-9][0-9]*$ ]] || ! [[ "$OUTAGE_AFTER" =~ ^[1-9][0-9]*$ ]] \
  || ! [[ "$EXPORT_DRAIN" =~ ^[1-9][0-9]*$ ]]; then
  echo "bench: OUTAGE, OUTAGE_AFTER and EXPORT_DRAIN must be positive whole numbers of seconds" >&2
  exit 2
fi
if [ "$EXPORT" = kafka-outage ] && [ "$DURATION" -lt $((2 * OUTAGE_AFTER + OUTAGE)) ]; then
  echo "bench: EXPORT=kafka-outage needs DURATION >= 2 x OUTAGE_AFTER + OUTAGE (load, broker down, load again; $DURATION < 2 x $OUTAGE_AFTER + $OUTAGE)" >&2
  exit 2
fi
if [ "$TLS" != 0 ] && [ "$TLS" != 1 ]; then
  echo "bench: TLS must be 0 or 1" >&2
  exit 2
fi
if [ "$TLS" = 1 ]; then
  if [ "$TLS_KEY" != ec ] && [ "$TLS_KEY" != rsa ]; then
    echo "bench: TLS_KEY must be ec or rsa" >&2
    exit 2
  fi
  if [ "$TLS_CLIENT" != jdk ] && [ "$TLS_CLIENT" != openssl ]; then
    echo "bench: TLS_CLIENT must be jdk or openssl" >&2
    exit 2
  fi
  if [[ " $PHASES " == *" cluster "* ]] || [[ " $PHASES " == *" locust "* ]] || [[ " $PHASES " == *" tsung "* ]]; then
    echo "bench: TLS=1 runs no cluster, locust or tsung phase (scripts/local-cluster.sh starts its nodes" \
      "without certificates, bench/locust/devices.py and the tsung config connect in clear text): leave them out of PHASES" >&2
    exit 2
  fi
fi

# ---- one benchmark at a time: the machine's cores are what is measured -------------------------
# The lock is released when this shell exits (the descriptor is inherited by the processes it
# starts, all of which it stops on exit). Started as `flock /tmp/fieldline-bench.lock bench/run.sh`,
# the caller already holds it: locking it again on a new descriptor would wait forever.
bench_lock=/tmp/fieldline-bench.lock
if [[ "$(tr '\0' ' ' <"/proc/$PPID/cmdline" 2>/dev/null || true)" != flock*"$bench_lock"* ]]; then
  exec 9>"$bench_lock"
  if ! flock -n 9; then
    echo "[bench $(date -u +%H:%M:%S)] another benchmark holds $bench_lock; waiting for it" >&2
    flock 9
    echo "[bench $(date -u +%H:%M:%S)] lock acquired" >&2
  fi
fi

# ---- open files: the server and the generator each need one descriptor per device -------------
hard=$(ulimit -H -n)
if [ "$hard" != unlimited ]; then ulimit -S -n "$hard"; fi
soft=$(ulimit -S -n)
if [ "$soft" != unlimited ] && [ $((DEVICES + 500)) -gt "$soft" ]; then
  echo "bench: $DEVICES devices need more than the $soft open files allowed (ulimit -n)" >&2
  exit 2
fi

# ---- run directory and bookkeeping -------------------------------------------------------------
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run="$root/bench/results/$stamp-$scenario"
mkdir -p "$run"
log() { echo "[bench $(date -u +%H:%M:%S)] $*" | tee -a "$run/bench.log" >&2; }

declare -a samplers=()
server_pid=""
cluster_dir=""
cassandra_pid=""
mosquitto_pid=""
hivemq_pid=""
locust_pid=""
tsung_pid=""
tcpdump_pid=""
mvn_pid=""
gatling_pid=""
writer_pid=""
kafka_pid=""
kafka_broker_pid=""

stop_pid() { # pid [seconds before SIGKILL]
  local pid=$1 grace=${2:-10}
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((grace * 5))); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
}

stop_cluster() {
  [ -n "$cluster_dir" ] || return 0
  FIELDLINE_DATA_DIR="$cluster_dir" "$root/scripts/local-cluster.sh" stop >>"$run/cluster.log" 2>&1 || true
  cluster_dir=""
}

# Stops the launcher with SIGTERM: its shutdown hook stops the broker (Kafka's controlled shutdown,
# up to 30 s, then SIGKILL); the broker itself is made sure of after.
kafka_stop() {
  stop_pid "$kafka_pid" 45
  kafka_pid=""
  stop_pid "$kafka_broker_pid" 10
  kafka_broker_pid=""
}

# Tsung's controller VM is not a child this shell can signal through $tsung_pid alone (the tsung
# script starts erl, which execs the VM): stop both.
stop_tsung() {
  [ -n "${tsung_pid:-}" ] || return 0
  pkill -TERM -f "beam.*tsung_controller.*config_file.*$run/tsung.xml" 2>/dev/null || true
  stop_pid "$tsung_pid" 5
  tsung_pid=""
}

stop_samplers() {
  local pid
  for pid in "${samplers[@]}"; do kill "$pid" 2>/dev/null || true; done
  samplers=()
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_samplers
  stop_pid "$gatling_pid" 5
  stop_pid "$mvn_pid" 5
  stop_pid "$locust_pid" 5
  stop_tsung
  stop_pid "$tcpdump_pid" 5
  stop_pid "$writer_pid" 5
  stop_pid "$mosquitto_pid" 5
  stop_pid "$hivemq_pid" 15
  stop_pid "$server_pid" 90
  stop_pid "$cassandra_pid" 30
  kafka_stop
  stop_cluster
  if [ "$status" -ne 0 ]; then log "stopped (exit $status); logs in $run"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Once a second: epochMillis label pid utime+stime(ticks) rss(KiB), until the process exits.
sample() { # file label pid
  local file=$1 label=$2 pid=$3 stat rest rss
  while [ -r "/proc/$pid/stat" ]; do
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || break
    rest=${stat##*) }
    # shellcheck disable=SC2086
    set -- $rest
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    echo "$(date +%s%3N) $label $pid $((${12} + ${13})) ${rss:-0}" >>"$file"
    sleep 1
  done
}

# The whole machine, once a second: busy ticks of all CPUs (user nice system irq softirq steal),
# so that the report can show what other processes took during a phase.
sample_machine() { # file
  local file=$1 label cpu_user nice system idle iowait irq softirq steal rest
  while true; do
    read -r label cpu_user nice system idle iowait irq softirq steal rest </proc/stat
    echo "$(date +%s%3N) machine 0 $((cpu_user + nice + system + irq + softirq + steal)) 0" >>"$file"
    sleep 1
  done
}

start_machine_sampler() { # file
  sample_machine "$1" &
  samplers+=($!)
}

start_sampler() { # file label pid
  sample "$@" &
  samplers+=($!)
}

free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % 12000))
    if [ -z "$(ss -Htan "( sport = :$port )" 2>/dev/null)" ]; then
      echo "$port"
      return 0
    fi
  done
  echo "bench: no free port found" >&2
  return 1
}

# Sets picked_port to the first of COUNT consecutive ports that are free on this machine and were not
# picked before in this run (a cluster's node i listens on base + i - 1).
picked_ports=" "
pick_ports() { # count
  local count=$1 base i ok
  for _ in $(seq 1 100); do
    base=$((20000 + RANDOM % 12000))
    ok=1
    for i in $(seq "$base" $((base + count - 1))); do
      if [[ "$picked_ports" == *" $i "* ]] || [ -n "$(ss -Htan "( sport = :$i )" 2>/dev/null)" ]; then
        ok=0
        break
      fi
    done
    if [ "$ok" = 1 ]; then
      for i in $(seq "$base" $((base + count - 1))); do picked_ports+="$i "; done
      picked_port=$base
      return 0
    fi
  done
  echo "bench: no $count free consecutive ports found" >&2
  return 1
}

scrape_metrics() { # file-prefix: /metrics of every cluster node, to <prefix>node-<i>.txt
  local i
  for i in "${!node_http[@]}"; do
    curl -fsS "http://127.0.0.1:${node_http[$i]}/metrics" >"$1node-$((i + 1)).txt" 2>/dev/null \
      || log "cluster: no /metrics from node-$((i + 1))"
  done
}

# Every 5 s until stopped: each cluster node's /metrics to <dir>/node-<i>-<epochMillis>.txt, so that
# the report can take forwarding counts and latency over the steady window.
sample_metrics() { # dir
  local dir=$1 i file
  mkdir -p "$dir"
  while true; do
    for i in "${!node_http[@]}"; do
      file="$dir/node-$((i + 1))-$(date +%s%3N).txt"
      curl -fsS --max-time 2 "http://127.0.0.1:${node_http[$i]}/metrics" >"$file" 2>/dev/null || rm -f "$file"
    done
    sleep 5
  done
}

cassandra_quiet() { # wait (at most 90 s) until Cassandra uses under 0.2 core over 5 s
  local before after
  for _ in $(seq 1 18); do
    before=$(awk '{print $14 + $15}' "/proc/$cassandra_pid/stat")
    sleep 5
    after=$(awk '{print $14 + $15}' "/proc/$cassandra_pid/stat")
    if [ $((after - before)) -lt $((5 * clk_tck / 5)) ]; then return 0; fi
  done
  log "Cassandra still busy after 90 s (compaction?); going on"
}

clk_tck=$(getconf CLK_TCK)
cores=$(nproc)
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
cpu_model=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
jdk=$(java -version 2>&1 | head -1)
describe="$DEVICES devices"
case "$scenario" in
  DevicesAtRate) describe="$describe × $RATE msg/s, QoS $QOS, $KEYS keys, $DURATION s" ;;
  MaxThroughput) describe="$describe closed loop (1 in flight each), QoS $QOS, $KEYS keys, $DURATION s" ;;
  ConnectionStorm)
    if [ "$STORM" = reconnect ]; then
      describe="$describe × $RATE msg/s, QoS $QOS, all sockets dropped (no DISCONNECT) $HOLD s after the ramp, reconnect, $DURATION s more"
    else
      describe="$describe connecting at $RAMP/s, 1 publish each, held $HOLD s"
    fi
    ;;
  ColdStart) describe="$describe × $RATE msg/s from a cold start, QoS $QOS, $KEYS keys, $DURATION s (cold: first $COLD s)" ;;
  GatewayFleet)
    describe="$GATEWAYS gateways × $CHILDREN children, $RATE msg/s per gateway carrying one point per child"
    describe="$describe ($(awk -v g="$GATEWAYS" -v c="$CHILDREN" -v r="$RATE" 'BEGIN {printf "%d", g * c * r}') points/s offered), QoS $QOS, $KEYS keys, $DURATION s from a cold start (cold: first $COLD s)"
    ;;
  RpcRoundTrip) describe="$describe answering RPC, $RPC_RATE two-way calls/s over REST for $DURATION s from a cold start (cold: first $COLD s of calls)" ;;
  LiveUpdates)
    describe="$describe × $RATE msg/s, QoS $QOS, $SUBSCRIPTIONS live subscriptions over $WS_SESSIONS WebSocket sessions, $DURATION s from a cold start (cold: first $COLD s)"
    if [ "$WS_SESSIONS" -gt 20 ]; then describe="$describe, server's sessions per user raised to $WS_SESSIONS"; fi
    ;;
esac
if [ "$TLS" = 1 ]; then
  tls_key_name="EC P-256"
  [ "$TLS_KEY" = rsa ] && tls_key_name="RSA 2048"
  describe="$describe, MQTT over TLS ($tls_key_name certificate)"
fi
command="DEVICES=$DEVICES RATE=$RATE DURATION=$DURATION RAMP=$RAMP SOURCES=$SOURCES WARMUP=$WARMUP KEYS=$KEYS QOS=$QOS RAW_MODE=$RAW_MODE PHASES=\"$PHASES\" bench/run.sh $scenario"
if [ "$scenario" = ConnectionStorm ]; then command="STORM=$STORM HOLD=$HOLD $command"; fi
if [ "$scenario" = ColdStart ]; then command="COLD=$COLD $command"; fi
if [ "$scenario" = GatewayFleet ]; then
  command="GATEWAYS=$GATEWAYS CHILDREN=$CHILDREN RATE=$RATE DURATION=$DURATION COLD=$COLD RAMP=$RAMP SOURCES=$SOURCES KEYS=$KEYS QOS=$QOS PHASES=\"$PHASES\" bench/run.sh $scenario"
fi
if [ "$ACK_TIMEOUT" != 10 ]; then command="ACK_TIMEOUT=$ACK_TIMEOUT $command"; fi
if [ "$JFR" = 1 ]; then command="JFR=1 $command"; fi
if [ "$scenario" = LiveUpdates ]; then
  command="DEVICES=$DEVICES RATE=$RATE QOS=$QOS KEYS=$KEYS SUBSCRIPTIONS=$SUBSCRIPTIONS WS_SESSIONS=$WS_SESSIONS DURATION=$DURATION COLD=$COLD WS_GRACE=$WS_GRACE RAMP=$RAMP SOURCES=$SOURCES PHASES=\"$PHASES\" bench/run.sh $scenario"
fi
if [ "$scenario" = RpcRoundTrip ]; then
  command="DEVICES=$DEVICES RPC_RATE=$RPC_RATE DURATION=$DURATION COLD=$COLD RPC_TIMEOUT=$RPC_TIMEOUT SETTLE=$SETTLE RAMP=$RAMP SOURCES=$SOURCES PHASES=\"$PHASES\" bench/run.sh $scenario"
fi
if [[ " $PHASES " == *" cluster "* ]]; then command="CLUSTER_NODES=$CLUSTER_NODES $command"; fi
if [ "$TLS" = 1 ]; then command="TLS=1 TLS_KEY=$TLS_KEY TLS_CLIENT=$TLS_CLIENT $command"; fi
case "$EXPORT" in
  off) describe="$describe, export off (no change feed)" ;;
  kafka) describe="$describe, export to a Kafka sink" ;;
  kafka-outage) describe="$describe, export to a Kafka sink, broker down $OUTAGE s from $OUTAGE_AFTER s after the load start" ;;
esac
if [ "$EXPORT" = kafka-outage ]; then command="OUTAGE=$OUTAGE OUTAGE_AFTER=$OUTAGE_AFTER $command"; fi
if [ "$EXPORT" != none ]; then command="EXPORT=$EXPORT $command"; fi
{
  echo "scenario=$scenario"
  echo "describe=$describe"
  echo "command=$command"
  echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine=$cores cores ($cpu_model), $mem RAM, $jdk, open files $(ulimit -S -n)"
  echo "loadBefore=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "keys=$KEYS"
  echo "clkTck=$clk_tck"
  echo "clusterNodes=$CLUSTER_NODES"
  echo "runDir=${run#"$root"/}"
  echo "mosquittoVersion=$(mosquitto -h 2>/dev/null | awk '/version/ {print $3; exit}')"
  echo "hivemqVersion=$(sed -n 's:.*<hivemq.version>\(.*\)</hivemq.version>.*:\1:p' perf-gatling/hivemq-broker/pom.xml)"
  if [ "$TLS" = 1 ]; then
    tls_servers="Fieldline's listener on the JDK provider (what ships)"
    if [[ " $PHASES " == *" mosquitto "* ]]; then
      tls_servers="$tls_servers, Mosquitto's on OpenSSL (libssl $(openssl version | awk '{print $2}'))"
    fi
    if [[ " $PHASES " == *" hivemq "* ]]; then tls_servers="$tls_servers, HiveMQ CE's on its JDK default"; fi
    echo "tls=\`TLS=1\`, $tls_key_name server certificate signed by a CA made for the run" \
      "(\`${run#"$root"/}/tls\`); $tls_servers; Gatling client on the $TLS_CLIENT provider, host" \
      "name checked, a full handshake for each device's first connection"
  fi
} >"$run/bench.properties"
log "run $run: $describe"
tls_args=()
if [ "$TLS" = 1 ]; then
  "$root/bench/tls-cert.sh" "$run/tls" "$TLS_KEY" >>"$run/bench.log" 2>&1 \
    || { log "TLS: could not make the certificates (openssl), see $run/bench.log"; exit 1; }
  tls_args=(-DtlsCa="$run/tls/ca.pem" -DtlsProvider="$TLS_CLIENT")
  log "TLS: $tls_key_name CA and server certificate in $run/tls; Gatling client provider $TLS_CLIENT"
fi

# ---- build (server, launcher classpath, perf-gatling) when something changed --------------------
perf_cp_file="$root/perf-gatling/target/perf.classpath"
# EXPORT=kafka*: also the Kafka launcher and the broker's classpath (what ./fieldline kafka runs).
build_modules=perf-gatling
kafka_launcher_cp=kafka-embedded/launcher/target/launcher.classpath
kafka_cp_file=kafka-embedded/runtime/target/kafka.classpath
kafka_stale=0
if [[ "$EXPORT" == kafka* ]] && { [ ! -f "$kafka_launcher_cp" ] || [ ! -f "$kafka_cp_file" ] \
  || [ -n "$(find pom.xml kafka-embedded -name target -prune -o -type f -newer "$kafka_launcher_cp" -print -quit)" ]; }; then
  build_modules=perf-gatling,kafka-embedded/launcher
  kafka_stale=1
fi
if [ "$kafka_stale" = 1 ] || [ ! -f "$perf_cp_file" ] || [ ! -f server/target/server.classpath ] \
  || [ ! -f cassandra-embedded/runtime/target/cassandra.classpath ] \
  || [ -n "$(find pom.xml ./*/pom.xml ./*/src cassandra-embedded/*/src -newer "$perf_cp_file" -print -quit 2>/dev/null)" ]; then
  log "building (mvn -pl $build_modules -am install, tests skipped)"
  mvn -q -B -DskipTests -pl "$build_modules" -am install >"$run/build.log" 2>&1 \
    || { log "build failed, see $run/build.log"; exit 1; }
fi
# The dependency plugin rewrites a classpath file only when the classpath changed, but these files
# are also what ./fieldline, scripts/local-cluster.sh and this script compare sources with: mark
# them fresh, or each of them would rebuild (whatever was edited since) in the middle of the run.
# Called again before each phase that starts servers, so every phase runs the code built here.
mark_built() {
  touch "$perf_cp_file" server/target/server.classpath cluster/target/zookeeper.classpath \
    cassandra-embedded/runtime/target/cassandra.classpath
  if [[ "$EXPORT" == kafka* ]]; then touch "$kafka_launcher_cp"; fi
}
mark_built
perf_cp="$root/perf-gatling/target/classes:$(cat "$perf_cp_file")"
# HiveMQ CE: a Maven project outside the reactor (its Netty 4.1 must not meet the parent's Netty BOM).
hivemq_dir="$root/perf-gatling/hivemq-broker"
if [[ " $PHASES " == *" hivemq "* ]] && { [ ! -f "$hivemq_dir/target/broker.classpath" ] \
  || [ -n "$(find "$hivemq_dir/pom.xml" "$hivemq_dir/src" -newer "$hivemq_dir/target/broker.classpath" -print -quit)" ]; }; then
  log "building the HiveMQ CE launcher (mvn -f perf-gatling/hivemq-broker/pom.xml package)"
  mvn -q -B -f "$hivemq_dir/pom.xml" package >"$run/build-hivemq.log" 2>&1 \
    || { log "HiveMQ build failed, see $run/build-hivemq.log"; exit 1; }
  touch "$hivemq_dir/target/broker.classpath"
fi

bench_java() { # main class and arguments
  java -Xmx1g -cp "$perf_cp" "$@"
}

check_rows() { # phase cql-port feeder: every message the phase's ledger acknowledged is in Cassandra?
  local phase=$1 port=$2 feeder=$3
  [ -f "$run/$phase-ledger.csv" ] || return 0
  if [ "$scenario" = GatewayFleet ]; then
    # Every point of every acknowledged message in its child's rows; children found over REST.
    log "$phase: finding the children over REST and counting their stored rows"
    bench_java io.fieldline.perf.verify.GatewayRowsCheck --url "$rest_url" \
      --user "$ADMIN_USER" --password "$ADMIN_PASSWORD" --cql "127.0.0.1:$port" \
      --keyspace fieldline --feeder "$feeder" --ledger "$run/$phase-ledger.csv" \
      --children "$CHILDREN" --keys "$KEYS" --out "$run/$phase-check.json" 2>>"$run/bench.log" \
      | tee -a "$run/bench.log" >&2 || log "$phase: row check failed"
    return 0
  fi
  log "$phase: counting stored rows"
  bench_java io.fieldline.perf.verify.StoredRowsCheck --cql "127.0.0.1:$port" \
    --keyspace fieldline --feeder "$feeder" --ledger "$run/$phase-ledger.csv" \
    --keys "$KEYS" --out "$run/$phase-check.json" 2>>"$run/bench.log" | tee -a "$run/bench.log" >&2 \
    || log "$phase: row check failed"
}

gatling() { # phase ports [feeder]: the scenario with gatling:test against 127.0.0.1:port[,port...]
  gatling_start "$@"
  gatling_finish "$1"
}

# Starts the Gatling run in the background (the caller goes on once its JVM is up); with
# await_feeder=1 the simulation waits (file-system events, at most 10 min) for the feeder to appear.
await_feeder=0
rest_url=""
gatling_start() { # phase ports [feeder]
  local phase=$1 ports=$2 feeder=${3:-$run/devices.csv} port_arg
  # Several ports (a cluster's nodes): Gatling user i connects to the (i mod n)-th.
  if [[ "$ports" == *,* ]]; then port_arg="-Dports=$ports"; else port_arg="-Dport=$ports"; fi
  # RpcRoundTrip: the REST caller's node, login and rate; no ledger (nothing is stored).
  # LiveUpdates: the WebSocket node, login and subscriptions; no ledger (its timestamps are the
  # generator's clock, not the ledger's baseTs + n).
  local -a scenario_args=(-Dledger="$run/$phase-ledger.csv")
  if [ "$scenario" = RpcRoundTrip ]; then
    scenario_args=(-DhttpUrl="$rest_url" -DrestUser="$ADMIN_USER" -DrestPassword="$ADMIN_PASSWORD"
      -DrpcRate="$RPC_RATE" -DrpcTimeout="$RPC_TIMEOUT" -Dsettle="$SETTLE")
  fi
  if [ "$scenario" = LiveUpdates ]; then
    scenario_args=(-DhttpUrl="$rest_url" -DrestUser="$ADMIN_USER" -DrestPassword="$ADMIN_PASSWORD"
      -Dsubscriptions="$SUBSCRIPTIONS" -DwsSessions="$WS_SESSIONS" -DwsGrace="$WS_GRACE")
  fi
  log "$phase: $scenario via gatling:test (port $ports${tls_args[*]:+, TLS})"
  mvn -B -pl perf-gatling gatling:test \
    -Dgatling.simulationClass="io.fieldline.perf.simulations.$scenario" \
    -Dgatling.resultsFolder="$run/gatling-$phase" -Dgatling.jvmXmx="$GATLING_XMX" \
    -Dhost=127.0.0.1 "$port_arg" -Dfeeder="$feeder" -Ddevices="$DEVICES" \
    -DratePerDevice="$RATE" -Dduration="$DURATION" -DrampConnectionsPerSec="$RAMP" \
    -Dkeys="$KEYS" -Dqos="$QOS" -Dhold="$HOLD" -Dwarmup="$WARMUP" -Dstorm="$STORM" -Dcold="$COLD" \
    -DsourceAddresses="$SOURCES" -Dchildren="$CHILDREN" -DackTimeout="$ACK_TIMEOUT" "${tls_args[@]}" \
    -DawaitFeeder=$((await_feeder * 600)) -Dsummary="$run/$phase-summary.json" "${scenario_args[@]}" \
    >"$run/gatling-$phase.log" 2>&1 &
  mvn_pid=$!
  gatling_pid=""
  for _ in $(seq 1 240); do
    gatling_pid=$(pgrep -P "$mvn_pid" java | head -1 || true)
    [ -n "$gatling_pid" ] && break
    kill -0 "$mvn_pid" 2>/dev/null || break
    sleep 0.5
  done
  if [ -n "$gatling_pid" ]; then start_sampler "$run/cpu-$phase.txt" generator "$gatling_pid"; fi
}

gatling_finish() { # phase: waits for the run gatling_start began
  local phase=$1 status=0
  wait "$mvn_pid" || status=$?
  mvn_pid=""
  gatling_pid=""
  # A non-zero status is Gatling's "KO > 0" assertion as well as a crash: the summary tells which.
  if [ ! -f "$run/$phase-summary.json" ]; then
    log "$phase: Gatling produced no summary (status $status), see $run/gatling-$phase.log"
    return 1
  fi
  grep -E "^[A-Za-z]+: (connects|subscriptions)=" "$run/gatling-$phase.log" | sed "s/^/[bench] $phase: /" >&2 || true
}

# ---- export (EXPORT): the Kafka broker, the sink, the outage and the drain ---------------------
kafka_topic=fieldline-bench
kafka_sink=bench-kafka
export_props="$run/export.properties"
export_scrape="$run/export-scrape.txt"

# Starts ./fieldline kafka on $kafka_port with its data in <run>/kafka (after a stop: the same port,
# data and controller port) and waits for its "kafka bootstrap=... pid=... dir=..." line; the
# broker's CPU goes into the fieldline phase's samples under LABEL (a restarted broker is another
# process: another label).
kafka_start() { # label
  local label=$1 before
  : >>"$run/kafka-launcher.log"
  before=$(grep -c '^kafka bootstrap=' "$run/kafka-launcher.log" || true)
  ./fieldline kafka --port "$kafka_port" --data-dir "$run/kafka" >>"$run/kafka-launcher.log" 2>&1 &
  kafka_pid=$!
  for _ in $(seq 1 360); do
    [ "$(grep -c '^kafka bootstrap=' "$run/kafka-launcher.log" || true)" -gt "$before" ] && break
    kill -0 "$kafka_pid" 2>/dev/null || break
    sleep 0.25
  done
  if [ "$(grep -c '^kafka bootstrap=' "$run/kafka-launcher.log" || true)" -le "$before" ]; then
    log "kafka: the broker did not start; tail of $run/kafka-launcher.log and $run/kafka/kafka.log:"
    tail -10 "$run/kafka-launcher.log" >&2
    tail -20 "$run/kafka/kafka.log" >&2 2>/dev/null || true
    exit 1
  fi
  kafka_broker_pid=$(sed -n 's/^kafka bootstrap=.* pid=\([0-9]*\) .*/\1/p' "$run/kafka-launcher.log" | tail -1)
  start_sampler "$run/cpu-fieldline.txt" "$label" "$kafka_broker_pid"
  log "kafka: broker ready on 127.0.0.1:$kafka_port (launcher pid $kafka_pid, broker pid $kafka_broker_pid)"
}

# Logs in as the admin and creates the KAFKA sink (POST /api/fieldline/sinks); its answer goes to
# <run>/export-sink.json.
create_sink() {
  local token status body
  token=$(curl -fsS -X POST "http://127.0.0.1:$http_port/api/auth/login" -H 'Content-Type: application/json' \
    -d "{\"username\":\"$ADMIN_USER\",\"password\":\"$ADMIN_PASSWORD\"}" 2>>"$run/bench.log" \
    | sed -n 's/.*"token" *: *"\([^"]*\)".*/\1/p')
  if [ -z "$token" ]; then
    log "export: could not log in to create the sink"
    exit 1
  fi
  body="{\"name\":\"$kafka_sink\",\"type\":\"KAFKA\",\"filter\":{},\"configuration\":"
  body="$body{\"bootstrapServers\":\"127.0.0.1:$kafka_port\",\"topic\":\"$kafka_topic\"}}"
  status=$(curl -sS -o "$run/export-sink.json" -w '%{http_code}' -X POST \
    "http://127.0.0.1:$http_port/api/fieldline/sinks" -H "X-Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d "$body" 2>>"$run/bench.log" || true)
  if [ "$status" != 200 ]; then
    log "export: the sink was refused (HTTP $status): $(cat "$run/export-sink.json" 2>/dev/null)"
    exit 1
  fi
  echo "sinkCreatedEpochMillis=$(date +%s%3N)" >>"$export_props"
  log "export: KAFKA sink $kafka_sink -> 127.0.0.1:$kafka_port, topic $kafka_topic (auto-created on the first send)"
}

# Sum of every series of metric NAME in a saved /metrics scrape, as an integer.
metric_sum() { # file name
  awk -v n="$2" 'index($0, n "{") == 1 || index($0, n " ") == 1 { s += $NF } END { printf "%.0f\n", s }' "$1"
}

# The server's /metrics into $export_scrape; false when it did not answer.
export_scrape_now() {
  curl -fsS --max-time 2 "http://127.0.0.1:$http_port/metrics" >"$export_scrape" 2>/dev/null
}

# Every 5 s until stopped: the server's /metrics to <dir>/server-<epochMillis>.txt, so that the
# report can take the export latency histogram over the steady window.
sample_server_metrics() { # dir
  local dir=$1 file
  mkdir -p "$dir"
  while true; do
    file="$dir/server-$(date +%s%3N).txt"
    curl -fsS --max-time 2 "http://127.0.0.1:$http_port/metrics" >"$file" 2>/dev/null || rm -f "$file"
    sleep 5
  done
}

# One line of <run>/export-samples.txt (epochMillis stage lagRecords delivered heapUsedBytes
# oldGenUsedBytes), also left in s_millis s_lag s_delivered; false when the server did not answer.
export_sample() { # stage
  local heap old
  s_millis=$(date +%s%3N)
  export_scrape_now || return 1
  s_lag=$(metric_sum "$export_scrape" fieldline_export_lag_records)
  s_delivered=$(metric_sum "$export_scrape" fieldline_export_delivered_total)
  heap=$(awk 'index($0, "jvm_memory_used_bytes{") == 1 && /area="heap"/ { s += $NF } END { printf "%.0f\n", s }' "$export_scrape")
  # The old generation (G1 Old Gen): what survived collections, without the young churn.
  old=$(awk 'index($0, "jvm_memory_used_bytes{") == 1 && /area="heap"/ && /Old Gen/ { s += $NF } END { printf "%.0f\n", s }' "$export_scrape")
  echo "$s_millis $1 $s_lag $s_delivered $heap $old" >>"$run/export-samples.txt"
}

# EXPORT=kafka-outage, while the load runs: waits for the load's first feed entry, stops the broker
# OUTAGE_AFTER s later, starts it again OUTAGE s after the stop, and measures the drain (see the
# header).
export_outage() {
  local load_start stop_at restart_at level backlog delivered0 ready first="" drained="" i
  local -a before_lags=()
  : >"$run/export-samples.txt"
  for _ in $(seq 1 2400); do
    if export_scrape_now && [ "$(metric_sum "$export_scrape" fieldline_feed_entries_total)" -gt 0 ]; then break; fi
    kill -0 "$mvn_pid" 2>/dev/null || { log "export: the load ended before its first message was stored"; return 0; }
    sleep 0.5
  done
  load_start=$(date +%s%3N)
  stop_at=$((load_start + OUTAGE_AFTER * 1000))
  log "export: load started (first feed entry); the broker stops in $OUTAGE_AFTER s"
  while [ "$(date +%s%3N)" -lt "$stop_at" ]; do
    if export_sample before && [ "$s_millis" -ge $((stop_at - 10000)) ]; then before_lags+=("$s_lag"); fi
    sleep 2
  done
  # The lag's usual level: the median of the samples of the 10 s before the stop.
  level=0
  if [ "${#before_lags[@]}" -gt 0 ]; then
    level=$(printf '%s\n' "${before_lags[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  fi
  log "export: stopping the Kafka broker for $OUTAGE s (lag before: median $level records)"
  echo "loadStartEpochMillis=$load_start" >>"$export_props"
  echo "brokerStopEpochMillis=$(date +%s%3N)" >>"$export_props"
  kafka_stop
  echo "brokerDownEpochMillis=$(date +%s%3N)" >>"$export_props"
  restart_at=$((stop_at + OUTAGE * 1000))
  while [ "$(date +%s%3N)" -lt "$restart_at" ]; do
    export_sample outage || true
    sleep 2
  done
  echo "brokerRestartEpochMillis=$(date +%s%3N)" >>"$export_props"
  log "export: starting the Kafka broker again"
  kafka_start kafka-restarted
  ready=$(date +%s%3N)
  export_sample drain || true
  backlog=${s_lag:-0}
  delivered0=${s_delivered:-0}
  for i in $(seq 1 $((EXPORT_DRAIN * 2))); do
    sleep 0.5
    export_sample drain || continue
    if [ -z "$first" ] && [ "$s_delivered" -gt "$delivered0" ]; then first=$s_millis; fi
    if [ "$s_lag" -le "$level" ]; then
      drained=$s_millis
      break
    fi
  done
  {
    echo "brokerReadyEpochMillis=$ready"
    echo "drainLevelRecords=$level"
    echo "backlogRecords=$backlog"
    echo "deliveredAtReady=$delivered0"
    echo "firstDeliveryEpochMillis=$first"
    echo "drainedEpochMillis=$drained"
    echo "deliveredAtDrained=$([ -n "$drained" ] && echo "$s_delivered")"
  } >>"$export_props"
  if [ -n "$drained" ]; then
    log "export: drained $backlog records in $(awk -v d=$((drained - ready)) 'BEGIN { printf "%.1f", d / 1000 }') s after the broker was ready"
  else
    log "export: not drained within $EXPORT_DRAIN s of the restart (lag $s_lag, level $level)"
  fi
}

# EXPORT=kafka*, after the load: waits (at most EXPORT_DRAIN s) for the lag to reach 0.
export_settle() {
  local start lag=-1
  start=$(date +%s%3N)
  for _ in $(seq 1 "$EXPORT_DRAIN"); do
    if export_scrape_now; then
      lag=$(metric_sum "$export_scrape" fieldline_export_lag_records)
      [ "$lag" = 0 ] && break
    fi
    sleep 1
  done
  echo "settleSeconds=$(awk -v d=$(($(date +%s%3N) - start)) 'BEGIN { printf "%.1f", d / 1000 }')" >>"$export_props"
  echo "settleLagRecords=$lag" >>"$export_props"
  [ "$lag" = 0 ] || log "export: lag still $lag records $EXPORT_DRAIN s after the load"
}

# EXPORT=kafka*: reads the topic to its end and counts its records (bench/kafka/CountRecords.java
# on the broker's classpath).
count_topic() {
  local out
  log "export: counting the records of topic $kafka_topic"
  out=$(java -Xmx256m -cp "$(cat "$kafka_cp_file")" "$root/bench/kafka/CountRecords.java" \
    "127.0.0.1:$kafka_port" "$kafka_topic" 120 2>>"$run/bench.log" | grep '^records=' || true)
  if [ -z "$out" ]; then
    log "export: topic count failed (see $run/bench.log); skipped"
    echo "topicCheck=failed, see bench.log" >>"$export_props"
    return 0
  fi
  log "export: topic $kafka_topic: $out"
  echo "topicRecords=$(echo "$out" | sed -n 's/^records=\([0-9]*\).*/\1/p')" >>"$export_props"
  echo "topicCheck=$out" >>"$export_props"
}

# ---- devices and the Fieldline server ---------------------------------------------------------
# LiveUpdates with more sessions than the server's default per user (20): the server(s) allow them.
ws_env=()
if [ "$scenario" = LiveUpdates ] && [ "$WS_SESSIONS" -gt 20 ]; then
  ws_env=(FIELDLINE_WS_MAX_SESSIONS_PER_USER="$WS_SESSIONS")
fi
needs_fieldline=0
case " $PHASES " in *" fieldline "* | *" raw "* | *" locust "* | *" tsung "*) needs_fieldline=1 ;; esac
for generator in locust tsung; do
  if [[ " $PHASES " == *" $generator "* ]] && [ "$scenario" != DevicesAtRate ]; then
    echo "bench: the $generator phase runs DevicesAtRate only" >&2
    exit 2
  fi
done

if [ "$needs_fieldline" = 1 ]; then
  mqtt_port=$(free_port)
  http_port=$(free_port)
  cql_port=$(free_port)
  storage_port=$(free_port)
  # The port Gatling's fieldline phase connects to: the TLS listener's under TLS=1.
  fieldline_mqtt=$mqtt_port
  tls_env=()
  if [ "$TLS" = 1 ]; then
    fieldline_mqtt=$(free_port)
    tls_env=(FIELDLINE_MQTT_TLS_CERT="$run/tls/server.pem" FIELDLINE_MQTT_TLS_KEY="$run/tls/server.key"
      FIELDLINE_MQTT_TLS_PORT="$fieldline_mqtt")
  fi
  # EXPORT: the feed off, or a Kafka broker up before the server (its sink is created once the
  # server is ready).
  export_env=()
  if [ "$EXPORT" != none ]; then echo "export=$EXPORT" >"$export_props"; fi
  if [ "$EXPORT" = off ]; then export_env=(FIELDLINE_FEED_ENABLED=false); fi
  if [[ "$EXPORT" == kafka* ]]; then
    kafka_port=$(free_port)
    {
      echo "kafkaBootstrap=127.0.0.1:$kafka_port"
      echo "topic=$kafka_topic"
      echo "sink=$kafka_sink"
      echo "outageSeconds=$([ "$EXPORT" = kafka-outage ] && echo "$OUTAGE")"
    } >>"$export_props"
    log "kafka: starting a broker (./fieldline kafka --port $kafka_port --data-dir $run/kafka)"
    mark_built
    kafka_start kafka
  fi
  log "starting Fieldline on embedded defaults (mqtt $mqtt_port$([ "$TLS" = 1 ] && echo ", mqtt over TLS $fieldline_mqtt")," \
    "http $http_port, cql $cql_port)"
  server_opts=${SERVER_JAVA_OPTS:--Xms256m -Xmx1g -XX:+UseG1GC}
  mark_built
  env "${tls_env[@]}" "${ws_env[@]}" "${export_env[@]}" \
    FIELDLINE_DATA_DIR="$run/data" FIELDLINE_MQTT_HOST=127.0.0.1 FIELDLINE_MQTT_PORT=$mqtt_port \
    FIELDLINE_HTTP_HOST=127.0.0.1 FIELDLINE_HTTP_PORT=$http_port \
    FIELDLINE_EMBEDDED_CASSANDRA_CQL_PORT=$cql_port FIELDLINE_EMBEDDED_CASSANDRA_STORAGE_PORT=$storage_port \
    FIELDLINE_ADMIN_USERNAME=$ADMIN_USER FIELDLINE_ADMIN_PASSWORD=$ADMIN_PASSWORD \
    FIELDLINE_DEMO_DEVICE_ENABLED=false JAVA_OPTS="$server_opts" \
    ./fieldline start >"$run/fieldline.log" 2>&1 &
  server_pid=$!
  if [ "$cold_flow" = 1 ] && [[ " $PHASES " == *" fieldline "* ]]; then
    # The load generator gets ready while the server starts: it waits for devices.csv.
    await_feeder=1
    gatling_start fieldline "$fieldline_mqtt"
    await_feeder=0
  fi
  ready=0
  for _ in $(seq 1 600); do
    kill -0 "$server_pid" 2>/dev/null || break
    if [ -z "$cassandra_pid" ] && [ -f "$run/data/cassandra/cassandra.pid" ]; then
      cassandra_pid=$(cat "$run/data/cassandra/cassandra.pid")
    fi
    if curl -fsS "http://127.0.0.1:$http_port/health/ready" >/dev/null 2>&1; then ready=1; break; fi
    sleep 0.5
  done
  if [ "$ready" != 1 ]; then
    log "Fieldline did not become ready; tail of $run/fieldline.log:"
    tail -20 "$run/fieldline.log" >&2
    exit 1
  fi
  echo "readyEpochMillis=$(date +%s%3N)" >>"$run/bench.properties"
  [ -n "$cassandra_pid" ] || cassandra_pid=$(cat "$run/data/cassandra/cassandra.pid")
  log "Fieldline ready (server pid $server_pid, Cassandra pid $cassandra_pid)"
  if [[ "$EXPORT" == kafka* ]]; then create_sink; fi
  if [ "$cold_flow" = 1 ] && [[ " $PHASES " == *" fieldline "* ]]; then
    start_machine_sampler "$run/cpu-fieldline.txt"
    start_sampler "$run/cpu-fieldline.txt" server "$server_pid"
    start_sampler "$run/cpu-fieldline.txt" cassandra "$cassandra_pid"
    if [[ "$EXPORT" == kafka* ]]; then
      sample_server_metrics "$run/fieldline-metrics" &
      samplers+=($!)
    fi
  fi
  # Written under another name and renamed: a waiting simulation never reads half a file.
  provision_args=(--prefix bench-)
  if [ "$scenario" = GatewayFleet ]; then provision_args=(--prefix bench-gw- --gateways true); fi
  bench_java io.fieldline.perf.provision.DeviceProvisioner --url "http://127.0.0.1:$http_port" \
    --user "$ADMIN_USER" --password "$ADMIN_PASSWORD" --count "$DEVICES" "${provision_args[@]}" \
    --out "$run/devices.csv.part" 2>>"$run/bench.log" | tee -a "$run/bench.log" >&2
  mv "$run/devices.csv.part" "$run/devices.csv"
else
  # Mosquitto and/or HiveMQ only: any tokens will do.
  { echo "name,id,token"; for i in $(seq 0 $((DEVICES - 1))); do echo "bench-$i,-,bench-token-$i"; done; } >"$run/devices.csv"
fi

# ---- phase 1: Fieldline -----------------------------------------------------------------------
if [[ " $PHASES " == *" fieldline "* ]]; then
  if [ "$cold_flow" != 1 ]; then
    start_machine_sampler "$run/cpu-fieldline.txt"
    start_sampler "$run/cpu-fieldline.txt" server "$server_pid"
    start_sampler "$run/cpu-fieldline.txt" cassandra "$cassandra_pid"
    if [[ "$EXPORT" == kafka* ]]; then
      sample_server_metrics "$run/fieldline-metrics" &
      samplers+=($!)
    fi
  fi
  if [ "$JFR" = 1 ]; then
    jcmd "$server_pid" JFR.start name=bench settings=profile filename="$run/server.jfr" >/dev/null
    jcmd "$cassandra_pid" JFR.start name=bench settings=profile filename="$run/cassandra.jfr" >/dev/null 2>&1 || true
  fi
  rest_url="http://127.0.0.1:$http_port"
  if [ "$cold_flow" != 1 ]; then gatling_start fieldline "$fieldline_mqtt"; fi
  if [ "$EXPORT" = kafka-outage ]; then export_outage; fi
  gatling_finish fieldline || true
  if [[ "$EXPORT" == kafka* ]]; then export_settle; fi
  if [ "$JFR" = 1 ]; then
    jcmd "$server_pid" JFR.stop name=bench >/dev/null || true
    jcmd "$cassandra_pid" JFR.stop name=bench >/dev/null 2>&1 || true
  fi
  curl -fsS "http://127.0.0.1:$http_port/metrics" >"$run/fieldline-metrics.txt" 2>/dev/null || true
  stop_samplers
  check_rows fieldline "$cql_port" "$run/devices.csv"
  if [[ "$EXPORT" == kafka* ]]; then
    count_topic
    log "kafka: stopping the broker"
    kafka_stop
  fi
fi

# ---- phase 1b: the same devices driven by Locust's MqttUser (a generator we did not write) ------
if [[ " $PHASES " == *" locust "* ]]; then
  locust_venv="$root/bench/results/.venv-locust"
  if [ ! -x "$locust_venv/bin/locust" ] || ! "$locust_venv/bin/python" -c 'import locust, paho.mqtt, sys; sys.exit(locust.__version__ != "2.47.0")' 2>/dev/null; then
    log "locust: installing locust[mqtt]==2.47.0 into $locust_venv (pip, PyPI)"
    { python3 -m venv "$locust_venv" && "$locust_venv/bin/pip" install -q "locust[mqtt]==2.47.0"; } >>"$run/bench.log" 2>&1 \
      || { log "locust: install failed, see $run/bench.log"; exit 1; }
  fi
  cassandra_quiet
  locust_time=$((DURATION + (DEVICES + RAMP - 1) / RAMP))
  locust_version=$("$locust_venv/bin/python" -c 'import locust; print(locust.__version__)')
  {
    echo "locustVersion=$locust_version"
    echo "describe=$DEVICES users (device tokens) × 1 msg/s, QoS 1, $KEYS keys, spawn $RAMP/s, run time $locust_time s"
    echo "command=DEVICES=$DEVICES DURATION=$DURATION RAMP=$RAMP KEYS=$KEYS PHASES=\"$PHASES\" bench/run.sh $scenario"
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "runDir=${run#"$root"/}"
    echo "clkTck=$clk_tck"
    echo "cores=$cores"
  } >"$run/locust.properties"
  log "locust: $DEVICES MqttUsers at $RAMP/s for $locust_time s against mqtt $mqtt_port (Locust $locust_version)"
  start_machine_sampler "$run/cpu-locust.txt"
  start_sampler "$run/cpu-locust.txt" server "$server_pid"
  start_sampler "$run/cpu-locust.txt" cassandra "$cassandra_pid"
  LOCUST_MQTT_HOST=127.0.0.1 LOCUST_MQTT_PORT=$mqtt_port LOCUST_DEVICES_CSV="$run/devices.csv" \
    LOCUST_OUT="$run" LOCUST_KEYS=$KEYS LOCUST_PHASE=locust \
    "$locust_venv/bin/locust" -f "$root/bench/locust/devices.py" --headless --only-summary \
    -u "$DEVICES" -r "$RAMP" -t "${locust_time}s" --csv "$run/locust-stats" \
    >"$run/locust.log" 2>&1 &
  locust_pid=$!
  start_sampler "$run/cpu-locust.txt" generator "$locust_pid"
  wait "$locust_pid" || log "locust: exit status $? (non-zero when any request failed), see $run/locust.log"
  locust_pid=""
  stop_samplers
  check_rows locust "$cql_port" "$run/devices.csv"
  python3 "$root/bench/generator_report.py" "$run" 60 | tee "$run/locust.md" \
    || log "locust: report failed"
fi

# ---- phase 1c: the same devices driven by Tsung (a generator we did not write), seen on the wire --
if [[ " $PHASES " == *" tsung "* ]]; then
  for tool in tsung:tsung tcpdump:tcpdump tshark:tshark; do
    command -v "${tool%%:*}" >/dev/null && continue
    log "tsung: installing Debian's ${tool#*:} (apt-get)"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${tool#*:}" \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${tool#*:}"; }; } \
      >>"$run/bench.log" 2>&1 || { log "tsung: cannot install ${tool#*:}, see $run/bench.log"; exit 1; }
  done
  cassandra_quiet
  tsung_ramp=${TSUNG_RAMP:-$DEVICES}
  tsung_version=$(dpkg-query -W -f '${Version}' tsung 2>/dev/null || echo "?")
  tail -n +2 "$run/devices.csv" | cut -d, -f3 >"$run/tsung-tokens.txt"
  bash "$root/bench/tsung/devices.xml.sh" "$run/tsung-tokens.txt" "$mqtt_port" "$DEVICES" \
    "$tsung_ramp" "$DURATION" "$KEYS" >"$run/tsung.xml"
  {
    echo "title=Tsung $tsung_version (Debian) against Fieldline, PUBACK times from the wire (tcpdump + tshark)"
    echo "generator=Tsung (its Erlang VM)"
    echo "describe=$DEVICES users (device tokens) arriving at $tsung_ramp/s, $DURATION QoS 1 messages each, 1 s between a PUBACK and the next, $KEYS keys"
    echo "command=DEVICES=$DEVICES DURATION=$DURATION KEYS=$KEYS TSUNG_RAMP=$tsung_ramp PHASES=\"$PHASES\" bench/run.sh $scenario"
    echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "runDir=${run#"$root"/}"
    echo "clkTck=$clk_tck"
    echo "cores=$cores"
  } >"$run/tsung.properties"
  # The capture: headers and the first 512 bytes of every packet to or from Fieldline's MQTT port
  # (a PUBLISH here is ~190 bytes with its IP and TCP headers), an 8 MiB kernel buffer.
  tcpdump -i lo -n -s 512 -B 8192 -w "$run/tsung.pcap" "tcp port $mqtt_port" 2>"$run/tcpdump.log" &
  tcpdump_pid=$!
  for _ in $(seq 1 50); do grep -q "listening on" "$run/tcpdump.log" 2>/dev/null && break; sleep 0.1; done
  log "tsung: $DEVICES users at $tsung_ramp/s, $DURATION messages each, against mqtt $mqtt_port (Tsung $tsung_version)"
  start_machine_sampler "$run/cpu-tsung.txt"
  start_sampler "$run/cpu-tsung.txt" server "$server_pid"
  start_sampler "$run/cpu-tsung.txt" cassandra "$cassandra_pid"
  mkdir -p "$run/tsung-log"
  # Tsung's controller runs the users in its own VM (use_controller_vm): no ssh, no other host.
  (ulimit -n "$(ulimit -Hn)" && exec tsung -n -f "$run/tsung.xml" -l "$run/tsung-log" start) \
    >"$run/tsung.log" 2>&1 &
  tsung_pid=$!
  tsung_vm=""
  for _ in $(seq 1 100); do
    tsung_vm=$(pgrep -n -f "beam.*tsung_controller.*config_file.*$run/tsung.xml" || true)
    [ -n "$tsung_vm" ] && break
    sleep 0.1
  done
  [ -n "$tsung_vm" ] && start_sampler "$run/cpu-tsung.txt" generator "$tsung_vm"
  wait "$tsung_pid" || log "tsung: exit status $?, see $run/tsung.log"
  tsung_pid=""
  stop_samplers
  stop_pid "$tcpdump_pid" 5
  tcpdump_pid=""
  grep -E "packets (captured|received|dropped)" "$run/tcpdump.log" | sed 's/^/[bench] tcpdump: /' >&2 || true
  dropped=$(grep -oE "^[0-9]+ packets dropped by kernel" "$run/tcpdump.log" | cut -d' ' -f1)
  echo "captureDropped=${dropped:-?}" >>"$run/tsung.properties"
  tsung_stats=$(find "$run/tsung-log" -name tsung.log | head -n 1)
  if [ -n "$tsung_stats" ]; then
    for counter in mqtt_connected mqtt_published mqtt_server_pubacked; do
      echo "tsung.$counter=$(grep -E "^stats: $counter " "$tsung_stats" | tail -n 1 | awk '{print $NF}')"
    done >>"$run/tsung.properties"
  fi
  log "tsung: decoding the capture (tshark)"
  python3 "$root/bench/tsung/wire.py" "$run/tsung.pcap" "$mqtt_port" "$run" tsung 2>>"$run/bench.log" \
    | sed 's/^/[bench] /' >&2 || log "tsung: decoding the capture failed, see $run/bench.log"
  check_rows tsung "$cql_port" "$run/devices.csv"
  python3 "$root/bench/generator_report.py" "$run" 60 tsung | tee "$run/tsung.md" \
    || log "tsung: report failed"
fi

# ---- phase 2: the raw-driver ceiling on the same Cassandra -------------------------------------
if [[ " $PHASES " == *" raw "* ]]; then
  [ "$TLS" = 1 ] && log "raw: no MQTT here, TLS=1 changes nothing"
  cassandra_quiet
  raw_rate=$RATE
  raw_warmup=$((WARMUP < 10 ? 10 : WARMUP))
  [ "$scenario" = MaxThroughput ] && raw_rate=0
  log "raw: $RAW_MODE mode, $DEVICES devices, rate $raw_rate/device (0 = closed loop), $RAW_INFLIGHT in flight"
  # java directly (not a function) so that $! is the writer's own pid for the CPU samples.
  java -Xmx1g -cp "$perf_cp" io.fieldline.perf.raw.RawDriverWriter --cql "127.0.0.1:$cql_port" \
    --devices "$DEVICES" --rate "$raw_rate" --duration "$DURATION" --warmup "$raw_warmup" --keys "$KEYS" \
    --mode "$RAW_MODE" --inflight "$RAW_INFLIGHT" --out "$run/raw.json" \
    >"$run/raw.log" 2>&1 &
  writer_pid=$!
  start_machine_sampler "$run/cpu-raw.txt"
  start_sampler "$run/cpu-raw.txt" writer "$writer_pid"
  start_sampler "$run/cpu-raw.txt" cassandra "$cassandra_pid"
  start_sampler "$run/cpu-raw.txt" server "$server_pid"
  wait "$writer_pid" || log "raw writer failed, see $run/raw.log"
  writer_pid=""
  stop_samplers
  sed 's/^/[bench] /' "$run/raw.log" | tail -2 >&2
fi

if [ -n "$server_pid" ]; then
  log "stopping Fieldline"
  stop_pid "$server_pid" 90
  server_pid=""
  stop_pid "$cassandra_pid" 30
  cassandra_pid=""
fi

# ---- phase 3: a local cluster, devices spread over its nodes ----------------------------------
# scripts/local-cluster.sh: a real ZooKeeper, one embedded Cassandra (same launcher and profile as
# ./fieldline's) and CLUSTER_NODES nodes with the single node's JVM options. Devices are provisioned
# once through node 1; Gatling user i connects to node (i mod N) + 1, while the ring decides the
# owner, so about (N-1)/N of all messages are forwarded over gRPC before they are stored.
if [[ " $PHASES " == *" cluster "* ]]; then
  declare -a node_pids=() node_mqtt=() node_http=()
  pick_ports "$CLUSTER_NODES"; cluster_mqtt=$picked_port
  pick_ports "$CLUSTER_NODES"; cluster_http=$picked_port
  pick_ports "$CLUSTER_NODES"; cluster_grpc=$picked_port
  pick_ports 1; cluster_zk=$picked_port
  pick_ports 1; cluster_cql=$picked_port
  cluster_dir="$run/cluster"
  mkdir -p "$cluster_dir"
  mark_built
  log "cluster: starting ZooKeeper ($cluster_zk), Cassandra ($cluster_cql) and $CLUSTER_NODES nodes" \
    "(mqtt $cluster_mqtt.., http $cluster_http.., grpc $cluster_grpc..) with scripts/local-cluster.sh"
  env "${ws_env[@]}" FIELDLINE_DATA_DIR="$cluster_dir" FIELDLINE_MQTT_PORT=$cluster_mqtt FIELDLINE_HTTP_PORT=$cluster_http \
    FIELDLINE_GRPC_PORT=$cluster_grpc FIELDLINE_ZOOKEEPER_PORT=$cluster_zk \
    FIELDLINE_CASSANDRA_CQL_PORT=$cluster_cql FIELDLINE_ADMIN_USERNAME=$ADMIN_USER \
    FIELDLINE_ADMIN_PASSWORD=$ADMIN_PASSWORD FIELDLINE_DEMO_DEVICE_ENABLED=false \
    JAVA_OPTS="${SERVER_JAVA_OPTS:--Xms256m -Xmx1g -XX:+UseG1GC}" \
    "$root/scripts/local-cluster.sh" start "$CLUSTER_NODES" >"$run/cluster-nodes.txt" 2>>"$run/cluster.log" \
    || { log "cluster: did not start, see $run/cluster.log"; exit 1; }
  # node=node-1 pid=PID mqtt=PORT http=PORT grpc=PORT
  while read -r line; do
    [[ "$line" == node=* ]] || continue
    for field in $line; do
      case "$field" in
        pid=*) node_pids+=("${field#pid=}") ;;
        mqtt=*) node_mqtt+=("${field#mqtt=}") ;;
        http=*) node_http+=("${field#http=}") ;;
      esac
    done
  done <"$run/cluster-nodes.txt"
  # The launcher prints "cassandra cql=127.0.0.1:PORT pid=PID": PID is Cassandra's own JVM.
  cluster_cassandra_pid=$(sed -n 's/^cassandra cql=.* pid=\([0-9]*\).*/\1/p' "$cluster_dir/cassandra/launcher.log" | head -1)
  zookeeper_pid=$(cat "$cluster_dir/zookeeper.pid")
  if [ "${#node_pids[@]}" != "$CLUSTER_NODES" ] || [ -z "$cluster_cassandra_pid" ]; then
    log "cluster: could not read the node and Cassandra pids (see $run/cluster-nodes.txt, $cluster_dir/cassandra/launcher.log)"
    exit 1
  fi
  log "cluster ready: node pids ${node_pids[*]}, Cassandra pid $cluster_cassandra_pid, ZooKeeper pid $zookeeper_pid"
  bench_java io.fieldline.perf.provision.DeviceProvisioner --url "http://127.0.0.1:${node_http[0]}" \
    --user "$ADMIN_USER" --password "$ADMIN_PASSWORD" --count "$DEVICES" --prefix bench- \
    --out "$run/cluster-devices.csv" 2>>"$run/bench.log" | tee -a "$run/bench.log" >&2
  scrape_metrics "$run/cluster-metrics-before-"
  start_machine_sampler "$run/cpu-cluster.txt"
  for i in "${!node_pids[@]}"; do start_sampler "$run/cpu-cluster.txt" "node-$((i + 1))" "${node_pids[$i]}"; done
  start_sampler "$run/cpu-cluster.txt" cassandra "$cluster_cassandra_pid"
  start_sampler "$run/cpu-cluster.txt" zookeeper "$zookeeper_pid"
  sample_metrics "$run/cluster-metrics" &
  samplers+=($!)
  if [ "$scenario" = RpcRoundTrip ] || [ "$scenario" = LiveUpdates ]; then
    # Every device on node 2, every REST call / WebSocket session on node 1: each request and
    # answer, each update, crosses the cluster.
    rest_url="http://127.0.0.1:${node_http[0]}"
    gatling cluster "${node_mqtt[1]}" "$run/cluster-devices.csv" || true
  else
    gatling cluster "$(IFS=,; echo "${node_mqtt[*]}")" "$run/cluster-devices.csv" || true
  fi
  scrape_metrics "$run/cluster-metrics-"
  stop_samplers
  check_rows cluster "$cluster_cql" "$run/cluster-devices.csv"
  log "cluster: stopping it"
  stop_cluster
fi

# ---- phase 4: Mosquitto, persistence off ------------------------------------------------------
if [[ " $PHASES " == *" mosquitto "* ]]; then
  if ! command -v mosquitto >/dev/null; then
    log "installing mosquitto (apt-get)"
    apt-get install -y mosquitto >>"$run/bench.log" 2>&1 \
      || { apt-get update >>"$run/bench.log" 2>&1 && apt-get install -y mosquitto >>"$run/bench.log" 2>&1; }
  fi
  mosquitto_port=$(free_port)
  mosquitto_tls=""
  if [ "$TLS" = 1 ]; then
    mosquitto_tls="certfile $run/tls/server.pem
keyfile $run/tls/server.key"
  fi
  cat >"$run/mosquitto.conf" <<EOF
listener $mosquitto_port 127.0.0.1
$mosquitto_tls
allow_anonymous true
persistence false
max_connections -1
log_dest stdout
log_type error
log_type warning
EOF
  mosquitto -c "$run/mosquitto.conf" >"$run/mosquitto.log" 2>&1 &
  mosquitto_pid=$!
  for _ in $(seq 1 50); do
    [ -n "$(ss -Htln "( sport = :$mosquitto_port )")" ] && break
    sleep 0.1
  done
  if [ -z "$(ss -Htln "( sport = :$mosquitto_port )")" ]; then
    log "mosquitto did not start; tail of $run/mosquitto.log:"
    tail -5 "$run/mosquitto.log" >&2
    exit 1
  fi
  log "mosquitto listening on $mosquitto_port$([ "$TLS" = 1 ] && echo " (TLS)") (pid $mosquitto_pid)"
  start_machine_sampler "$run/cpu-mosquitto.txt"
  start_sampler "$run/cpu-mosquitto.txt" mosquitto "$mosquitto_pid"
  gatling mosquitto "$mosquitto_port" || true
  stop_samplers
  stop_pid "$mosquitto_pid" 5
  mosquitto_pid=""
fi

# ---- phase 5: HiveMQ CE, in-memory persistence ------------------------------------------------
# Same scenario and feeder as Mosquitto's; the launcher installs an authenticator that accepts every
# CONNECT (HiveMQ CE refuses all clients while none is installed) and prints "hivemq ready" once its
# listener is bound.
if [[ " $PHASES " == *" hivemq "* ]]; then
  hivemq_port=$(free_port)
  hivemq_tls=()
  if [ "$TLS" = 1 ]; then hivemq_tls=("$run/tls/server.p12" fieldline-bench); fi
  java $HIVEMQ_JAVA_OPTS -cp "$hivemq_dir/target/classes:$(cat "$hivemq_dir/target/broker.classpath")" \
    io.fieldline.perf.hivemq.HiveMqBroker 127.0.0.1 "$hivemq_port" "$run/hivemq" "${hivemq_tls[@]}" \
    >"$run/hivemq.log" 2>&1 &
  hivemq_pid=$!
  for _ in $(seq 1 240); do
    grep -q '^hivemq ready' "$run/hivemq.log" 2>/dev/null && break
    kill -0 "$hivemq_pid" 2>/dev/null || break
    sleep 0.25
  done
  if ! grep -q '^hivemq ready' "$run/hivemq.log" 2>/dev/null; then
    log "HiveMQ CE did not start; tail of $run/hivemq.log:"
    tail -20 "$run/hivemq.log" >&2
    exit 1
  fi
  log "HiveMQ CE listening on $hivemq_port$([ "$TLS" = 1 ] && echo " (TLS)") (pid $hivemq_pid)"
  start_machine_sampler "$run/cpu-hivemq.txt"
  start_sampler "$run/cpu-hivemq.txt" hivemq "$hivemq_pid"
  gatling hivemq "$hivemq_port" || true
  stop_samplers
  stop_pid "$hivemq_pid" 15
  hivemq_pid=""
fi

# ---- report -----------------------------------------------------------------------------------
echo "loadAfter=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$run/bench.properties"
append_args=()
if [ "$APPEND" = 1 ]; then append_args=(--append "$root/docs/performance.md"); fi
if [ "$scenario" = RpcRoundTrip ]; then
  bench_java io.fieldline.perf.report.RpcReport --run-dir "$run" "${append_args[@]}" | tee "$run/summary.md"
elif [ "$scenario" = LiveUpdates ]; then
  bench_java io.fieldline.perf.report.LiveReport --run-dir "$run" "${append_args[@]}" | tee "$run/summary.md"
elif [ -n "$(echo "${PHASES//locust/}" | sed 's/tsung//' | tr -d '[:space:]')" ]; then # some Gatling phase ran
  bench_java io.fieldline.perf.report.BenchReport --run-dir "$run" "${append_args[@]}" | tee "$run/summary.md"
fi
log "done: $run"
