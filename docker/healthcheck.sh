#!/usr/bin/env bash
# HEALTHCHECK of the Fieldline image (installed as /opt/fieldline/bin/healthcheck): healthy when
# GET /health/ready on the local HTTP listener answers 200, i.e. Cassandra answers and the schema
# is in place, and in a cluster the node is connected to ZooKeeper and registered. Plain bash
# (/dev/tcp), so it does not depend on curl or wget being in the base image.
# Assumes the listener accepts connections on 127.0.0.1 (FIELDLINE_HTTP_HOST 0.0.0.0, the default).
set -u
port=${FIELDLINE_HTTP_PORT:-8080}
exec 3<>"/dev/tcp/127.0.0.1/${port}" || exit 1
printf 'GET /health/ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
IFS= read -r -t 5 status_line <&3 || exit 1
[[ $status_line =~ ^HTTP/1\.[01]\ 200 ]]
