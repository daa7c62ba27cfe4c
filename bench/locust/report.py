"""Markdown table of bench/run.sh's `locust` phase: python3 bench/locust/report.py <run-dir> [split-s]

Reads <run>/locust-latencies.csv (raw float PUBACK times from the events.request listener),
<run>/locust-ledger.csv (sent per connection), <run>/cpu-locust.txt (run.sh's 1-s CPU samples),
<run>/locust-check.json (StoredRowsCheck) and <run>/locust.properties (clkTck, devices, duration).
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
    props = {}
    with open(os.path.join(run, "locust.properties")) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                props[k] = v
    clk = int(props.get("clkTck", "100"))

    ok, failed = [], 0
    with open(os.path.join(run, "locust-latencies.csv")) as f:
        for row in csv.DictReader(f):
            if row["ok"] == "1":
                ok.append((int(row["ackEpochMillis"]), float(row["responseMs"])))
            else:
                failed += 1
    sent = conns = 0
    ledger = os.path.join(run, "locust-ledger.csv")
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

    print(f"### Locust {props.get('locustVersion', '?')} MqttUser against Fieldline: {props.get('describe', '')}")
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

    samples = {}
    cpu_file = os.path.join(run, "cpu-locust.txt")
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
            name = {"generator": "Locust (1 process)", "machine": "whole machine"}.get(label, label)
            cells.append(f"{name} {cores:.2f}")
        print("CPU over the phase, cores (of " + props.get("cores", "?") + "): " + ", ".join(cells) + ".")
        print()

    check = os.path.join(run, "locust-check.json")
    if os.path.exists(check):
        with open(check) as f:
            c = json.load(f)
        print(f"Storage (StoredRowsCheck on the Locust ledger): acked {c.get('acked'):,}, stored "
              f"{c.get('storedAcked'):,}, missing {c.get('missing'):,}, partial {c.get('partial'):,}, "
              f"stored but not acked {c.get('storedNotAcked'):,}.")
    else:
        print("Storage: not checked (no locust-check.json).")


if __name__ == "__main__":
    main()
