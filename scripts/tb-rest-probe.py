#!/usr/bin/env python3
"""Issue 30's baseline: what ThingsBoard's own REST client (tb-rest-client from PyPI, unmodified)
gets from a running Fieldline when it drives it as a tenant administrator's script does.

Each call of the script is made once through the client and recorded as OK or as the HTTP status
(or error) it met; nothing stops at the first failure. The table it prints is the list the tenancy
work must empty (docs/tenancy.md, "Baseline"). Not a test: the tests that must pass are the three
scripts of issue 30, in mvn verify, once the calls exist.

    python3 -m venv /tmp/tbrest && /tmp/tbrest/bin/pip install tb-rest-client
    /tmp/tbrest/bin/python scripts/tb-rest-probe.py http://127.0.0.1:8080 admin@fieldline.local <password>
"""
import sys
import time
import uuid

from tb_rest_client.rest import ApiException
from tb_rest_client.models import ApiKeyInfo, Customer, Device, DeviceId, User, UserId
from tb_rest_client.rest_client import RestClient

URL, USER, PASSWORD = sys.argv[1], sys.argv[2], sys.argv[3]
results = []


def call(name, fn):
    """Runs one call of the script; records OK or what it met. Returns the call's value or None."""
    try:
        value = fn()
        results.append((name, "OK"))
        return value
    except ApiException as e:
        results.append((name, f"{e.status} {e.reason}"))
    except Exception as e:  # the client's own failures (e.g. a body it cannot read)
        results.append((name, f"client error: {type(e).__name__}: {str(e)[:80]}"))
    return None


client = RestClient(base_url=URL)
call("POST /api/auth/login", lambda: client.login(USER, PASSWORD))
suffix = uuid.uuid4().hex[:8]
call("GET /api/auth/user", lambda: client.get_user())

device = call(
    "POST /api/device (save_device)",
    lambda: client.save_device(Device(name=f"probe-{suffix}", type="default")),
)
device_id = device.id if device else DeviceId(str(uuid.uuid4()), "DEVICE")
call("GET /api/tenant/device?deviceName=",
     lambda: client.get_tenant_device(f"probe-{suffix}"))
call("GET /api/device/{id}", lambda: client.get_device_by_id(device_id))
call("GET /api/device/info/{id}", lambda: client.get_device_info_by_id(device_id))
call("GET /api/devices?deviceIds=", lambda: client.get_devices_by_ids([device_id.id]))
call("GET /api/device/types", lambda: client.get_device_types())
call("GET /api/tenant/devices (page)", lambda: client.get_tenant_devices(page_size=10, page=0))
call("GET /api/deviceInfos/all (page)", lambda: client.get_tenant_device_infos(page_size=10, page=0))
credentials = call("GET /api/device/{id}/credentials",
                   lambda: client.get_device_credentials_by_device_id(device_id))
if credentials is not None:
    credentials.credentials_id = f"probe-token-{suffix}"
call("POST /api/device/credentials", lambda: client.update_device_credentials(credentials))
call("GET /api/deviceProfileInfo/default", lambda: client.get_default_device_profile_info())
call("GET /api/deviceProfileInfos", lambda: client.get_device_profile_infos(page_size=10, page=0))
call("GET /api/deviceProfiles", lambda: client.get_device_profiles(page_size=10, page=0))

now = int(time.time() * 1000)
call("POST /api/plugins/telemetry/DEVICE/{id}/timeseries/ANY",
     lambda: client.save_entity_telemetry(device_id, "ANY", {"ts": now, "values": {"t": 21.5}}))
call("POST /api/plugins/telemetry/DEVICE/{id}/timeseries/ANY/{ttl}",
     lambda: client.save_entity_telemetry_with_ttl(device_id, "ANY", 3600,
                                                   {"ts": now + 1, "values": {"t": 22.5}}))
call("GET …/values/timeseries (latest)", lambda: client.get_latest_timeseries(device_id, keys="t"))
call("GET …/values/timeseries/history",
     lambda: client.get_timeseries(device_id, start_ts=now - 60_000, end_ts=now + 60_000, keys="t"))
call("GET /api/deviceProfile/devices/keys/timeseries", lambda: client.get_timeseries_keys())
call("POST …/attributes/SERVER_SCOPE (save_device_attributes)",
     lambda: client.save_device_attributes(device_id, "SERVER_SCOPE", {"floor": 3}))
call("GET …/values/attributes", lambda: client.get_attributes(device_id))
call("GET …/keys/attributes", lambda: client.get_attribute_keys(device_id))
call("DELETE …/SERVER_SCOPE?keys=", lambda: client.delete_entity_attributes(device_id, "SERVER_SCOPE", keys="floor"))
call("POST /api/rpc/oneway/{id} (device offline)",
     lambda: client.handle_one_way_device_rpc_request(device_id, {"method": "reboot", "params": {}}))

customer = call("POST /api/customer", lambda: client.save_customer(Customer(title=f"Probe {suffix}")))
call("GET /api/customers (page)", lambda: client.get_customers(page_size=10, page=0))
call("GET /api/tenant/customers?customerTitle=", lambda: client.get_tenant_customer(f"Probe {suffix}"))
if customer is not None:
    call("POST /api/customer/{c}/device/{d}", lambda: client.assign_device_to_customer(customer.id, device_id))
    call("GET /api/customer/{c}/devices", lambda: client.get_customer_devices(customer.id, page_size=10, page=0))
    user = call("POST /api/user?sendActivationMail=false",
                lambda: client.save_user(User(email=f"probe-{suffix}@example.com", authority="CUSTOMER_USER",
                                              customer_id=customer.id, tenant_id=client.get_user().tenant_id),
                                         send_activation_mail=False))
    call("GET /api/customer/{c}/users", lambda: client.get_customer_users(customer.id, page_size=10, page=0))
    if user is not None:
        call("GET /api/user/{id}/activationLink", lambda: client.get_activation_link(user.id))
        call("POST /api/apiKey", lambda: client.save_api_key(ApiKeyInfo(user_id=user.id, description="probe")))
        call("DELETE /api/user/{id}", lambda: client.delete_user(user.id))
    call("DELETE /api/customer/device/{d}", lambda: client.unassign_device_from_customer(device_id))
    call("DELETE /api/customer/{c}", lambda: client.delete_customer(customer.id))
else:
    call("GET /api/user/{id} (no customer made)", lambda: client.get_user_by_id(UserId(str(uuid.uuid4()), "USER")))
call("DELETE /api/device/{id}", lambda: client.delete_device(device_id))
call("POST /api/auth/logout", lambda: client.logout())

width = max(len(name) for name, _ in results)
for name, outcome in results:
    print(f"| {name.ljust(width)} | {outcome} |")
failed = sum(1 for _, outcome in results if outcome != "OK")
print(f"{len(results) - failed} of {len(results)} calls answered as the client expects; {failed} not")
