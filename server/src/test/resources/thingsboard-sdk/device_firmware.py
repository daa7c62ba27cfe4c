"""ThingsBoard's own Python device SDK (tb-mqtt-client), unmodified, downloading its firmware.

Usage: device_firmware.py HOST PORT ACCESS_TOKEN CHUNK_SIZE
Connects, asks for a firmware update the SDK's way (subscribes to v2/fw/response/+, reads the
fw_* shared attributes, requests the chunks on v2/fw/request/{id}/chunk/{n}, verifies the checksum
itself), then reports UPDATED as a device would and prints what it received: "firmware TITLE
VERSION SIZE SHA256". Exits non-zero on the first thing that does not work.
"""
import hashlib
import sys
import threading
import time

from tb_device_mqtt import TBDeviceMqttClient, TBFirmwareState, TBPublishInfo


def wait_for(condition, what, seconds=60):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            print("timed out waiting for " + what, flush=True)
            sys.exit(2)
        time.sleep(0.05)


def main():
    host, port, token, chunk = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    client = TBDeviceMqttClient(host, port=port, username=token, chunk_size=chunk)
    received = {}
    done = threading.Event()

    # Called by the SDK once the checksum it computed matches fw_checksum.
    def on_firmware(tb_client, data, version):
        received["data"] = data
        received["version"] = version
        done.set()

    client.set_on_firmware_received_callback(on_firmware)
    client.connect()
    wait_for(client.is_connected, "CONNACK")
    client.get_firmware_update()
    wait_for(done.is_set, "the firmware")

    info = client.firmware_info
    report = client.send_telemetry({"current_fw_title": info["fw_title"],
                                    "current_fw_version": received["version"],
                                    "fw_state": TBFirmwareState.UPDATED.value})
    if report.get() != TBPublishInfo.TB_ERR_SUCCESS:
        print("fw_state not acknowledged", flush=True)
        sys.exit(3)
    data = received["data"]
    print("firmware %s %s %d %s" % (info["fw_title"], received["version"], len(data),
                                    hashlib.sha256(data).hexdigest()), flush=True)
    client.stop()
    client.disconnect()


if __name__ == "__main__":
    main()
