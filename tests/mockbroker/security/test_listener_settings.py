"""Listener settings by Kafka's names (mockbroker/config/listeners.py): what is accepted, and the
one-line errors naming the setting for what is not."""

from __future__ import annotations

import pytest

from mockbroker.config.cluster import ClusterConfig
from mockbroker.state import ClusterState


def test_default_is_one_plaintext_listener() -> None:
    state = ClusterState(ClusterConfig())
    assert (state.listener.name, state.listener.security_protocol) == ("PLAINTEXT", "PLAINTEXT")
    assert state.ssl_ca_path is None


def test_kafka_names_and_the_protocol_map() -> None:
    config = ClusterConfig.from_kafka({
        "listeners": "CLIENT://127.0.0.1:0",
        "advertised.listeners": "CLIENT://kafka.example:19092",
        "listener.security.protocol.map": "CLIENT:SASL_SSL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "ssl.client.auth": "requested",
    }, brokers=2)
    state = ClusterState(config)
    assert (state.listener.name, state.listener.security_protocol) == ("CLIENT", "SASL_SSL")
    assert state.sasl_mechanisms == ("SCRAM-SHA-512",)
    assert [(n.advertised_host, n.advertised_port) for n in state.brokers.values()] == [
        ("kafka.example", 19092), ("kafka.example", 19093)
    ]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"listeners": "PLAINTEXT://:0,SASL_SSL://:0"}, "one listener per broker"),
        ({"listeners": "CLIENT://:0"}, "no security protocol for listener CLIENT"),
        ({"listeners": "SASL_SSL:/x"}, "is not NAME://host:port"),
        ({"listener.security.protocol.map": "CLIENT:TLS"}, "listener.security.protocol.map"),
        ({"sasl.enabled.mechanisms": "GSSAPI"}, "sasl.enabled.mechanisms: GSSAPI is not served"),
        ({"ssl.client.auth": "always"}, "ssl.client.auth must be none, requested or required"),
        ({"listeners": "SSL://:0", "advertised.listeners": "PLAINTEXT://h:1"}, "advertised.listeners must name"),
    ],
)
def test_refused_settings_name_the_key(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ClusterConfig.from_kafka(settings)


def test_certificate_principal_is_the_subject_in_rfc2253_order() -> None:
    from mockbroker.security.tls import certificate_principal

    subject = ((("organizationName", "mockbroker"),), (("commonName", "client"),))
    assert certificate_principal({"subject": subject}) == "User:CN=client,O=mockbroker"
    assert certificate_principal(None) == "User:ANONYMOUS"
