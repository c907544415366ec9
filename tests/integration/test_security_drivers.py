"""Security with the Java client and franz-go, through their conformance drivers
(mockbroker_conformance/drivers, docs/conformance.md) given the client's own settings with
``--config KEY=VALUE``: each produces and consumes in a group over SASL_SSL with SCRAM-SHA-512 and
with PLAIN, and over SSL with a client certificate; a wrong password fails with the client's
authentication error at once, not a timeout (docs/security.md)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Iterator

import pytest

from mockbroker.testing import KafkaCluster
from mockbroker_conformance.clients import CLIENTS
from mockbroker_conformance.model import ScenarioFailed
from mockbroker_conformance.process import DriverProcess
from tests.integration.support import in_ci

USERS = {"alice": "alice-secret"}
DEADLINE_S = 40.0


@pytest.fixture(scope="module")
def sasl_ssl() -> Iterator[KafkaCluster]:
    with KafkaCluster(brokers=2, listeners="SASL_SSL://127.0.0.1:0", sasl_users=USERS, request_log=False) as kafka:
        yield kafka


@pytest.fixture(scope="module")
def ssl_client_auth() -> Iterator[KafkaCluster]:
    with KafkaCluster(listeners="SSL://127.0.0.1:0", ssl_client_auth="required", request_log=False) as kafka:
        yield kafka


def _java_sasl(ca: str, mechanism: str, password: str) -> dict[str, str]:
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    return {
        "security.protocol": "SASL_SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca,
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": f'org.apache.kafka.common.security.{module} required username="alice" password="{password}";',
    }  # fmt: skip


def _java_ssl(ca: str) -> dict[str, str]:
    # Kafka's PEM keystore takes the certificate chain and the PKCS#8 key as values.
    directory = os.path.dirname(ca)
    with open(os.path.join(directory, "client.pem")) as cert, open(os.path.join(directory, "client.key")) as key:
        chain, private_key = cert.read(), key.read()
    return {
        "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": ca,
        "ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": chain, "ssl.keystore.key": private_key,
    }  # fmt: skip


def _go_sasl(ca: str, mechanism: str, password: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_SSL", "ssl.ca.location": ca, "sasl.mechanism": mechanism,
        "sasl.username": "alice", "sasl.password": password,
    }  # fmt: skip


def _go_ssl(ca: str) -> dict[str, str]:
    directory = os.path.dirname(ca)
    return {
        "security.protocol": "SSL", "ssl.ca.location": ca,
        "ssl.certificate.location": os.path.join(directory, "client.pem"),
        "ssl.key.location": os.path.join(directory, "client.key"),
    }  # fmt: skip


# How each driver is given a login: Java takes kafka-clients' settings, franz-go librdkafka's names
# (mockbroker_conformance/drivers/franz-go/security.go).
SASL: dict[str, Callable[[str, str, str], dict[str, str]]] = {"java": _java_sasl, "franz-go": _go_sasl}
SSL: dict[str, Callable[[str], dict[str, str]]] = {"java": _java_ssl, "franz-go": _go_ssl}


def _driver(client: str, bootstrap: str, config: dict[str, str]) -> DriverProcess:
    spec = CLIENTS[client]
    missing = spec.missing()
    if missing is not None:
        if in_ci():
            pytest.fail(f"{client}: {missing}; CI must run every test")
        pytest.skip(f"{client}: {missing}")
    argv = spec.argv(bootstrap, f"{client}-{uuid.uuid4().hex[:6]}")
    for key, value in config.items():
        argv += ["--config", f"{key}={value}"]
    return DriverProcess(client, argv)


async def _roundtrip(client: str, kafka: KafkaCluster, config: dict[str, str]) -> list[str]:
    """Produce three records, then consume them in a group and commit; the values consumed."""
    topic = f"t-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 1)  # kgo asks for no auto-creation
    driver = await _driver(client, kafka.bootstrap_servers, config).start(DEADLINE_S)
    try:
        records = [{"key": None, "value": f"m{i}", "partition": 0} for i in range(3)]
        await driver.call({"cmd": "produce", "topic": topic, "records": records}, "produced", DEADLINE_S)
        mark = await driver.send({"cmd": "subscribe", "topic": topic, "group": f"g-{topic}"})
        await driver.wait(
            lambda e: e.get("event") == "record" and e.get("value") == "m2", "the third record", DEADLINE_S, since=mark
        )
        committed = await driver.call({"cmd": "commit"}, "committed", DEADLINE_S)
        assert committed["offsets"] == {"0": 3}, committed
        return [e["value"] for e in driver.find(lambda e: e.get("event") == "record", since=mark)]
    finally:
        await driver.close(DEADLINE_S)


async def _failure(client: str, kafka: KafkaCluster, config: dict[str, str]) -> dict[str, object]:
    """Produce with a wrong password: the failure event the driver reports."""
    driver = await _driver(client, kafka.bootstrap_servers, config).start(DEADLINE_S)
    try:
        records = [{"key": None, "value": "m0", "partition": 0}]
        with pytest.raises(ScenarioFailed) as failed:
            await driver.call({"cmd": "produce", "topic": f"t-{uuid.uuid4().hex[:8]}", "records": records}, "produced", DEADLINE_S)
        (event,) = driver.find(lambda e: e.get("event") == "produce_failed")
        assert str(failed.value)
        return event
    finally:
        await driver.close(DEADLINE_S)


def _auth_failures(kafka: KafkaCluster) -> list[dict[str, object]]:
    return kafka.call(lambda: [e.to_json() for e in kafka.cluster.events if e.type == "authentication.failed"])


@pytest.mark.parametrize("client", ["java", "franz-go"])
@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "PLAIN"])
def test_sasl_ssl_group_roundtrip(sasl_ssl: KafkaCluster, client: str, mechanism: str) -> None:
    config = SASL[client](str(sasl_ssl.ssl_ca_path), mechanism, "alice-secret")
    assert asyncio.run(_roundtrip(client, sasl_ssl, config)) == ["m0", "m1", "m2"]


@pytest.mark.parametrize("client", ["java", "franz-go"])
def test_ssl_client_certificate_group_roundtrip(ssl_client_auth: KafkaCluster, client: str) -> None:
    config = SSL[client](str(ssl_client_auth.ssl_ca_path))
    assert asyncio.run(_roundtrip(client, ssl_client_auth, config)) == ["m0", "m1", "m2"]


# The client's own authentication error (a timeout would be TimeoutException or a context deadline):
# Java's SaslAuthenticationException; kgo, which retries a failed login like any metadata failure
# (forever by default: retries=2 bounds it), fails the record with its last error, kerr's
# SASL_AUTHENTICATION_FAILED.
AUTH_ERRORS = {"java": "SaslAuthenticationException: ", "franz-go": "last err: SASL_AUTHENTICATION_FAILED: "}


@pytest.mark.parametrize("client", ["java", "franz-go"])
def test_wrong_password_is_the_clients_authentication_error(sasl_ssl: KafkaCluster, client: str) -> None:
    config = SASL[client](str(sasl_ssl.ssl_ca_path), "SCRAM-SHA-512", "wrong")
    if client == "franz-go":
        config["retries"] = "2"
    event = asyncio.run(_failure(client, sasl_ssl, config))
    assert AUTH_ERRORS[client] in f"{event['error']}: {event['message']}", event
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in str(event["message"]), event
    assert any(f["details"]["mechanism"] == "SCRAM-SHA-512" for f in _auth_failures(sasl_ssl))  # type: ignore[index]
