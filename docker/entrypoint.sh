#!/usr/bin/env bash
# Entrypoint of the Fieldline image (installed as /opt/fieldline/bin/fieldline): runs the server in
# the foreground. exec makes java PID 1, so docker stop's SIGTERM reaches its shutdown hook, which
# stops taking connections, drains in-flight writes (their PUBACKs go out) and then exits.
#
#   JAVA_OPTS   JVM options, split on spaces (no quoting inside), e.g. "-Xms1g -Xmx1g"
#   FIELDLINE_* every server setting (docs/configuration.md); arguments are passed to Main.
#
# The classpath comes from <home>/classpath (Maven's order, written at image build): not 'lib/*',
# whose directory order would decide which reference.conf wins.
set -euo pipefail
home=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)

IFS=: read -r -a entries < "$home/classpath" || [[ ${#entries[@]} -gt 0 ]]
classpath=""
for entry in "${entries[@]}"; do
  classpath+="${classpath:+:}$home/$entry"
done

# One file descriptor per MQTT connection: warn when the open-files limit cannot hold the
# configured maximum plus room for Cassandra connections, jars and logs.
max_connections=${FIELDLINE_MQTT_MAX_CONNECTIONS:-15000}
open_files=$(ulimit -n)
if [[ $open_files != unlimited && $max_connections =~ ^[0-9]+$ ]] \
    && (( open_files < max_connections + 1024 )); then
  echo "fieldline: open-files limit ${open_files} is below FIELDLINE_MQTT_MAX_CONNECTIONS" \
    "(${max_connections}) + 1024; raise it (compose: ulimits.nofile)" >&2
fi

set -f # JAVA_OPTS is split on spaces but never glob-expanded
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:-} -cp "$classpath" io.fieldline.server.Main "$@"
