"""Markdown table of bench/run.sh's `locust` or `tsung` phase:
python3 bench/generator_report.py <run-dir> [split-s] [phase (locust)]

Reads <run>/<phase>-latencies.csv (PUBACK times: Locust's events.request listener, or the capture
bench/tsung/wire.py decoded), <run>/<phase>-ledger.csv (sent per connection), <run>/cpu-<phase>.txt
(run.sh's 1-s CPU samples), <run>/<phase>-check.json (StoredRowsCheck), <run>/<phase>-connack.csv
(CONNECT -> CONNACK, tsung) and <run>/<phase>.properties (clkTck, cores, title, generator, ...).
Standard library only."""
import csv
import json
import math
import os
import sys


def pct(sorted_vals, p):
    if not sorted_vals:
        return float("nan")
    i = max(0, math.ceil(p / 100 * len(sorted_vals)) - 1)
    return sorted_vals[i]


def lat_row(label, vals, span_s):
    v = sorted(vals)
    rate = len(v) / span_s if span_s > 0 else float("nan")
    return (f"| {label} | {len(v):,} | {rate:,.0f} | {pct(v, 50):.2f} | {pct(v, 95):.2f} | "
            f"{pct(v, 99):.2f} | {v[-1] if v else float('nan'):.2f} |")


def main():
    run = sys.argv[1]
    split_s = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    phase = sys.argv[3] if len(sys.argv) > 3 else "locust"
    props = {}
    with open(os.path.join(run, f"{phase}.properties")) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                props[k] = v
    clk = int(props.get("clkTck", "100"))

    ok, failed = [], 0
    with open(os.path.join(run, f"{phase}-latencies.csv")) as f:
        for row in csv.DictReader(f):
            if row["ok"] == "1":
                ok.append((int(row["ackEpochMillis"]), float(row["responseMs"])))
            else:
                failed += 1
    sent = conns = 0
    ledger = os.path.join(run, f"{phase}-ledger.csv")
    if os.path.exists(ledger):
        with open(ledger) as f:
            for row in csv.DictReader(f):
                conns += 1
                sent += int(row["sent"])
    ok.sort()
    t0 = ok[0][0] if ok else 0
    t1 = ok[-1][0] if ok else 0
    span = (t1 - t0) / 1000
    first = [r for t, r in ok if t - t0 < split_s * 1000]
    rest = [r for t, r in ok if t - t0 >= split_s * 1000]
    inflight = sent - len(ok) - failed

    title = props.get("title") or f"Locust {props.get('locustVersion', '?')} MqttUser against Fieldline"
    generator = props.get("generator", "Locust (1 process)")
    print(f"### {title}: {props.get('describe', '')}")
    print()
    print(f"Command: `{props.get('command', '')}` ({props.get('date', '')}; run {props.get('runDir', '')})")
    print()
    print(f"Publishes sent {sent:,} on {conns:,} connections; acked (PUBACK) {len(ok):,}; failed {failed:,}; "
          f"no PUBACK by the stop {inflight:,}.")
    print()
    print("| window (from the first PUBACK) | acked | msg/s | p50 ms | p95 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(lat_row("all", [r for _, r in ok], span))
    if rest and span - split_s >= 30:  # a split only when the rest is long enough to mean something
        print(lat_row(f"first {split_s:.0f} s", first, min(span, split_s)))
        print(lat_row(f"after {split_s:.0f} s", rest, span - split_s))
    print()
    buckets = {}
    for t, r in ok:
        buckets.setdefault((t - t0) // 10000, []).append(r)
    if len(buckets) > 1:
        print("Per 10 s from the first PUBACK (acked, p50 / p99 / max ms): " + "; ".join(
            f"{k * 10}-{k * 10 + 10} s {len(v):,}, {pct(sorted(v), 50):.1f} / {pct(sorted(v), 99):.1f} / {max(v):.0f}"
            for k, v in sorted(buckets.items())) + ".")
        print()

    if "tsung.mqtt_published" in props:
        print(f"Tsung's own counters: connected {props.get('tsung.mqtt_connected', '?')}, published "
              f"{props.get('tsung.mqtt_published', '?')}, PUBACKs received "
              f"{props.get('tsung.mqtt_server_pubacked', '?')}; packets the capture lost: "
              f"{props.get('captureDropped', '?')}.")
        print()

    connack_file = os.path.join(run, f"{phase}-connack.csv")
    if os.path.exists(connack_file):
        with open(connack_file) as f:
            connacks = sorted(float(row["responseMs"]) for row in csv.DictReader(f))
        if connacks:
            print(f"CONNECT -> CONNACK ({len(connacks):,} connections): p50 {pct(connacks, 50):.1f} ms, "
                  f"p99 {pct(connacks, 99):.1f} ms, max {connacks[-1]:.1f} ms.")
            print()

    samples = {}
    cpu_file = os.path.join(run, f"cpu-{phase}.txt")
    if os.path.exists(cpu_file):
        with open(cpu_file) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 4:
                    continue
                samples.setdefault(parts[1], []).append((int(parts[0]), int(parts[3])))
    if samples:
        cells = []
        for label in ("generator", "server", "cassandra", "machine"):
            s = samples.get(label)
            if not s or len(s) < 2 or s[-1][0] == s[0][0]:
                continue
            cores = (s[-1][1] - s[0][1]) / clk / ((s[-1][0] - s[0][0]) / 1000)
            name = {"generator": generator, "machine": "whole machine"}.get(label, label)
            cells.append(f"{name} {cores:.2f}")
        print("CPU over the phase, cores (of " + props.get("cores", "?") + "): " + ", ".join(cells) + ".")
        print()

    check = os.path.join(run, f"{phase}-check.json")
    if os.path.exists(check):
        with open(check) as f:
            c = json.load(f)
        print(f"Storage (StoredRowsCheck on the {phase} ledger): acked {c.get('acked'):,}, stored "
              f"{c.get('storedAcked'):,}, missing {c.get('missing'):,}, partial {c.get('partial'):,}, "
              f"stored but not acked {c.get('storedNotAcked'):,}.")
    else:
        print(f"Storage: not checked (no {phase}-check.json).")


if __name__ == "__main__":
    main()
