#!/usr/bin/python3
"""Reads `docker-compose config` on stdin; for every service whose ulimits.nofile exceeds the
limit a container may have on this engine (argv[1]), writes a compose override file (argv[2])
that caps it there, and prints the file's name. HAProxy also gets a smaller global maxconn
(its -n option, which takes precedence over haproxy.cfg), since it refuses to start when it cannot
have two descriptors per connection. Prints nothing, and writes nothing, when no cap is needed.

Used by docker/test/smoke.sh on engines without CAP_SYS_RESOURCE (sandboxes), where a container
cannot get more open files than dockerd itself has."""

import sys

import yaml

limit, out = int(sys.argv[1]), sys.argv[2]
services = yaml.safe_load(sys.stdin)["services"]
override = {}
for name, service in services.items():
    nofile = (service.get("ulimits") or {}).get("nofile")
    if isinstance(nofile, int):
        nofile = {"soft": nofile, "hard": nofile}
    if not isinstance(nofile, dict):
        continue
    if max(int(nofile.get("soft", 0)), int(nofile.get("hard", 0))) <= limit:
        continue
    entry = {"ulimits": {"nofile": {"soft": limit, "hard": limit}}}
    if str(service.get("image", "")).startswith("haproxy:"):
        entry["command"] = ["haproxy", "-W", "-db", "-n", str(limit // 2 - 500),
                            "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
    override[name] = entry
if override:
    with open(out, "w") as f:
        yaml.safe_dump({"services": override}, f)
    print(out)
