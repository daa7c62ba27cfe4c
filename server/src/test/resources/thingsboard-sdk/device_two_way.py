"""ThingsBoard's own Python device SDK (tb-mqtt-client), unmodified, using the two-way device API.

Usage: device_two_way.py HOST PORT ACCESS_TOKEN
Connects, publishes a client attribute, asks for a client and a shared attribute, calls the
server's getCurrentTime, prints "ready", then waits for one shared-attribute push and answers one
server-side RPC (both sent by the test over REST). Prints what it saw; exits non-zero on the first
thing that does not work.
"""
import json
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


def show(label, content):
    print(label + " " + json.dumps(content, sort_keys=True), flush=True)


def main():
    host, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    client = TBDeviceMqttClient(host, port=port, username=token)
    pushes, rpcs, answers, times = [], [], [], []

    def on_rpc(request_id, request):
        rpcs.append(request)
        show("rpc", request)
        client.send_rpc_reply(request_id, {"answeredBy": "tb-sdk", "echo": request["params"]},
                              wait_for_publish=True)

    client.set_server_side_rpc_request_handler(on_rpc)
    client.subscribe_to_all_attributes(lambda content, error: (pushes.append(content),
                                                                show("push", content)))
    client.connect()
    wait_for(client.is_connected, "CONNACK")
    wait_for(lambda: client.rate_limits_received, "the getSessionLimits answer")

    if client.send_attributes({"serial": "SDK-1"}).get() != TBPublishInfo.TB_ERR_SUCCESS:
        print("client attribute not acknowledged", flush=True)
        sys.exit(3)
    client.request_attributes(client_keys=["serial"], shared_keys=["targetTemp"],
                              callback=lambda content, error: answers.append(content))
    wait_for(lambda: answers, "the attribute response")
    show("attributes", answers[0])
    client.send_rpc_call("getCurrentTime", {}, lambda rid, content, error: times.append(content))
    wait_for(lambda: times, "the getCurrentTime answer")
    show("time", times[0])

    print("ready", flush=True)
    wait_for(lambda: pushes and rpcs, "a shared-attribute push and a server-side RPC")
    client.stop()
    client.disconnect()


if __name__ == "__main__":
    main()
