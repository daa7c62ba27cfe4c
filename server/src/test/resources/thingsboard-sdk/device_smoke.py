"""ThingsBoard's own Python device SDK (tb-mqtt-client), unmodified, against a Fieldline server.

Usage: device_smoke.py HOST PORT ACCESS_TOKEN MESSAGES
Connects the way the SDK always does (MQTT 5, its subscriptions, the getSessionLimits client-side
RPC), publishes MESSAGES telemetry messages and one attributes message at QoS 1, each waited for,
and prints what the SDK learned. Exits non-zero on the first thing that does not work.
"""
import sys
import time

from tb_device_mqtt import TBDeviceMqttClient, TBPublishInfo


def wait_for(condition, what, seconds=30):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            print("timed out waiting for " + what, flush=True)
            sys.exit(2)
        time.sleep(0.05)


def main():
    host, port, token, messages = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    client = TBDeviceMqttClient(host, port=port, username=token)
    client.connect()
    wait_for(client.is_connected, "CONNACK")
    # The SDK asks for its session limits right after connecting and applies the answer.
    wait_for(lambda: client.rate_limits_received, "the getSessionLimits answer")
    for i in range(messages):
        result = client.send_telemetry({"sdkCounter": i}).get()
        if result != TBPublishInfo.TB_ERR_SUCCESS:
            print("telemetry %d not acknowledged: %r" % (i, result), flush=True)
            sys.exit(3)
    result = client.send_attributes({"sdkVersion": "1.13"}).get()
    if result != TBPublishInfo.TB_ERR_SUCCESS:
        print("attributes not acknowledged: %r" % (result,), flush=True)
        sys.exit(4)
    print("protocol=%d max_inflight=%d" % (client._client._protocol,
                                            client._client._max_inflight_messages), flush=True)
    client.stop()
    client.disconnect()


if __name__ == "__main__":
    main()
