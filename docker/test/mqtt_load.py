#!/usr/bin/python3
"""Devices publishing QoS 1 telemetry through one address (HAProxy) while the smoke test kills
containers; then checks over REST that every acknowledged message is stored.

Each device is one paho-mqtt client (Debian's python3-paho-mqtt) with its own connection. Every
--interval seconds a connected device publishes {"ts": <unique ms>, "values": {"seq": n}} at QoS 1;
a message counts as acknowledged when its PUBACK arrives (paho's on_publish), on whichever
connection carried it. A dropped connection is re-established by paho (through the same address,
so HAProxy picks a surviving node); messages still unacknowledged are re-sent by paho after
reconnecting, and count only if that attempt is acknowledged.

Runs until the file --stop exists, writing progress (total acknowledged messages, and
acknowledged messages per device since the --mark file last changed its content, with that
content, so a reader knows the counts belong to its mark) to --progress every second; then
waits up to --drain seconds for outstanding PUBACKs, disconnects, reads every device's stored
"seq" values over REST and compares. Exit status 0 only when nothing acknowledged is missing.

    mqtt_load.py --mqtt HOST:PORT --rest URL --token JWT --devices devices.json ...
"""

import argparse
import json
import os
import sys
import threading
import time
import urllib.request

import paho.mqtt.client as mqtt

TOPIC = "v1/devices/me/telemetry"


class Device:
    def __init__(self, index, name, device_id, access_token, host, port, base_ts):
        self.name = name
        self.device_id = device_id
        self.base_ts = base_ts
        self.seq = 0
        self.published = {}  # mid -> seq (written only by the publishing thread)
        self.acked = []  # (mid, time): appended by paho's network thread
        self.connected = threading.Event()
        self.connects = 0
        self.disconnects = 0
        self.client = mqtt.Client(client_id=f"smoke-{name}", clean_session=True)
        self.client.username_pw_set(access_token)
        self.client.reconnect_delay_set(min_delay=1, max_delay=2)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish
        self.client.connect_async(host, port, keepalive=30)
        self.client.loop_start()

    def _on_connect(self, client, userdata, flags, rc):
        if rc == 0:
            self.connects += 1
            self.connected.set()

    def _on_disconnect(self, client, userdata, rc):
        self.disconnects += 1
        self.connected.clear()

    def _on_publish(self, client, userdata, mid):
        self.acked.append((mid, time.time()))

    def publish(self):
        if not self.connected.is_set() or self.seq >= 10_000:
            return
        self.seq += 1
        payload = json.dumps({"ts": self.base_ts + self.seq, "values": {"seq": self.seq}})
        info = self.client.publish(TOPIC, payload, qos=1)
        self.published[info.mid] = self.seq

    def acked_seqs(self):
        return {self.published[mid] for mid, _ in list(self.acked) if mid in self.published}


def rest_get(url, token):
    request = urllib.request.Request(url, headers={"X-Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def stored_seqs(rest, token, device):
    url = (
        f"{rest}/api/plugins/telemetry/DEVICE/{device.device_id}/values/timeseries"
        f"?keys=seq&startTs={device.base_ts}&endTs={device.base_ts + 10_000_000}&limit=10000"
    )
    return {int(float(point["value"])) for point in rest_get(url, token).get("seq", [])}


def read_mark(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mqtt", required=True, help="host:port")
    parser.add_argument("--rest", required=True, help="base URL")
    parser.add_argument("--token", required=True, help="REST JWT")
    parser.add_argument("--devices", required=True, help="JSON [{name,id,accessToken}]")
    parser.add_argument("--interval", type=float, default=0.5)
    parser.add_argument("--stop", required=True)
    parser.add_argument("--mark", required=True)
    parser.add_argument("--progress", required=True)
    parser.add_argument("--drain", type=float, default=30)
    parser.add_argument("--max-seconds", type=float, default=600)
    args = parser.parse_args()

    host, port = args.mqtt.rsplit(":", 1)
    with open(args.devices) as f:
        listed = json.load(f)
    # One message per millisecond from an hour ago: unique timestamps (a second message with the
    # same key and timestamp would overwrite the first), at most 10,000 per device (REST's limit).
    base_ts = int(time.time() * 1000) - 3_600_000
    devices = [
        Device(i, d["name"], d["id"], d["accessToken"], host, int(port), base_ts)
        for i, d in enumerate(listed)
    ]

    started = time.time()
    next_tick = started
    mark_id, mark_time = "", 0.0
    last_progress = 0.0
    while not os.path.exists(args.stop):
        if time.time() - started > args.max_seconds:
            print(f"load: no stop file after {args.max_seconds:.0f} s, stopping", file=sys.stderr)
            break
        for device in devices:
            device.publish()
        now = time.time()
        if now - last_progress >= 1:
            last_progress = now
            mark = read_mark(args.mark)
            if mark != mark_id:
                # A new mark: count acknowledgements from now on (this process's clock).
                mark_id, mark_time = mark, now
            since_mark = [sum(1 for _, t in list(d.acked) if t > mark_time) for d in devices]
            progress = {
                "elapsed": round(now - started, 1),
                "acked": sum(len(d.acked) for d in devices),
                "published": sum(len(d.published) for d in devices),
                "connected": sum(1 for d in devices if d.connected.is_set()),
                "mark": mark_id,
                "devices_acked_since_mark": sum(1 for n in since_mark if n > 0),
                "acked_since_mark": sum(since_mark),
            }
            with open(args.progress + ".tmp", "w") as f:
                json.dump(progress, f)
            os.replace(args.progress + ".tmp", args.progress)
        next_tick += args.interval
        time.sleep(max(0.0, next_tick - time.time()))

    deadline = time.time() + args.drain
    while time.time() < deadline:
        if all(len(d.acked_seqs()) == len(d.published) for d in devices):
            break
        time.sleep(0.5)
    for device in devices:
        device.client.disconnect()
        device.client.loop_stop()

    published = sum(len(d.published) for d in devices)
    acked = 0
    missing = {}
    for device in devices:
        acked_seqs = device.acked_seqs()
        acked += len(acked_seqs)
        lost = sorted(acked_seqs - stored_seqs(args.rest, args.token, device))
        if lost:
            missing[device.name] = lost
    reconnected = sum(1 for d in devices if d.connects > 1)
    print(
        f"load: {len(devices)} devices, {published} messages published, {acked} acknowledged, "
        f"{published - acked} never acknowledged (allowed: no PUBACK, no promise); "
        f"{reconnected} devices reconnected; acknowledged but not stored: "
        f"{sum(len(v) for v in missing.values())}"
    )
    if missing:
        for name, lost in sorted(missing.items()):
            print(f"load: {name}: acknowledged, not stored: {lost[:20]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
