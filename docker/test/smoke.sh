#!/usr/bin/env bash
# The operators' path under a real Docker engine: builds the image with docker/Dockerfile and runs
# the compose files as they are, checking what an operator relies on. Called by .ci/run after
# `mvn verify`; run it alone from a clone (as root) the same way:
#
#   docker/test/smoke.sh                  # one-node stack, then the cluster stack
#   SMOKE_STACKS=one-node docker/test/smoke.sh
#   SMOKE_KEEP_IMAGES=1 docker/test/smoke.sh   # keep the stand-ins and the build cache afterwards
#
# Steps (each timed; the times are printed at the end and kept in target/docker-smoke/timings.txt):
#   1. a Docker engine: starts dockerd when none answers (installs Debian's docker.io when it is
#      missing). Where no engine can run at all, prints a loud SKIPPED and exits 0, and .ci/run
#      repeats it in its last lines (target/docker-smoke/result).
#   2. the stand-ins for the Docker Hub images (docker/test/images/build.sh; rebuilt only when
#      their inputs change), then our image: docker build -f docker/Dockerfile --network host.
#   3. one node (docker/docker-compose.yml): up; Cassandra and Fieldline healthy; REST login on the
#      published port; a device; a QoS 1 message by mosquitto_pub, read back; `restart fieldline`
#      keeps it (and the REST token: the generated JWT secret is in the fieldline-data volume);
#      `down` then `up` keeps it (named volumes); the monitoring profile's Prometheus scrapes it.
#   4. the cluster (docker/docker-compose.cluster.yml): docker/test/cluster.sh.
# Whatever happens, an EXIT trap removes the containers, networks and volumes of both stacks, the
# fieldline:local image, the stand-in images and the build cache (unless SMOKE_KEEP_IMAGES=1),
# and stops dockerd if this script started it. Every wait is bounded
# and says what it waited for when it gives up.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=docker/test/lib.sh
source "$here/lib.sh"
cd "$SMOKE_ROOT"

SMOKE_STACKS=${SMOKE_STACKS:-one-node cluster}
RESULT=$SMOKE_WORK/result
IMAGE=fieldline:local
ONE=(docker-compose -p fieldline-smoke -f docker/docker-compose.yml)
# The image's org.opencontainers.image.revision label; the cluster's rolling upgrade rebuilds with
# another one.
REVISION=$(git -C "$SMOKE_ROOT" rev-parse --short HEAD 2> /dev/null || echo local)
: > "$SMOKE_TIMINGS"
rm -f "$RESULT"
smoke_started=$SECONDS
dockerd_pid=""

skip() {
  cat >&2 << EOF

################################################################################
##  DOCKER SMOKE TEST SKIPPED: $*
##  The image and the compose stacks were NOT tested on this machine.
################################################################################

EOF
  echo "SKIPPED: $*" > "$RESULT"
  exit 0
}

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "$@" > /dev/null \
    || { apt-get update -qq > /dev/null && apt-get install -y -qq "$@" > /dev/null; }
}

# ---------------------------------------------------------------------------------------------
# 1. The engine.
ensure_engine() {
  if "$DOCKER" info > /dev/null 2>&1; then
    say "Docker engine: $("$DOCKER" version -f '{{.Server.Version}}') (already running)"
    return 0
  fi
  [[ $(id -u) == 0 ]] || skip "no Docker engine answers and this script is not root (cannot start dockerd)"
  if ! command -v dockerd > /dev/null; then
    say "installing Debian's docker.io"
    apt_install docker.io || skip "cannot install docker.io (apt-get install docker.io failed)"
    [[ -x /usr/bin/docker ]] && DOCKER=/usr/bin/docker
  fi
  say "starting dockerd (log: $SMOKE_WORK/dockerd.log)"
  setsid dockerd > "$SMOKE_WORK/dockerd.log" 2>&1 < /dev/null &
  dockerd_pid=$!
  local deadline=$((SECONDS + 60))
  until "$DOCKER" info > /dev/null 2>&1; do
    if ! kill -0 "$dockerd_pid" 2> /dev/null || ((SECONDS > deadline)); then
      tail -n 15 "$SMOKE_WORK/dockerd.log" >&2 || true
      kill "$dockerd_pid" 2> /dev/null || true
      dockerd_pid=""
      skip "dockerd does not start here (last lines of its log above)"
    fi
    sleep 1
  done
  # A container must be able to run, not only the daemon (cgroups, overlayfs, iptables).
  say "Docker engine: $("$DOCKER" version -f '{{.Server.Version}}') (started by this script)"
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  if ((rc != 0)); then
    say "failed: container states and the last log lines of each stack follow"
    dump_stack "${ONE[@]}"
    declare -F dump_cluster > /dev/null && dump_cluster
  fi
  say "cleaning up: containers, networks, volumes, $IMAGE"
  "${ONE[@]}" --profile monitoring down -v --remove-orphans -t 60 > /dev/null 2>&1
  declare -F cluster_down > /dev/null && cluster_down
  "$DOCKER" image rm "$IMAGE" > /dev/null 2>&1
  # Nothing kept outside the clone that a new machine would lack: the next run builds the
  # stand-ins and the image from nothing again, and its timings are a new machine's.
  if [[ ${SMOKE_KEEP_IMAGES:-0} != 1 ]]; then
    say "removing the stand-in images and the build cache (SMOKE_KEEP_IMAGES=1 keeps them)"
    "$DOCKER" image ls -q --filter "label=org.fieldline.standin.inputs" | sort -u \
      | xargs -r "$DOCKER" image rm -f > /dev/null 2>&1
    "$DOCKER" image prune -f > /dev/null 2>&1
    "$DOCKER" builder prune -af > /dev/null 2>&1
  fi
  if [[ -n $dockerd_pid ]]; then
    say "stopping the dockerd this script started (pid $dockerd_pid)"
    kill "$dockerd_pid" 2> /dev/null
    for _ in $(seq 30); do kill -0 "$dockerd_pid" 2> /dev/null || break; sleep 1; done
  fi
  if ((rc == 0)); then
    echo "PASSED in $(((SECONDS - smoke_started) / 60)) min $(((SECONDS - smoke_started) % 60)) s ($SMOKE_STACKS)" > "$RESULT"
  else
    echo "FAILED (exit $rc)" > "$RESULT"
  fi
  echo
  echo "Docker smoke timings:"
  cat "$SMOKE_TIMINGS"
  say "docker smoke: $(cat "$RESULT")"
  exit "$rc"
}

# dump_stack <compose command...>: ps and the last log lines, for a failure report.
dump_stack() {
  "$@" ps 2> /dev/null || return 0
  "$@" logs --no-color --tail 40 2> /dev/null | tail -n 200
}

# ---------------------------------------------------------------------------------------------
# Helpers for the stacks.

# health <container id>: healthy, unhealthy, starting, or the state of a container without one.
health() {
  "$DOCKER" inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}' "$1" 2> /dev/null \
    || echo missing
}

# wait_healthy <seconds> <compose command...> -- <service...>: every service's container healthy.
wait_healthy() {
  local limit=$1 compose=() services=() deadline
  shift
  while [[ $1 != -- ]]; do compose+=("$1"); shift; done
  shift
  services=("$@")
  deadline=$((SECONDS + limit))
  while :; do
    local pending=()
    for service in "${services[@]}"; do
      local id state
      id=$("${compose[@]}" ps -q "$service" 2> /dev/null | head -n 1)
      state=$( [[ -n $id ]] && health "$id" || echo missing)
      [[ $state == healthy ]] || pending+=("$service=$state")
    done
    ((${#pending[@]} == 0)) && return 0
    ((SECONDS < deadline)) || die "not healthy after ${limit} s: ${pending[*]}"
    sleep 2
  done
}

# login <base url> <password>: prints a REST token.
login() {
  curl -sS -f --max-time 10 -X POST "$1/api/auth/login" -H 'Content-Type: application/json' \
    -d "$(jq -n --arg p "$2" '{username: "admin@fieldline.local", password: $p}')" | jq -er .token
}

# latest <base url> <token> <device id> <key>: the latest value of a key, "" when none.
latest() {
  curl -sS -f --max-time 10 -H "X-Authorization: Bearer $2" \
    "$1/api/plugins/telemetry/DEVICE/$3/values/timeseries?keys=$4" | jq -r --arg k "$4" '.[$k][0].value // ""'
}

# publish <host> <port> <access token> <json>: one QoS 1 PUBLISH; succeeds after its PUBACK.
publish() {
  timeout 30 mosquitto_pub -h "$1" -p "$2" -u "$3" -q 1 -t v1/devices/me/telemetry -m "$4"
}

port_free() { ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }

# The most open files a container may have here: the engine's own hard limit, unless it may raise
# it (CAP_SYS_RESOURCE, which an ordinary root dockerd has; sandboxes may drop it).
engine_nofile() {
  "$DOCKER" run --rm --network none --ulimit nofile=1048576:1048576 debian:bookworm-slim \
    sh -c 'ulimit -Hn' 2> /dev/null \
    || "$DOCKER" run --rm --network none debian:bookworm-slim sh -c 'ulimit -Hn'
}

# test_override <compose file> <override file>: writes the test's override file and prints its
# name (docker/test/test_override.py): open files capped where the engine cannot give a container
# the limit the compose file asks for, health checks polled more often, Cassandra's waits for a
# large network shortened. The compose files themselves are never changed.
test_override() {
  docker-compose -f "$1" config 2> /dev/null \
    | /usr/bin/python3 "$here/test_override.py" "$ENGINE_NOFILE" "$2"
}

# prom_value <PromQL>: the first sample's value of an instant query to the monitoring profile's
# Prometheus on 127.0.0.1:9090, "" when it has none (yet).
prom_value() {
  curl -sS -f --max-time 10 -G http://127.0.0.1:9090/api/v1/query --data-urlencode "query=$1" \
    | jq -r '.data.result[0].value[1] // ""'
}

# wait_scraped <seconds>: Prometheus has scraped a PUBACK count of at least 1 from Fieldline.
wait_scraped() {
  local deadline=$((SECONDS + $1)) acks=""
  until [[ -n $acks && $acks != 0 ]]; do
    ((SECONDS < deadline)) \
      || die "one-node: Prometheus never scraped a PUBACK from fieldline:8080 in $1 s (up: $(prom_value 'up{job="fieldline"}' || true))"
    sleep 3
    acks=$(prom_value 'sum(fieldline_mqtt_puback_sent_total{job="fieldline"})' || true)
  done
}

# dashboard_queries: every query of the Grafana dashboard (docker/grafana/fieldline-dashboard.json),
# with Grafana's variables filled in as Grafana would ($instance: all nodes, $__rate_interval: 1m),
# must be accepted by the running Prometheus; how many already return series is printed.
dashboard_queries() {
  local query status total=0 answered=0 refused=()
  while IFS= read -r query; do
    total=$((total + 1))
    status=$(curl -sS --max-time 10 -G http://127.0.0.1:9090/api/v1/query --data-urlencode "query=$query" \
      | jq -r '"\(.status) \(.data.result | length)"' 2> /dev/null || echo "error 0")
    [[ $status == success* ]] || refused+=("$query")
    [[ $status == "success 0" || $status != success* ]] || answered=$((answered + 1))
  done < <(jq -r '.. | objects | select(has("expr")) | .expr' docker/grafana/fieldline-dashboard.json \
    | sed -e 's/\$__rate_interval/1m/g' -e 's/\$instance/.*/g')
  ((total > 0)) || die "one-node: no queries found in docker/grafana/fieldline-dashboard.json"
  ((${#refused[@]} == 0)) || die "one-node: Prometheus refused dashboard queries: ${refused[*]}"
  say "one-node: all $total dashboard queries accepted by Prometheus, $answered with series already"
}

# The monitoring profile's Prometheus (docker/prometheus/prometheus.yml): it starts beside the
# running stack, turns healthy, scrapes Fieldline and counts the PUBACK this test caused. Grafana,
# the profile's other service, has no stand-in here: docs/monitoring.md says it is untested.
monitoring() {
  local mon=("${ONE[@]}" --profile monitoring)
  timed "one-node: monitoring profile: up -d prometheus" \
    timeout 120 "${mon[@]}" up -d --no-deps prometheus > "$SMOKE_WORK/prometheus-up.log" 2>&1 \
    || { cat "$SMOKE_WORK/prometheus-up.log" >&2; die "one-node: --profile monitoring up -d prometheus"; }
  timed "one-node: Prometheus healthy" wait_healthy 120 "${mon[@]}" -- prometheus
  timed "one-node: Prometheus scraped Fieldline's PUBACK count" wait_scraped 90
  dashboard_queries
  say "one-node: Prometheus scrapes Fieldline: up=$(prom_value 'up{job="fieldline"}')," \
    "PUBACKs counted: $(prom_value 'sum(fieldline_mqtt_puback_sent_total{job="fieldline"})')"
  "${mon[@]}" rm -s -f -v prometheus > /dev/null 2>&1 || die "one-node: remove the prometheus container"
}

# ---------------------------------------------------------------------------------------------
# 3. One node.
one_node() {
  local url=http://127.0.0.1:8080 token device value
  for port in 1883 8080; do
    port_free "$port" || die "port $port is taken on this machine; the compose files publish it"
  done
  # The admin password an operator would put in docker/.env. The JWT secret is left to Fieldline:
  # generated at first start and kept in the fieldline-data volume, which the restarts below
  # must keep (a token issued before them stays valid).
  export FIELDLINE_ADMIN_PASSWORD="smoke-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  export FIELDLINE_JWT_SECRET=""
  local override
  override=$(test_override docker/docker-compose.yml "$SMOKE_WORK/one-node.override.yml") \
    || die "one-node: cannot write the test's compose override"
  ONE+=(-f "$override")
  say "one-node: the test's pace and this engine's open-files limit ($ENGINE_NOFILE) are in" \
    "$override (docker/docker-compose.yml itself is unchanged)"

  timed "one-node: up -d (until Cassandra is healthy and Fieldline created)" \
    timeout 420 "${ONE[@]}" up -d || die "one-node: docker-compose up"
  timed "one-node: Fieldline healthy after up" \
    wait_healthy 240 "${ONE[@]}" -- cassandra fieldline
  token=$(login "$url" "$FIELDLINE_ADMIN_PASSWORD") || die "one-node: REST login on $url"
  device=$(curl -sS -f --max-time 10 -X POST "$url/api/device?accessToken=smoke-device-1" \
    -H "X-Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"name":"smoke-1","type":"smoke"}' | jq -er .id.id) || die "one-node: create a device"
  say "one-node: logged in over REST, device $device created"
  publish 127.0.0.1 1883 smoke-device-1 '{"temperature":21.5}' || die "one-node: mosquitto_pub QoS 1"
  value=$(latest "$url" "$token" "$device" temperature)
  [[ $value == 21.5 ]] || die "one-node: read back temperature '$value', expected 21.5"
  say "one-node: QoS 1 message acknowledged and read back over REST"

  monitoring

  timed "one-node: restart fieldline" "${ONE[@]}" restart fieldline > /dev/null 2>&1 \
    || die "one-node: docker-compose restart fieldline"
  timed "one-node: Fieldline healthy after restart" \
    wait_healthy 180 "${ONE[@]}" -- fieldline
  value=$(latest "$url" "$token" "$device" temperature) \
    || die "one-node: the token issued before the restart is refused (JWT secret not kept?)"
  [[ $value == 21.5 ]] || die "one-node: after restart, temperature '$value', expected 21.5"
  publish 127.0.0.1 1883 smoke-device-1 '{"humidity":40}' || die "one-node: publish after restart"
  say "one-node: restart kept the data and the JWT secret"

  timed "one-node: down (volumes kept)" "${ONE[@]}" down > /dev/null 2>&1 \
    || die "one-node: docker-compose down"
  timed "one-node: up -d again" timeout 420 "${ONE[@]}" up -d > /dev/null 2>&1 \
    || die "one-node: docker-compose up after down"
  timed "one-node: Fieldline healthy after down/up" \
    wait_healthy 240 "${ONE[@]}" -- cassandra fieldline
  value=$(latest "$url" "$token" "$device" temperature) \
    || die "one-node: after down/up the old token is refused (fieldline-data volume not kept?)"
  [[ $value == 21.5 ]] || die "one-node: after down/up, temperature '$value', expected 21.5"
  value=$(latest "$url" "$token" "$device" humidity)
  [[ $value == 40 ]] || die "one-node: after down/up, humidity '$value', expected 40"
  say "one-node: down + up kept the data (named volumes)"

  timed "one-node: down -v" "${ONE[@]}" down -v > /dev/null 2>&1 || die "one-node: down -v"
  "$DOCKER" volume ls -q | grep -q '^fieldline-smoke_' && die "one-node: volumes left after down -v"
  say "one-node: PASSED"
}

# ---------------------------------------------------------------------------------------------
ensure_engine
trap cleanup EXIT
trap 'exit 130' INT TERM
for tool in docker-compose:docker-compose mosquitto_pub:mosquitto-clients jq:jq curl:curl; do
  command -v "${tool%%:*}" > /dev/null || apt_install "${tool#*:}" || die "cannot install ${tool#*:}"
done
# Debian's Python with PyYAML (test_override.py) and paho-mqtt (mqtt_load.py, the cluster's devices).
/usr/bin/python3 -c 'import yaml, paho.mqtt' 2> /dev/null || apt_install python3-yaml python3-paho-mqtt \
  || die "cannot install python3-yaml and python3-paho-mqtt"

timed "stand-in images (docker/test/images/build.sh)" "$here/images/build.sh" \
  || die "stand-in images"
timed "fieldline image: docker build -f docker/Dockerfile" \
  "$DOCKER" build -f docker/Dockerfile --network host --build-arg "REVISION=$REVISION" -t "$IMAGE" . \
  > "$SMOKE_WORK/build-fieldline.log" 2>&1 \
  || { tail -n 40 "$SMOKE_WORK/build-fieldline.log" >&2; die "docker build of docker/Dockerfile (log: $SMOKE_WORK/build-fieldline.log)"; }
say "fieldline image: $("$DOCKER" image inspect -f '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }')"

ENGINE_NOFILE=$(engine_nofile) || die "a container cannot run on this engine (docker run debian:bookworm-slim)"
say "a container here may have at most $ENGINE_NOFILE open files"

for stack in $SMOKE_STACKS; do
  case $stack in
    one-node) one_node ;;
    cluster)
      # shellcheck source=docker/test/cluster.sh
      source "$here/cluster.sh"
      cluster
      ;;
    *) die "unknown stack '$stack' in SMOKE_STACKS" ;;
  esac
done
