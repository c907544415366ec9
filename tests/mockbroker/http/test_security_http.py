"""The control API's security endpoints (docs/security.md): the listener and its CA, and SASL
users managed over HTTP without a password ever coming back (not in answers, not in events)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from tests.mockbroker.http.test_app import Api, _started


@pytest.fixture
async def api() -> AsyncIterator[tuple[MockCluster, Api]]:
    cluster = MockCluster(listeners="SASL_SSL://127.0.0.1:0", sasl_users={"alice": "alice-secret"})
    server, http = await _started(cluster)
    try:
        yield cluster, Api(http)
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()
    assert not cluster.internal_errors, cluster.internal_errors


async def test_security_names_the_protocol_and_the_ca(api: tuple[MockCluster, Api]) -> None:
    cluster, client = api
    security = await client.ok("GET", "/security")
    assert security["security_protocol"] == "SASL_SSL" and security["listener"] == "SASL_SSL"
    assert security["ssl_ca_path"] == cluster.ssl_ca_path and security["ssl_ca_path"].endswith("ca.pem")
    assert security["sasl_mechanisms"] == ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]
    with open(cluster.ssl_ca_path or "") as ca:  # the certificate itself, for a client elsewhere
        assert security["ssl_ca_pem"] == ca.read() and security["ssl_ca_pem"].startswith("-----BEGIN CERTIFICATE-----")
    [listener] = security["listeners"]
    assert (listener["name"], listener["security_protocol"], listener["ssl_client_auth"]) == ("SASL_SSL", "SASL_SSL", "none")
    assert listener["bootstrap_servers"] == cluster.bootstrap_servers


async def test_security_and_cluster_show_every_listener() -> None:
    cluster = MockCluster(
        listeners="PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0", brokers=2,
        listener_overrides={
            "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
            "listener.name.sasl_ssl.connections.max.reauth.ms": "120000",
            "listener.name.sasl_ssl.plain.connections.max.reauth.ms": "60000",
            "listener.name.sasl_ssl.max.connections": "50",
        },
    )
    server, http = await _started(cluster)
    try:
        client = Api(http)
        security = await client.ok("GET", "/security")
        assert [(x["name"], x["security_protocol"], x["sasl_mechanisms"]) for x in security["listeners"]] == [
            ("PLAINTEXT", "PLAINTEXT", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]), ("SASL_SSL", "SASL_SSL", ["SCRAM-SHA-512", "PLAIN"])
        ]
        keys = ("ssl_ca_path", "connections_max_reauth_ms", "connections_max_reauth_ms_by_mechanism", "max_connections")
        assert [tuple(x[k] for k in keys) for x in security["listeners"]] == [
            (None, 0, {}, 2**31 - 1), (cluster.ssl_ca_path, 120000, {"PLAIN": 60000}, 50)
        ]
        assert security["listeners"][1]["bootstrap_servers"] == cluster.bootstrap_servers_for("SASL_SSL")
        brokers = (await client.ok("GET", "/cluster"))["brokers"]
        for broker in brokers:
            node = cluster.brokers[broker["node_id"]]
            assert [(e["listener"], e["port"], e["advertised_port"]) for e in broker["listeners"]] == [
                (e.listener, e.port, e.port) for e in node.endpoints.values()
            ]
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()
    assert not cluster.internal_errors, cluster.internal_errors


async def test_users_are_managed_without_echoing_passwords(api: tuple[MockCluster, Api]) -> None:
    cluster, client = api
    assert (await client.call("PUT", "/users/bob", {"password": "bob-secret"}))[0] == 204
    users = await client.ok("GET", "/users")
    assert users == {"users": {"alice": ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], "bob": ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]}}
    assert (await client.call("DELETE", "/users/alice"))[0] == 204
    assert (await client.call("DELETE", "/users/alice"))[0] == 404
    assert list((await client.ok("GET", "/users"))["users"]) == ["bob"]
    recorded = json.dumps([e.to_json() for e in cluster.events])
    assert "control.user_added" in recorded and "secret" not in recorded
