"""What a load generator's MQTT traffic shows on the wire: python3 bench/tsung/wire.py <pcap> <mqtt-port> <out-dir> <phase>

bench/run.sh's `tsung` phase captures the traffic on 127.0.0.1 with tcpdump while Tsung runs, because
Tsung's MQTT plugin keeps no per-message record (its statistics are means per 10 s, no percentiles,
and no list of what was acknowledged). Wireshark's tshark decodes the capture (its MQTT dissector,
TCP reassembled); this script pairs, per connection, each CONNECT with its CONNACK and each QoS 1
PUBLISH with the PUBACK of the same packet identifier, and writes:

  <out>/<phase>-latencies.csv  ackEpochMillis,responseMs,ok   PUBLISH -> PUBACK, one row per PUBLISH
                                                              (ok 0: no PUBACK in the capture)
  <out>/<phase>-connack.csv    connackEpochMillis,responseMs  CONNECT -> CONNACK
  <out>/<phase>-ledger.csv     username,baseTs,sent,ackedRanges  StoredRowsCheck's ledger: the
                               messages carry ts = baseTs + n (n = 0, 1, ... per connection, as the
                               phase's Tsung session writes them); n is acknowledged when its
                               PUBLISH got a PUBACK
  <out>/<phase>-wire.properties  counts (frames, connections, publishes, pubacks, unmatched)

Times are the capture's (the kernel's, as packets cross the loopback interface): the latency the
client sees, without the client's own scheduling. Standard library only, besides tshark.
"""
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict, deque

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ledger import ranges  # noqa: E402  (bench/ledger.py)

CONNECT, CONNACK, PUBLISH, PUBACK = 1, 2, 3, 4
HAS_ID = {PUBLISH, PUBACK, 8, 9, 10, 11}  # the packet types a packet identifier appears with


def payload_ts(text):
    """The "ts" of a telemetry payload as tshark prints mqtt.msg (hex, with or without colons)."""
    raw = text.replace(":", "")
    try:
        body = bytes.fromhex(raw).decode("utf-8")
    except ValueError:
        body = text  # printed as text
    try:
        return int(json.loads(body)["ts"])
    except (ValueError, KeyError, TypeError):
        return None


class Connection:
    def __init__(self):
        self.username = None
        self.connect_at = None
        self.sent = {}  # ts -> PUBLISH time
        self.waiting = defaultdict(deque)  # packet id -> [(ts, time)] not acknowledged yet
        self.acked = {}  # ts -> PUBACK time


def main():
    pcap, port, out, phase = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    command = [
        "tshark", "-r", pcap, "-n", "-d", f"tcp.port=={port},mqtt", "-Y", "mqtt",
        "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=,",
        "-e", "frame.time_epoch", "-e", "tcp.srcport", "-e", "tcp.dstport",
        "-e", "mqtt.msgtype", "-e", "mqtt.msgid", "-e", "mqtt.username", "-e", "mqtt.msg",
    ]
    connections = defaultdict(Connection)
    connack_rows = []
    frames = publishes = pubacks = unmatched = undecoded = 0
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as tshark:
        for line in tshark.stdout:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 7:
                continue
            frames += 1
            at = float(fields[0]) * 1000
            src, dst = int(fields[1]), int(fields[2])
            types = [int(t) for t in fields[3].split(",") if t]
            ids = [int(i) for i in fields[4].split(",") if i]
            messages = [m for m in fields[6].split(",") if m]
            from_client = dst == port
            conn = connections[src if from_client else dst]
            id_at = msg_at = 0
            for kind in types:
                packet_id = None
                if kind in HAS_ID and id_at < len(ids):
                    packet_id = ids[id_at]
                    id_at += 1
                if kind == CONNECT and from_client:
                    conn.username = fields[5] or conn.username
                    conn.connect_at = at
                elif kind == CONNACK and not from_client and conn.connect_at is not None:
                    connack_rows.append((int(at), at - conn.connect_at))
                    conn.connect_at = None
                elif kind == PUBLISH and from_client:
                    ts = payload_ts(messages[msg_at]) if msg_at < len(messages) else None
                    msg_at += 1
                    if ts is None or packet_id is None:
                        undecoded += 1
                        continue
                    publishes += 1
                    conn.sent.setdefault(ts, at)
                    conn.waiting[packet_id].append((ts, at))
                elif kind == PUBACK and not from_client:
                    pubacks += 1
                    queue = conn.waiting.get(packet_id)
                    if not queue:
                        unmatched += 1
                        continue
                    ts, _ = queue.popleft()
                    conn.acked.setdefault(ts, at)
    if tshark.returncode != 0:
        sys.exit(f"tshark exited with {tshark.returncode}")

    with open(os.path.join(out, f"{phase}-latencies.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ackEpochMillis", "responseMs", "ok"])
        for conn in connections.values():
            for ts, sent_at in conn.sent.items():
                acked_at = conn.acked.get(ts)
                if acked_at is None:
                    w.writerow([int(sent_at), "", 0])
                else:
                    w.writerow([int(acked_at), f"{acked_at - sent_at:.3f}", 1])
    with open(os.path.join(out, f"{phase}-connack.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["connackEpochMillis", "responseMs"])
        for at, ms in sorted(connack_rows):
            w.writerow([at, f"{ms:.3f}"])
    with open(os.path.join(out, f"{phase}-ledger.csv"), "w") as f:
        f.write("username,baseTs,sent,ackedRanges\n")
        for conn in connections.values():
            if conn.username is None or not conn.sent:
                continue
            base = min(conn.sent)
            sent = max(conn.sent) - base + 1
            acked = ranges(ts - base for ts in conn.acked)
            f.write(f"{conn.username},{base},{sent},{acked}\n")
    with open(os.path.join(out, f"{phase}-wire.properties"), "w") as f:
        f.write(f"frames={frames}\nconnections={len(connections)}\npublishes={publishes}\n"
                f"pubacks={pubacks}\nunmatchedPubacks={unmatched}\nundecodedPublishes={undecoded}\n"
                f"connacks={len(connack_rows)}\n")
    print(f"wire: {frames:,} frames, {len(connections):,} connections, {publishes:,} publishes, "
          f"{pubacks:,} pubacks ({unmatched:,} unmatched), {len(connack_rows):,} connacks, "
          f"{undecoded:,} publishes not decoded")


if __name__ == "__main__":
    main()
