#!/usr/bin/env python3
"""Measures one window of a running Fieldline (for example the steady phase of a bench/run.sh run).

    bench/window.py HTTP_PORT SECONDS [LABEL]

Prints, for the window: messages and CQL requests per second (from the server's /metrics), CPU
cores and voluntary context switches per second of the server and of its embedded Cassandra (from
/proc, summed over their threads), CPU microseconds per message, and PUBACK latency percentiles
from the deltas of fieldline_mqtt_ack_latency_seconds (upper bounds of the histogram's buckets).
Finds the two JVMs by their main classes; Linux only. Used for the lever-by-lever windows of
docs/performance.md, where one server is changed live (e.g. Cassandra's timer slack) between
windows.
"""
import os
import re
import subprocess
import sys
import time
import urllib.request


def scrape(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    buckets, requests = {}, 0.0
    for line in text.splitlines():
        m = re.match(r'fieldline_mqtt_ack_latency_seconds_bucket\{.*le="([^"]+)".*\} (\S+)', line)
        if m:
            le = float("inf") if m.group(1) == "+Inf" else float(m.group(1))
            buckets[le] = buckets.get(le, 0.0) + float(m.group(2))
        m = re.match(r"fieldline_store_requests_total (\S+)", line)
        if m:
            requests = float(m.group(1))
    return buckets, requests


def pid_of(main_class):
    out = subprocess.run(["pgrep", "-f", main_class], capture_output=True, text=True).stdout.split()
    if not out:
        sys.exit(f"no process runs {main_class}")
    return out[0]


def cpu_and_switches(pid):
    # CPU from the process totals, which keep the time of threads that ended; context switches
    # summed over the live threads (a thread ending in the window loses its last few).
    stat = open(f"/proc/{pid}/stat").read()
    fields = stat[stat.rindex(")") + 2:].split()
    ticks = int(fields[11]) + int(fields[12])
    switches = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            status = open(f"/proc/{pid}/task/{task}/status").read()
            switches += int(re.search(r"voluntary_ctxt_switches:\s+(\d+)", status).group(1))
        except (OSError, AttributeError):
            pass  # a thread ended meanwhile
    return ticks, switches


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    port, seconds = sys.argv[1], float(sys.argv[2])
    label = sys.argv[3] if len(sys.argv) > 3 else "window"
    hz = os.sysconf("SC_CLK_TCK")
    server, cassandra = pid_of("io.fieldline.server.Main"), pid_of("CassandraDaemon")
    b0, r0 = scrape(port)
    s0, c0 = cpu_and_switches(server), cpu_and_switches(cassandra)
    time.sleep(seconds)
    b1, r1 = scrape(port)
    s1, c1 = cpu_and_switches(server), cpu_and_switches(cassandra)
    delta = {le: b1[le] - b0.get(le, 0.0) for le in b1}
    acked = delta.get(float("inf"), 0.0)
    if acked == 0:
        sys.exit("no acknowledgements in the window")

    def quantile(q):
        for le in sorted(delta):
            if delta[le] >= q * acked:
                return f"{le * 1000:.1f}" if le != float("inf") else "inf"

    server_cores = (s1[0] - s0[0]) / hz / seconds
    cassandra_cores = (c1[0] - c0[0]) / hz / seconds
    print(
        f"{label}: {acked / seconds:.0f} msgs/s, {(r1 - r0) / seconds:.0f} CQL requests/s; "
        f"cores server {server_cores:.3f} Cassandra {cassandra_cores:.3f}; "
        f"{(server_cores + cassandra_cores) * 1e6 * seconds / acked:.0f} us/msg; "
        f"context switches/s server {(s1[1] - s0[1]) / seconds:.0f} "
        f"Cassandra {(c1[1] - c0[1]) / seconds:.0f}; "
        f"PUBACK p50 <= {quantile(0.5)} ms, p99 <= {quantile(0.99)}, p99.9 <= {quantile(0.999)}"
    )


if __name__ == "__main__":
    main()
