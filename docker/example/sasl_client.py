"""The SASL_SSL example's client (docker/compose.yaml, `--profile sasl`): an application configured
as for production (SASL_SSL, SCRAM-SHA-512, a CA to trust) against mockbroker-sasl, and an
in-network tool on its PLAINTEXT listener (kafka-python and the standard library).

1. wait for /readyz; read GET /security: two listeners, PLAINTEXT and SASL_SSL, and the CA
   certificate (its PEM, since the file is in the broker's container);
2. over SASL_SSL: produce 3 records, then consume them in a group and commit;
3. over PLAINTEXT: read the same 3 records back, as a tool on the compose network would;
4. each client must be given its own listener's addresses (mockbroker-sasl:9093 on SASL_SSL,
   mockbroker-sasl:9092 on PLAINTEXT).
Prints {"result": "passed"} and exits 0 when all holds, 1 (with the reason on stderr) otherwise.

Environment: ADMIN_URL, ADMIN_TOKEN, SASL_BOOTSTRAP, PLAINTEXT_BOOTSTRAP, SASL_USERNAME,
SASL_PASSWORD, TOPIC, DEADLINE_S (120).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

ADMIN = os.environ.get("ADMIN_URL", "http://mockbroker-sasl:8092").rstrip("/")
TOKEN = os.environ.get("ADMIN_TOKEN")
SASL_BOOTSTRAP = os.environ.get("SASL_BOOTSTRAP", "mockbroker-sasl:9093")
PLAINTEXT_BOOTSTRAP = os.environ.get("PLAINTEXT_BOOTSTRAP", "mockbroker-sasl:9092")
TOPIC = os.environ.get("TOPIC", "orders")
DEADLINE = time.monotonic() + float(os.environ.get("DEADLINE_S", "120"))
CA_FILE = "/tmp/mockbroker-ca.pem"


class Failed(Exception):
    pass


def call(path: str) -> Any:
    request = urllib.request.Request(ADMIN + path)
    if TOKEN:
        request.add_header("Authorization", f"Bearer {TOKEN}")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def wait_ready() -> None:
    while time.monotonic() < DEADLINE:
        try:
            if call("/readyz").get("ready"):
                return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.5)  # polling the broker's readiness, with a deadline
    raise Failed("mockbroker-sasl never became ready")


def security() -> dict[str, Any]:
    answer: dict[str, Any] = call("/security")
    listeners = {x["name"]: x for x in answer["listeners"]}
    if set(listeners) != {"PLAINTEXT", "SASL_SSL"} or listeners["SASL_SSL"]["security_protocol"] != "SASL_SSL":
        raise Failed(f"expected a PLAINTEXT and a SASL_SSL listener, got {answer['listeners']}")
    if not answer.get("ssl_ca_pem"):
        raise Failed("GET /security gave no CA certificate")
    with open(CA_FILE, "w") as f:
        f.write(answer["ssl_ca_pem"])
    return listeners


def sasl_settings() -> dict[str, Any]:
    return {
        "bootstrap_servers": SASL_BOOTSTRAP, "security_protocol": "SASL_SSL", "ssl_cafile": CA_FILE,
        "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": os.environ.get("SASL_USERNAME", "app"),
        "sasl_plain_password": os.environ.get("SASL_PASSWORD", "app-secret"),
    }


def consume(settings: dict[str, Any], group: str, wanted: set[bytes]) -> set[bytes]:
    """Read in a group until every wanted value is seen, then commit."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(TOPIC, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False, **settings)
    seen: set[bytes] = set()
    try:
        while not wanted <= seen and time.monotonic() < DEADLINE:
            for records in consumer.poll(timeout_ms=500).values():
                seen.update(r.value for r in records)
        consumer.commit()
    finally:
        consumer.close()
    return seen


def brokers_given(settings: dict[str, Any]) -> set[tuple[str, int]]:
    """The brokers' addresses a client on these settings is given (DescribeCluster)."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(**settings)
    try:
        return {(b["host"], b["port"]) for b in admin.describe_cluster()["brokers"]}
    finally:
        admin.close()


def main() -> None:
    from kafka import KafkaProducer

    wait_ready()
    listeners = security()
    run = uuid.uuid4().hex[:8]
    values = {f"{run}-{i}".encode() for i in range(3)}
    producer = KafkaProducer(**sasl_settings())
    for value in sorted(values):
        producer.send(TOPIC, value).get(timeout=30)
    producer.close()
    for name, settings in (("SASL_SSL", sasl_settings()), ("PLAINTEXT", {"bootstrap_servers": PLAINTEXT_BOOTSTRAP})):
        seen = consume(settings, f"sasl-example-{name.lower()}-{run}", values)
        addresses = brokers_given(settings)
        if not values <= seen:
            raise Failed(f"over {name}: read {sorted(seen & values)} of {sorted(values)}")
        expected = {(h, int(p)) for h, _, p in (a.rpartition(":") for a in listeners[name]["bootstrap_servers"].split(","))}
        if addresses != expected:
            raise Failed(f"over {name}: given brokers {sorted(addresses)}, not {name}'s {sorted(expected)}")
        print(json.dumps({"listener": name, "records": len(values), "brokers": sorted(addresses)}), flush=True)
    print(json.dumps({"result": "passed", "runner": "sasl-client"}), flush=True)


if __name__ == "__main__":
    try:
        main()
    except Failed as exc:
        print(f"sasl-client: FAILED: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)
