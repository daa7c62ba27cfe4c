"""Locust 2.47.0 locustfile for bench/run.sh's `locust` phase: Locust's own MqttUser
(locust.contrib.mqtt), one user per device token, QoS 1 telemetry at 1 msg/s to
v1/devices/me/telemetry. A publish's Locust response time is publish -> PUBACK (Fieldline sends it
after the Cassandra write).

Environment: LOCUST_MQTT_HOST, LOCUST_MQTT_PORT, LOCUST_DEVICES_CSV (name,id,token),
LOCUST_OUT (directory: latencies.csv and the ledger), LOCUST_KEYS [4], LOCUST_PHASE [locust].

Written by this file (Locust rounds its own stats to whole ms under 100 ms):
  <out>/locust-latencies.csv  ackEpochMillis,responseMs,ok  (every publish event, raw float times)
  <out>/<phase>-ledger.csv    username,baseTs,sent,ackedRanges  (StoredRowsCheck's ledger format:
                              message n of a connection carries ts = baseTs + n)
"""
import csv
import itertools
import json
import os
import random
import sys
import time
import warnings

import gevent
from locust import constant_pacing, events, task
from locust.contrib.mqtt import MqttClient, MqttUser

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ledger import ranges  # noqa: E402  (bench/ledger.py)

HOST = os.environ.get("LOCUST_MQTT_HOST", "127.0.0.1")
PORT = int(os.environ.get("LOCUST_MQTT_PORT", "1883"))
OUT = os.environ.get("LOCUST_OUT", ".")
KEYS = int(os.environ.get("LOCUST_KEYS", "4"))
PHASE = os.environ.get("LOCUST_PHASE", "locust")
TOPIC = "v1/devices/me/telemetry"
# paho 2.x warns once per client that MqttClient uses callback API version 1: noise in locust.log.
warnings.filterwarnings("ignore", message="Callback API version 1 is deprecated")

with open(os.environ["LOCUST_DEVICES_CSV"], newline="") as f:
    _TOKENS = [row["token"] for row in csv.DictReader(f)]
_next_token = itertools.cycle(_TOKENS)
_clients = []  # every LedgerClient, for the ledger written when Locust quits

_lat = open(os.path.join(OUT, "locust-latencies.csv"), "w", buffering=1 << 16)
_lat.write("ackEpochMillis,responseMs,ok\n")


@events.request.add_listener
def _on_request(request_type, name, response_time, exception, **kwargs):
    if name.startswith("publish"):
        _lat.write(f"{time.time() * 1000:.0f},{response_time:.3f},{0 if exception else 1}\n")


class LedgerClient(MqttClient):
    """Locust's MqttClient plus the sequence number of each publish, so the acknowledged messages
    can be checked in ts_kv. Acknowledged = Locust fired a successful publish event for it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.token = None
        self.base_ts = int(time.time() * 1000)
        self.sent = 0
        self.acked = set()
        self.seq_by_mid = {}
        self.early = set()
        _clients.append(self)

    def _on_publish_cb(self, client, userdata, mid, *rest):
        if mid in self._publish_requests:  # Locust fires a success event for it
            seq = self.seq_by_mid.pop(mid, None)
            if seq is None:
                self.early.add(mid)
            else:
                self.acked.add(seq)
        return super()._on_publish_cb(client, userdata, mid, *rest)

    def publish_seq(self, payload):
        seq = self.sent
        self.sent += 1
        info = self.publish(TOPIC, payload, qos=1)
        if info.rc == 0:
            if info.mid in self.early:
                self.early.discard(info.mid)
                self.acked.add(seq)
            else:
                self.seq_by_mid[info.mid] = seq


_NAMES = ["temperature", "humidity", "pressure", "battery", "voltage"]


class Device(MqttUser):
    client_cls = LedgerClient
    host = HOST
    port = PORT
    password = "unused"  # MqttUser sends the username only when a password is set too
    use_loop_selectors = True
    wait_time = constant_pacing(1)

    def __init__(self, environment):
        self.username = next(_next_token)  # read by MqttUser.__init__
        super().__init__(environment)
        self.client.token = self.username

    def on_start(self):
        deadline = time.time() + 30
        while not self.client.is_connected() and time.time() < deadline:
            gevent.sleep(0.05)
        self.client.base_ts = int(time.time() * 1000)

    @task
    def telemetry(self):
        c = self.client
        values = {
            "temperature": round(random.uniform(15, 30), 2),
            "humidity": round(random.uniform(30, 70), 1),
            "pressure": round(random.uniform(990, 1030), 1),
            "battery": random.randint(1, 100),
            "voltage": round(random.uniform(3.0, 4.2), 2),
        }
        payload = json.dumps({"ts": c.base_ts + c.sent, "values": {k: values[k] for k in _NAMES[:KEYS]}},
                             separators=(",", ":"))
        c.publish_seq(payload)


@events.quitting.add_listener
def _on_quitting(environment, **kwargs):
    _lat.flush()
    with open(os.path.join(OUT, f"{PHASE}-ledger.csv"), "w") as f:
        f.write("username,baseTs,sent,ackedRanges\n")
        for c in _clients:
            if c.token is not None and c.sent > 0:
                f.write(f"{c.token},{c.base_ts},{c.sent},{ranges(c.acked)}\n")
