#!/usr/bin/env python3
"""The capacity model of docs/capacity.md: nodes and cores for a fleet, from measured costs.

    python3 bench/capacity.py                       # the table of docs/capacity.md
    python3 bench/capacity.py --devices 250000 --rate 0.2 --node-cores 16

Every cost is a parameter (defaults: the figures measured on the 2-core box, docs/capacity.md
says where each comes from). A node's message cost depends on its rate: below --high-rate
messages/s per node (or per Cassandra node) the low-rate figure applies.
"""

import argparse
import math

FLEETS = [
    (100_000, 1 / 60, "100,000 devices × 1/min"),
    (100_000, 1.0, "100,000 × 1/s"),
    (1_000_000, 1 / 60, "1,000,000 × 1/min"),
    (1_000_000, 1.0, "1,000,000 × 1/s"),
    (10_000_000, 1 / 60, "10,000,000 × 1/min"),
    (10_000_000, 1.0, "10,000,000 × 1/s"),
]


# name, default, meaning: every cost of the model, defaults as measured (docs/capacity.md).
COSTS = [
    ("server-us", 73.0, "server CPU µs per message, busy node"),
    ("server-low-us", 280.0, "server CPU µs per message, quiet node"),
    ("forward-us", 180.0, "CPU µs per forwarded message, busy nodes"),
    ("forward-low-us", 1_400.0, "the same, quiet nodes"),
    ("cassandra-us", 80.0, "Cassandra CPU µs per message per replica, busy"),
    ("cassandra-low-us", 360.0, "the same, quiet Cassandra node"),
    ("high-rate", 5_000.0, "msgs/s per node from which the busy figures apply"),
    ("connection-kib", 5.3, "heap KiB per connection"),
    ("node-cores", 8, "cores per server and per Cassandra node"),
    ("max-connections", 100_000, "connections per server node at most"),
    ("rf", 3, "Cassandra replication factor"),
    ("headroom", 0.7, "share of a node's cores planned for load"),
]


def arguments():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--devices", type=float, help="one fleet instead of the table's six")
    p.add_argument("--rate", type=float, default=1.0, help="messages per second per device (with --devices)")
    for name, default, meaning in COSTS:
        p.add_argument("--" + name, type=type(default), default=default, help=f"{meaning} [{default}]")
    return p.parse_args()


def fixed_point(start, step):
    """Iterates n -> step(n) until it settles (node counts depend on the per-node rate)."""
    n = start
    for _ in range(50):
        following = step(n)
        if following == n:
            return n
        n = following
    return n


def plan(a, devices, rate):
    total = devices * rate
    usable = a.node_cores * a.headroom

    def server_cores(n):
        busy = total / n >= a.high_rate
        storing = total * (a.server_us if busy else a.server_low_us) * 1e-6
        forwarding = total * (n - 1) / n * (a.forward_us if busy else a.forward_low_us) * 1e-6
        return storing, forwarding

    nodes = fixed_point(max(2, math.ceil(devices / a.max_connections)), lambda n: max(
        2, math.ceil(devices / a.max_connections), math.ceil(sum(server_cores(n)) / usable)))
    storing, forwarding = server_cores(nodes)

    def cassandra_cores(m):
        per_message = a.cassandra_us if total * a.rf / m >= a.high_rate else a.cassandra_low_us
        return total * per_message * 1e-6 * a.rf

    cassandra = fixed_point(a.rf, lambda m: max(a.rf, math.ceil(cassandra_cores(m) / usable)))
    return {
        "msgs": total,
        "per_node": total / nodes,
        "storing": storing,
        "forwarding": forwarding,
        "nodes": nodes,
        "heap_gib": devices / nodes * a.connection_kib / 1024 / 1024,
        "cassandra_cores": cassandra_cores(cassandra),
        "cassandra": cassandra,
    }


def main():
    a = arguments()
    fleets = [(a.devices, a.rate, f"{a.devices:,.0f} × {a.rate:g}/s")] if a.devices else FLEETS
    print(f"Server and Cassandra nodes of {a.node_cores} cores planned at {a.headroom:.0%}; "
          f"at most {a.max_connections:,} connections per server node; RF {a.rf}.\n")
    print("| fleet | msgs/s | server nodes | msgs/s per node | server cores: storing + forwarding"
          " (with headroom) | heap for connections per node | Cassandra cores, RF included (with headroom)"
          " | Cassandra nodes |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for devices, rate, label in fleets:
        p = plan(a, devices, rate)
        used = p["storing"] + p["forwarding"]
        print(f"| {label} | {p['msgs']:,.0f} | {p['nodes']} | {p['per_node']:,.0f} | "
              f"{p['storing']:,.1f} + {p['forwarding']:,.1f} ({used / a.headroom:,.1f}) | "
              f"{p['heap_gib']:.2f} GiB | {p['cassandra_cores']:,.1f} ({p['cassandra_cores'] / a.headroom:,.1f}) | "
              f"{p['cassandra']} |")


if __name__ == "__main__":
    main()
