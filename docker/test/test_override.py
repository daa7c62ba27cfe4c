#!/usr/bin/python3
"""Reads `docker-compose config` on stdin and writes a compose override file (argv[2]) for
docker/test/smoke.sh; prints the file's name. The compose files themselves are never changed.

Two kinds of entries:

- Open files (only where needed): every service whose ulimits.nofile exceeds the limit a container
  may have on this engine (argv[1]) is capped there. HAProxy also gets a smaller global maxconn
  (its -n option, which takes precedence over haproxy.cfg), since it refuses to start when it
  cannot have two descriptors per connection. Needed on engines without CAP_SYS_RESOURCE
  (sandboxes), where a container cannot get more open files than dockerd itself has.
- Test pace (always): the same health checks, run every 2 s instead of the operators' 10 s, so
  that the test notices a state change in seconds, with as many more retries as keep the time a
  check may fail before the container counts as unhealthy (not the checks that start a program of
  their own, Cassandra's cqlsh and Kafka's JVM: three cqlsh every 2 s would take half a core from
  the test); and Cassandra told not to wait for a large network to settle (cassandra.ring_delay_ms
  5 s, the gossip-settling wait skipped): on one Docker network every node hears the others within
  a second, and the 30 s waits a joining node makes twice would be most of the cluster test's
  start-up. What is checked does not change."""

import sys

import yaml

# Images whose health check starts a heavy program (cqlsh, a JVM): polled as the file says.
HEAVY_CHECKS = ("cassandra:", "apache/kafka:")
CASSANDRA_TEST_OPTS = "-Dcassandra.ring_delay_ms=5000 -Dcassandra.skip_wait_for_gossip_to_settle=0"
# How often the test polls the other health checks, in seconds.
POLL = 2


def seconds(duration):
    """A compose duration as `config` prints it ("10s", "1m30s", "3m") in seconds."""
    total, number = 0.0, ""
    units = {"h": 3600, "m": 60, "s": 1}
    for char in str(duration):
        if char.isdigit() or char == ".":
            number += char
        else:
            total += float(number) * units[char]
            number = ""
    return total + (float(number) if number else 0)


limit, out = int(sys.argv[1]), sys.argv[2]
services = yaml.safe_load(sys.stdin)["services"]
override = {}
for name, service in services.items():
    entry = {}
    image = str(service.get("image", ""))
    nofile = (service.get("ulimits") or {}).get("nofile")
    if isinstance(nofile, int):
        nofile = {"soft": nofile, "hard": nofile}
    if isinstance(nofile, dict) and max(int(nofile.get("soft", 0)), int(nofile.get("hard", 0))) > limit:
        entry["ulimits"] = {"nofile": {"soft": limit, "hard": limit}}
        if image.startswith("haproxy:"):
            entry["command"] = ["haproxy", "-W", "-db", "-n", str(limit // 2 - 500),
                                "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
    healthcheck = service.get("healthcheck")
    if healthcheck and not healthcheck.get("disable") and not image.startswith(HEAVY_CHECKS):
        # The whole health check, so that no merge rule of the compose version matters.
        tolerated = seconds(healthcheck.get("interval", "30s")) * int(healthcheck.get("retries", 3))
        entry["healthcheck"] = dict(healthcheck, interval=f"{POLL}s",
                                    retries=max(1, int(-(-tolerated // POLL))))
    if image.startswith("cassandra:"):
        environment = dict(service.get("environment") or {})
        extra = str(environment.get("JVM_EXTRA_OPTS") or "")
        environment["JVM_EXTRA_OPTS"] = (extra + " " + CASSANDRA_TEST_OPTS).strip()
        entry["environment"] = environment
    if entry:
        override[name] = entry
with open(out, "w") as f:
    yaml.safe_dump({"services": override}, f)
print(out)
