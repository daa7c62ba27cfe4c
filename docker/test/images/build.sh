#!/usr/bin/env bash
# Builds the stand-ins for the Docker Hub images that docker/Dockerfile and the compose files
# name, from Debian packages and Maven Central, for machines that cannot reach Docker Hub (CI).
# Each is tagged with the official name, so the operator's files run unchanged:
#
#   debian:bookworm-slim           debootstrap --variant=minbase, docker import
#   eclipse-temurin:17-jre         Debian's openjdk-17-jre-headless       (temurin-jre/)
#   maven:3.9-eclipse-temurin-17   Debian's openjdk-17-jdk-headless + maven (maven/)
#   cassandra:5.0                  cassandra-all and its jars from Maven Central (cassandra/)
#   zookeeper:3.9                  Debian's libzookeeper-java (zookeeper/)
#   haproxy:3.0                    Debian's haproxy (haproxy/)
#   prom/prometheus:v2.53.0        Debian's prometheus (prometheus/; the monitoring profile)
#
# What each differs in from the official image: the README-style comment at the top of its
# Dockerfile, and docs/operations.md ("Testing the stacks without Docker Hub").
#
# An image is rebuilt only when its inputs changed: every stand-in carries the label
# org.fieldline.standin.inputs, a hash of its build context and of its parent image's id. An image
# with the official name but without that label (say the real one, pulled from Docker Hub) is left
# alone and used as it is. Needs root (debootstrap, docker) and a running engine.
#
#   docker/test/images/build.sh [name...]     # default: all, in dependency order
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=docker/test/lib.sh
source "$here/../lib.sh"

LABEL=org.fieldline.standin.inputs
DEBIAN_SUITE=bookworm
# The mirror apt already uses on this machine, else Debian's CDN.
DEBIAN_MIRROR=${DEBIAN_MIRROR:-$(awk '/^URIs:/ && $2 ~ /\/debian\/?$/ { print $2; exit }' \
  /etc/apt/sources.list.d/debian.sources 2> /dev/null || true)}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

# Prints the inputs label of an image, "none" for an image without it, "" when there is none.
label_of() {
  "$DOCKER" image inspect "$1" > /dev/null 2>&1 || return 0
  local value
  value=$("$DOCKER" image inspect -f "{{ index .Config.Labels \"$LABEL\" }}" "$1")
  [[ -n $value && $value != "<no value>" ]] && echo "$value" || echo none
}

# up_to_date <tag> <hash>: true when the image needs no build (same inputs, or not a stand-in).
up_to_date() {
  local current
  current=$(label_of "$1")
  if [[ $current == none ]]; then
    say "$1: exists and is not a stand-in (the official image?): used as it is"
    return 0
  fi
  if [[ $current == "$2" ]]; then
    say "$1: stand-in up to date ($2)"
    return 0
  fi
  return 1
}

# The base: a minimal Debian like the official debian:bookworm-slim (which is built the same way,
# with debuerreotype, and trims documentation more aggressively).
build_debian() {
  local tag=debian:bookworm-slim rootfs=$SMOKE_WORK/rootfs recipe hash
  recipe="debootstrap --variant=minbase $DEBIAN_SUITE $DEBIAN_MIRROR; sources+security; slim; v3"
  hash=$(printf '%s' "$recipe" | sha256sum | cut -c1-16)
  up_to_date "$tag" "$hash" && return 0
  if ! command -v debootstrap > /dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap > /dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap > /dev/null; }
  fi
  rm -rf "$rootfs"
  timed "stand-in $tag: debootstrap" \
    debootstrap --variant=minbase "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR" \
    > "$SMOKE_WORK/debootstrap.log" 2>&1 \
    || { tail -20 "$SMOKE_WORK/debootstrap.log" >&2; die "debootstrap (log: $SMOKE_WORK/debootstrap.log)"; }
  rm -f "$rootfs/etc/apt/sources.list"
  cat > "$rootfs/etc/apt/sources.list.d/debian.sources" << EOF
Types: deb
URIs: $DEBIAN_MIRROR
Suites: $DEBIAN_SUITE $DEBIAN_SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${DEBIAN_MIRROR%/debian*}/debian-security
Suites: $DEBIAN_SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # As in the official image: no package lists or downloaded packages in the image.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  printf 'APT::Install-Recommends "false";\n' > "$rootfs/etc/apt/apt.conf.d/99-no-recommends"
  # As in the slim image: packages installed later leave out documentation and translations.
  printf 'path-exclude %s\n' /usr/share/doc/\* /usr/share/man/\* /usr/share/info/\* \
    /usr/share/locale/\* /usr/share/lintian/\* > "$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim"
  printf 'path-include /usr/share/doc/*/copyright\n' >> "$rootfs/etc/dpkg/dpkg.cfg.d/docker-slim"
  find "$rootfs/usr/share/doc" -mindepth 1 -not -type d -not -name copyright -delete
  rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*
  # (openjdk's postinst links its man pages with update-alternatives: the directory must exist)
  mkdir -p "$rootfs/usr/share/man/man1"
  local previous
  previous=$("$DOCKER" image inspect -f '{{.Id}}' "$tag" 2> /dev/null || true)
  timed "stand-in $tag: docker import" \
    sh -c "tar -C '$rootfs' --numeric-owner -cf - . | '$DOCKER' import \
      --change 'LABEL $LABEL=$hash' --change 'ENV LANG=C.UTF-8' --change 'CMD [\"bash\"]' - '$tag' > /dev/null"
  rm -rf "$rootfs"
  remove_superseded "$previous"
}

# build_image <directory> <tag> <parent tag>: docker build of docker/test/images/<directory>, with
# the extra files the function stage_<directory> (if any) puts in the context.
build_image() {
  local name=$1 tag=$2 parent=$3 ctx=$SMOKE_WORK/context/$1 parent_id hash
  rm -rf "$ctx"
  mkdir -p "$(dirname "$ctx")"
  cp -a "$here/$name" "$ctx"
  if declare -F "stage_${name//-/_}" > /dev/null; then "stage_${name//-/_}" "$ctx"; fi
  parent_id=$("$DOCKER" image inspect -f '{{.Id}}' "$parent") || die "$tag: no parent image $parent"
  hash=$( (cd "$ctx" && find . -type f -print0 | sort -z | xargs -0 sha256sum && echo "$parent_id") \
    | sha256sum | cut -c1-16)
  up_to_date "$tag" "$hash" && return 0
  local previous
  previous=$("$DOCKER" image inspect -f '{{.Id}}' "$tag" 2> /dev/null || true)
  timed "stand-in $tag: docker build" \
    "$DOCKER" build --network host --label "$LABEL=$hash" -t "$tag" "$ctx" \
    > "$SMOKE_WORK/build-$name.log" 2>&1 \
    || { tail -30 "$SMOKE_WORK/build-$name.log" >&2; die "docker build $tag (log: $SMOKE_WORK/build-$name.log)"; }
  remove_superseded "$previous"
}

# The previous build of a stand-in, once nothing is tagged with it any more (its children
# keep it alive until they are rebuilt too: a failure here is expected and ignored).
remove_superseded() {
  [[ -n $1 ]] || return 0
  [[ -z $("$DOCKER" image inspect -f '{{join .RepoTags ","}}' "$1" 2> /dev/null) ]] || return 0
  "$DOCKER" image rm "$1" > /dev/null 2>&1 || true
}

# The CA certificates this machine adds to its trust store (a TLS-inspecting proxy, a company
# CA): the images that download during their build (Maven Central, PyPI) must trust them too.
stage_ca() {
  mkdir -p "$1/extra-ca"
  local crt
  for crt in /usr/local/share/ca-certificates/*.crt /usr/local/share/ca-certificates/*/*.crt; do
    [[ -f $crt ]] && cp "$crt" "$1/extra-ca/"
  done
  touch "$1/extra-ca/.keep"
}
stage_maven() { stage_ca "$1"; }

# Cassandra's jars: exactly the runtime classpath cassandra-embedded/runtime resolves from Maven
# Central (its build writes the list; `mvn verify` has run before this script in CI).
stage_cassandra() {
  local list=$SMOKE_ROOT/cassandra-embedded/runtime/target/cassandra.classpath jar
  if [[ ! -s $list ]]; then
    (cd "$SMOKE_ROOT" && mvn -B -q -o generate-resources -pl cassandra-embedded/runtime) \
      || (cd "$SMOKE_ROOT" && mvn -B -q generate-resources -pl cassandra-embedded/runtime) \
      || die "cannot resolve cassandra-all (mvn generate-resources -pl cassandra-embedded/runtime)"
  fi
  mkdir -p "$1/lib"
  for jar in $(tr ':' ' ' < "$list"); do
    [[ -f $jar ]] || die "missing Cassandra jar $jar (rebuild cassandra-embedded/runtime)"
    cp "$jar" "$1/lib/"
    basename "$jar" >> "$1/lib/classpath"
  done
  stage_ca "$1"
}

all=(debian temurin-jre maven cassandra zookeeper haproxy prometheus)
(($# > 0)) && all=("$@")
for name in "${all[@]}"; do
  case $name in
    debian) build_debian ;;
    temurin-jre) build_image temurin-jre eclipse-temurin:17-jre debian:bookworm-slim ;;
    maven) build_image maven maven:3.9-eclipse-temurin-17 debian:bookworm-slim ;;
    cassandra) build_image cassandra cassandra:5.0 eclipse-temurin:17-jre ;;
    zookeeper) build_image zookeeper zookeeper:3.9 eclipse-temurin:17-jre ;;
    haproxy) build_image haproxy haproxy:3.0 debian:bookworm-slim ;;
    prometheus) build_image prometheus prom/prometheus:v2.53.0 debian:bookworm-slim ;;
    *) die "unknown stand-in $name" ;;
  esac
done
