#!/usr/bin/env bash
# A local Fieldline cluster as plain processes on 127.0.0.1: one real ZooKeeper (ZooKeeperServer from
# Maven Central's org.apache.zookeeper jars), one embedded Cassandra and N Fieldline nodes.
#
#   scripts/local-cluster.sh start N   start everything, return once all N nodes are ready; prints one
#                                      line per node: node=ID pid=PID mqtt=PORT http=PORT grpc=PORT
#   scripts/local-cluster.sh stop      stop everything this script started (nodes gracefully first)
#   scripts/local-cluster.sh status    the same lines for the nodes that are running
#
# Environment (all optional):
#   FIELDLINE_DATA_DIR          base directory: pid files, logs, data (default ./data/local-cluster)
#   FIELDLINE_ADMIN_PASSWORD    REST admin password of every node (default: generated once, kept in
#                               <base>/admin-password)
#   FIELDLINE_JWT_SECRET        shared token signing key (default: generated once, <base>/jwt-secret)
#   FIELDLINE_MQTT_PORT, FIELDLINE_HTTP_PORT, FIELDLINE_GRPC_PORT
#                               ports of node 1 (default 1883, 8080, 9090); node i uses port + i - 1
#   FIELDLINE_ZOOKEEPER_PORT    ZooKeeper client port (default 2181)
#   FIELDLINE_CASSANDRA_CQL_PORT  Cassandra CQL port (default 9042)
#   FIELDLINE_CASSANDRA_HEAP    Cassandra heap (default 1G)
#   JAVA_OPTS                   JVM options of each node (default -Xms128m -Xmx512m)
# Any other FIELDLINE_* variable (docs/configuration.md) is passed to every node.
set -euo pipefail

caller_dir=$(pwd)
cd "$(dirname "$0")/.."
root=$(pwd)

base=${FIELDLINE_DATA_DIR:-./data/local-cluster}
case "$base" in /*) ;; *) base="$caller_dir/$base" ;; esac

zk_port=${FIELDLINE_ZOOKEEPER_PORT:-2181}
cql_port=${FIELDLINE_CASSANDRA_CQL_PORT:-9042}
mqtt_base=${FIELDLINE_MQTT_PORT:-1883}
http_base=${FIELDLINE_HTTP_PORT:-8080}
grpc_base=${FIELDLINE_GRPC_PORT:-9090}

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }
abort() { log "$*; stopping what was started"; stop_all; exit 1; }

java_bin() {
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then echo "$JAVA_HOME/bin/java"; else command -v java; fi
}

needs_build() {
  [ ! -f server/target/server.classpath ] || [ ! -f cluster/target/zookeeper.classpath ] \
    || [ ! -f cassandra-embedded/runtime/target/cassandra.classpath ] || [ ! -d server/target/classes ] \
    || [ -n "$(find pom.xml ./*/pom.xml ./*/src cassandra-embedded/*/src -newer server/target/server.classpath -print -quit 2>/dev/null)" ]
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A pid file's process, if it is still the process we started (its command line carries our marker).
live_pid() {
  local file=$1 marker=$2 pid
  [ -f "$file" ] || return 1
  pid=$(cat "$file")
  [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$marker" && echo "$pid"
}

stop_pid() {
  local file=$1 marker=$2 what=$3 wait_s=$4 pid
  if pid=$(live_pid "$file" "$marker"); then
    log "stopping $what (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((wait_s * 5))); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$what did not stop within ${wait_s}s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$file"
}

# The ports a node was started with, kept beside its pid file for status.
node_line() {
  local i=$1 pid=$2
  echo "node=node-$i pid=$pid $(cat "$base/node-$i.ports")"
}

secret() {
  local file=$1 length=$2
  if [ ! -s "$file" ]; then
    (umask 077; tr -dc 'A-Za-z0-9' < /dev/urandom | head -c "$length" > "$file")
  fi
  cat "$file"
}

start_zookeeper() {
  local dir="$base/zookeeper"
  mkdir -p "$dir/data"
  cat > "$dir/zoo.cfg" <<EOF
tickTime=1000
dataDir=$dir/data
clientPort=$zk_port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok
EOF
  log "starting ZooKeeper on 127.0.0.1:$zk_port"
  nohup "$(java_bin)" -Xmx256m -Dlogback.configurationFile="$root/cluster/src/test/resources/logback-test.xml" \
    -cp "$(cat cluster/target/zookeeper.classpath)" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" > "$dir/zookeeper.log" 2>&1 &
  echo $! > "$base/zookeeper.pid"
  for _ in $(seq 1 150); do
    if [ "$( (exec 3<>"/dev/tcp/127.0.0.1/$zk_port"; echo ruok >&3; timeout 1 cat <&3) 2>/dev/null)" = "imok" ]; then
      return 0
    fi
    kill -0 "$(cat "$base/zookeeper.pid")" 2>/dev/null || break
    sleep 0.2
  done
  tail -20 "$dir/zookeeper.log" >&2
  return 1
}

start_cassandra() {
  local dir="$base/cassandra"
  mkdir -p "$dir"
  log "starting Cassandra on 127.0.0.1:$cql_port (first start takes ~10 s)"
  nohup "$(java_bin)" -Xmx128m \
    -Dfieldline.cassandra.classpath-file="$root/cassandra-embedded/runtime/target/cassandra.classpath" \
    -cp "$root/server/target/classes:$(cat server/target/server.classpath)" \
    io.fieldline.cassandra.embedded.EmbeddedCassandraMain --work-dir "$dir/node" --cql-port "$cql_port" \
    > "$dir/launcher.log" 2>&1 &
  echo $! > "$base/cassandra.pid"
  for _ in $(seq 1 900); do
    grep -q "^cassandra cql=" "$dir/launcher.log" 2>/dev/null && return 0
    kill -0 "$(cat "$base/cassandra.pid")" 2>/dev/null || break
    sleep 0.2
  done
  tail -20 "$dir/launcher.log" >&2
  return 1
}

launch_node() {
  local i=$1
  local dir="$base/node-$i"
  mkdir -p "$dir"
  # shellcheck disable=SC2030  # the node's environment, in the node's subshell only
  (
    export FIELDLINE_NODE_ID="node-$i"
    export FIELDLINE_ZOOKEEPER="127.0.0.1:$zk_port"
    export FIELDLINE_ADVERTISED_HOST=127.0.0.1
    export FIELDLINE_MQTT_HOST=127.0.0.1 FIELDLINE_HTTP_HOST=127.0.0.1 FIELDLINE_GRPC_HOST=127.0.0.1
    export FIELDLINE_MQTT_PORT=$((mqtt_base + i - 1))
    export FIELDLINE_HTTP_PORT=$((http_base + i - 1))
    export FIELDLINE_GRPC_PORT=$((grpc_base + i - 1))
    export FIELDLINE_DATA_DIR="$dir"
    export FIELDLINE_EMBEDDED_CASSANDRA_ENABLED=false
    export FIELDLINE_CASSANDRA_CONTACT_POINTS="127.0.0.1:$cql_port"
    export FIELDLINE_ADMIN_PASSWORD="$admin_password"
    export FIELDLINE_JWT_SECRET="$jwt_secret"
    if [ "$i" != 1 ]; then export FIELDLINE_DEMO_DEVICE_ENABLED=false; fi
    # shellcheck disable=SC2086
    exec nohup "$(java_bin)" ${JAVA_OPTS:--Xms128m -Xmx512m} -Dfieldline.local-cluster="$dir" \
      -cp "$root/server/target/classes:$(cat "$root/server/target/server.classpath")" \
      io.fieldline.server.Main > "$dir/node.log" 2>&1
  ) &
  echo $! > "$base/node-$i.pid"
  echo "mqtt=$((mqtt_base + i - 1)) http=$((http_base + i - 1)) grpc=$((grpc_base + i - 1))" > "$base/node-$i.ports"
}

await_node() {
  local i=$1 pid
  pid=$(cat "$base/node-$i.pid")
  for _ in $(seq 1 900); do
    if curl -sf -o /dev/null "http://127.0.0.1:$((http_base + i - 1))/health/ready"; then
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  log "node-$i did not become ready; last lines of $base/node-$i/node.log:"
  tail -30 "$base/node-$i/node.log" >&2
  return 1
}

stop_all() {
  local file i
  for file in "$base"/node-*.pid; do
    [ -e "$file" ] || continue
    i=${file##*/node-}; i=${i%.pid}
    stop_pid "$file" "-Dfieldline.local-cluster=$base/node-$i" "node-$i" 60 &
  done
  wait
  stop_pid "$base/cassandra.pid" "$base/cassandra/node" "Cassandra" 90
  stop_pid "$base/zookeeper.pid" "$base/zookeeper/zoo.cfg" "ZooKeeper" 30
  rm -f "$base"/node-*.ports
}

start() {
  local n=${1:-}
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "usage: scripts/local-cluster.sh start N   (N >= 1)"
  mkdir -p "$base"
  if live_pid "$base/zookeeper.pid" "$base/zookeeper/zoo.cfg" > /dev/null \
      || live_pid "$base/cassandra.pid" "$base/cassandra/node" > /dev/null \
      || compgen -G "$base/node-*.pid" > /dev/null; then
    die "a local cluster is already running in $base; run: scripts/local-cluster.sh stop"
  fi
  local ports=("$zk_port" "$cql_port") i
  for i in $(seq 1 "$n"); do
    ports+=($((mqtt_base + i - 1)) $((http_base + i - 1)) $((grpc_base + i - 1)))
  done
  for i in "${ports[@]}"; do
    if port_in_use "$i"; then die "port $i on 127.0.0.1 is in use"; fi
  done
  if needs_build; then
    log "building (first run downloads dependencies from Maven Central; a few minutes)..."
    # To stderr: stdout carries only the node lines callers parse.
    mvn -q -B -Dmaven.test.skip=true install >&2
  fi
  # shellcheck disable=SC2031
  admin_password=${FIELDLINE_ADMIN_PASSWORD:-$(secret "$base/admin-password" 16)}
  # shellcheck disable=SC2031
  jwt_secret=${FIELDLINE_JWT_SECRET:-$(secret "$base/jwt-secret" 48)}

  start_zookeeper || abort "ZooKeeper did not start"
  start_cassandra || abort "Cassandra did not start"
  # Node 1 alone first: it creates the schema; the others then start in parallel.
  launch_node 1
  await_node 1 || abort "node-1 did not start"
  for i in $(seq 2 "$n"); do launch_node "$i"; done
  for i in $(seq 2 "$n"); do await_node "$i" || abort "node-$i did not start"; done

  log "ZooKeeper 127.0.0.1:$zk_port, Cassandra 127.0.0.1:$cql_port, logs and data in $base"
  log "admin login: admin@fieldline.local / $admin_password (FIELDLINE_ADMIN_USERNAME overrides the name)"
  for i in $(seq 1 "$n"); do
    node_line "$i" "$(cat "$base/node-$i.pid")"
  done
}

status() {
  local file i pid
  for file in "$base"/node-*.pid; do
    [ -e "$file" ] || continue
    i=${file##*/node-}; i=${i%.pid}
    if pid=$(live_pid "$file" "-Dfieldline.local-cluster=$base/node-$i"); then
      node_line "$i" "$pid"
    fi
  done
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop_all ;;
  status) status ;;
  *) echo "usage: scripts/local-cluster.sh start N | stop | status" >&2; exit 2 ;;
esac
