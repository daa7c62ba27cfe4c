# Shared by docker/test/smoke.sh and docker/test/images/build.sh (sourced, not run).
#
#   DOCKER       the docker client used for builds and runs. Default: Debian's /usr/bin/docker when
#                it exists, else the first `docker` on PATH. Why: BuildKit (which docker/Dockerfile
#                needs for its cache mount and COPY --chmod) is built into Debian's 20.10 client,
#                while a newer client without the buildx plugin refuses DOCKER_BUILDKIT=1.
#   SMOKE_WORK   scratch directory (default <clone>/target/docker-smoke): contexts, rootfs, logs.

SMOKE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SMOKE_WORK=${SMOKE_WORK:-$SMOKE_ROOT/target/docker-smoke}
if [[ -z ${DOCKER:-} ]]; then
  if [[ -x /usr/bin/docker ]]; then DOCKER=/usr/bin/docker; else DOCKER=docker; fi
fi
export DOCKER_BUILDKIT=1
# docker-compose 1.29 talks to the engine itself (Python SDK); COMPOSE_DOCKER_CLI_BUILD would
# make it call a `docker` CLI, which we never need: images are built before `up`.
export COMPOSE_DOCKER_CLI_BUILD=0
mkdir -p "$SMOKE_WORK"
SMOKE_TIMINGS=${SMOKE_TIMINGS:-$SMOKE_WORK/timings.txt}

# Progress lines go to the script's original stdout (fd 3), even from a command whose output is
# redirected to a log file.
{ true >&3; } 2> /dev/null || exec 3>&1
say() { printf '[smoke %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&3; }

# Fails the script with a message that says what was being waited for.
die() {
  printf '[smoke %s] FAILED: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
  exit 1
}

# timed <label> <command...>: runs the command, prints and records how long it took.
timed() {
  local label=$1 start end rc=0
  shift
  start=$(date +%s.%N)
  "$@" || rc=$?
  end=$(date +%s.%N)
  local secs
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  printf '%-72s %7s s%s\n' "$label" "$secs" "$( ((rc == 0)) || echo "  (exit $rc)")" >> "$SMOKE_TIMINGS"
  say "$label: ${secs} s$( ((rc == 0)) || echo " (exit $rc)")"
  return "$rc"
}

# until_true <seconds> <what> <command...>: polls the command every 2 s until it succeeds; fails
# with "<what>" after the deadline.
until_true() {
  local limit=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@" > /dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$what: not true after ${limit} s"
    sleep 2
  done
}
