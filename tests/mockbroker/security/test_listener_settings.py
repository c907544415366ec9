"""Listener settings by Kafka's names (mockbroker/config/listeners.py): what is accepted, and the
one-line errors naming the setting for what is not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.listeners import connections_max_reauth_ms, listener_max_connections, listener_ssl
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


def test_several_listeners_each_with_its_port_protocol_and_address() -> None:
    config = ClusterConfig.from_kafka({
        "listeners": "INTERNAL://127.0.0.1:19092,EXTERNAL://:29092",
        "advertised.listeners": "INTERNAL://mockbroker:19092,EXTERNAL://localhost:39092",
        "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL",
        "inter.broker.listener.name": "INTERNAL",
    }, brokers=2, host="0.0.0.0")
    state = ClusterState(config)
    assert [(s.name, s.host, s.port, s.security_protocol) for s in state.listener_specs] == [
        ("INTERNAL", "127.0.0.1", 19092, "PLAINTEXT"), ("EXTERNAL", "0.0.0.0", 29092, "SASL_SSL")
    ]
    second = state.brokers[2]
    assert [(e.listener, e.host, e.port, e.advertised_host, e.advertised_port) for e in second.endpoints.values()] == [
        ("INTERNAL", "127.0.0.1", 19093, "mockbroker", 19093), ("EXTERNAL", "0.0.0.0", 29093, "localhost", 39093)
    ]
    # the node's own address is its first listener's; each listener answers with its own
    assert (second.advertised_host, second.advertised_port) == ("mockbroker", 19093)
    assert second.address("EXTERNAL") == ("localhost", 39093)
    assert state.bootstrap_servers_for("external") == "localhost:39092,localhost:39093"


def test_only_the_first_listener_takes_the_cluster_port_and_advertised_port() -> None:
    config = ClusterConfig.from_kafka(
        {"listeners": "PLAINTEXT://:0,SSL://:0"}, port=9092, advertised_host="broker.example", advertised_port=19092
    )
    state = ClusterState(config)
    [node] = state.brokers.values()
    assert [(e.port, e.advertised_host, e.advertised_port) for e in node.endpoints.values()] == [
        (9092, "broker.example", 19092), (0, "broker.example", 0)
    ]


def test_a_listener_left_out_of_advertised_listeners_has_no_address() -> None:
    """Kafka registers only the advertised listeners: a client on the other one is given none."""
    config = ClusterConfig.from_kafka({
        "listeners": "PLAINTEXT://:0,SSL://:0", "advertised.listeners": "PLAINTEXT://kafka.example:9092",
    })
    [node] = ClusterState(config).brokers.values()
    assert node.address("PLAINTEXT") == ("kafka.example", 9092)
    assert node.address("SSL") is None


def test_listener_overrides_by_kafka_names() -> None:
    config = ClusterConfig.from_kafka({
        "listeners": "PLAINTEXT://:0,SASL_SSL://:0,SASL_PLAINTEXT://:0",
        "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.ssl.client.auth": "required",
    })
    state = ClusterState(config)
    assert state.listener_mechanisms == {
        "PLAINTEXT": ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
        "SASL_SSL": ("SCRAM-SHA-512",),
        "SASL_PLAINTEXT": ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
    }
    assert config.listener_overrides == {"listener.name.sasl_ssl.ssl.client.auth": "required",
                                         "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512"}


def test_per_listener_and_per_mechanism_settings_with_kafkas_precedence() -> None:
    """valuesWithPrefixOverride key by key: a listener's own value, else the broker-wide one;
    connections.max.reauth.ms also per mechanism (KIP-368: listener and mechanism, then listener,
    then the broker's)."""
    config = ClusterConfig.from_kafka({
        "listeners": "INTERNAL://:0,EXTERNAL://:0,SASL_SSL://:0",
        "listener.security.protocol.map": "INTERNAL:SSL,EXTERNAL:SASL_SSL,SASL_SSL:SASL_SSL",
        "ssl.keystore.location": "/certs/broker.pem",
        "ssl.key.password": "broker-secret",
        "ssl.truststore.location": "/certs/ca.pem",
        "listener.name.external.ssl.keystore.location": "/certs/external.pem",
        "listener.name.external.ssl.truststore.location": "/certs/external-ca.pem",
        "listener.name.internal.ssl.key.password": "internal-secret",
        "connections.max.reauth.ms": "600000",
        "listener.name.external.connections.max.reauth.ms": "300000",
        "listener.name.external.scram-sha-512.connections.max.reauth.ms": "60000",
        "listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms": "0",
        "max.connections": "100",
        "listener.name.external.max.connections": "10",
    })
    assert listener_ssl(config, "EXTERNAL") == ("/certs/external.pem", "broker-secret", "/certs/external-ca.pem")
    assert listener_ssl(config, "INTERNAL") == ("/certs/broker.pem", "internal-secret", "/certs/ca.pem")
    assert listener_ssl(config, "SASL_SSL") == ("/certs/broker.pem", "broker-secret", "/certs/ca.pem")
    assert connections_max_reauth_ms(config, "EXTERNAL", "SCRAM-SHA-512") == 60000
    assert connections_max_reauth_ms(config, "EXTERNAL", "PLAIN") == 300000
    assert connections_max_reauth_ms(config, "SASL_SSL", "OAUTHBEARER") == 0
    assert connections_max_reauth_ms(config, "SASL_SSL", "SCRAM-SHA-512") == 600000
    assert connections_max_reauth_ms(config, None, "SCRAM-SHA-512") == 600000
    assert [listener_max_connections(config, n) for n in ("INTERNAL", "EXTERNAL")] == [100, 10]


def test_per_listener_settings_by_every_source(tmp_path: Path) -> None:
    """The new keys by flags, environment (``___`` spells the mechanism's ``-``) and file."""
    from mockbroker.cli import parse_serve

    path = tmp_path / "mockbroker.toml"
    path.write_text(
        '[kafka]\nlisteners = "INTERNAL://:0,EXTERNAL://:0"\n'
        '"listener.security.protocol.map" = "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL"\n'
        '"listener.name.external.ssl.keystore.location" = "/certs/external.pem"\n'
    )
    env = {
        "MOCKBROKER_SET_LISTENER_NAME_EXTERNAL_SCRAM___SHA___512_CONNECTIONS_MAX_REAUTH_MS": "60000",
        "MOCKBROKER_SET_LISTENER_NAME_INTERNAL_MAX_CONNECTIONS": "5",
    }
    settings = parse_serve(
        ["--config", str(path), "--set", "listener.name.external.connections.max.reauth.ms=300000"], env
    )
    assert settings.cluster.listener_overrides == {
        "listener.name.external.ssl.keystore.location": "/certs/external.pem",
        "listener.name.external.scram-sha-512.connections.max.reauth.ms": "60000",
        "listener.name.internal.max.connections": "5",
        "listener.name.external.connections.max.reauth.ms": "300000",
    }


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"listeners": "PLAINTEXT://:0,PLAINTEXT://:1"}, "Each listener must have a different name"),
        ({"listeners": "PLAINTEXT://:9092,SSL://:9092"}, "Each listener must have a different port"),
        ({"listeners": "PLAINTEXT://:9092,SSL://:9093"}, "SSL and PLAINTEXT would both listen on port 9093"),
        ({"listeners": "CLIENT://:0"}, "No security protocol defined for listener CLIENT"),
        ({"listeners": "PLAINTEXT://:0", "listener.security.protocol.map": "CLIENT:SSL"},
         "No security protocol defined for listener PLAINTEXT"),  # a map given is the whole map
        ({"listeners": "SASL_SSL:/x"}, "Unable to parse SASL_SSL:/x to a broker endpoint"),
        ({"listener.security.protocol.map": "CLIENT:TLS"}, "Invalid security protocol `TLS` defined in listener.security.protocol.map"),
        ({"sasl.enabled.mechanisms": "GSSAPI"}, "sasl.enabled.mechanisms: GSSAPI is not served"),
        ({"ssl.client.auth": "always"}, "ssl.client.auth must be none, requested or required"),
        ({"listeners": "SSL://:0", "advertised.listeners": "PLAINTEXT://h:1"},
         "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
         "Found PLAINTEXT. The valid options based on the current configuration are SSL"),
        ({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"}, "cannot use the nonroutable meta-address 0.0.0.0"),
        ({"listeners": "PLAINTEXT://:0,SSL://:0", "inter.broker.listener.name": "SASL_SSL"},
         "inter.broker.listener.name must be a listener name defined in advertised.listeners"),
        ({"inter.broker.listener.name": "OTHER"},
         "Listener with name OTHER defined in inter.broker.listener.name not found in listener.security.protocol.map"),
        ({"control.plane.listener.name": "SSL"}, "control.plane.listener.name must be a listener name defined in listeners"),
        ({"listener.name.ssl.ssl.client.auth": "required"}, "listener.name.ssl.ssl.client.auth: no listener SSL"),
        ({"listener.name.plaintext.plain.sasl.jaas.config": "x"}, "listener.name.<listener>.<setting> is served for"),
        ({"listener.name.plaintext.sasl.server.callback.handler.class": "x"},
         "listener.name.<listener>.<setting> is served for sasl.enabled.mechanisms, ssl.client.auth, ssl.keystore.location"),
        ({"listener.name.plaintext.ssl.keystore.type": "JKS"}, "is served for"),
        ({"listener.name.plaintext.kerberos.connections.max.reauth.ms": "1"}, "is served for"),  # not a mechanism
        ({"listener.name.plaintext.plain.max.connections": "1"}, "is served for"),  # only reauth is per mechanism
        ({"listener.name.PLAINTEXT.max.connections": "1"},
         "listener.name.PLAINTEXT.max.connections: Kafka reads a listener's settings as listener.name.plaintext.max.connections"),
        ({"listener.name.plaintext.max.connections": "-1"},
         "Invalid value -1 for configuration max.connections: Value must be at least 0 (listener.name.plaintext.max.connections)"),
        ({"listener.name.plaintext.max.connections": "2147483648"},
         "Invalid value 2147483648 for configuration max.connections: Not a number of type INT"),
        ({"listener.name.plaintext.connections.max.reauth.ms": "soon"},
         "Invalid value soon for configuration connections.max.reauth.ms: Not a number of type LONG "
         "(listener.name.plaintext.connections.max.reauth.ms)"),
        ({"listener.name.plaintext.scram-sha-512.connections.max.reauth.ms": "1.5"},
         "Invalid value 1.5 for configuration connections.max.reauth.ms: Not a number of type LONG"),
        ({"listener.name.plaintext.sasl.enabled.mechanisms": "GSSAPI"}, "GSSAPI is not served"),
    ],
)
def test_refused_settings_name_the_key(settings: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ClusterConfig.from_kafka(settings, brokers=2)  # two brokers: the ports of two listeners may meet


def test_certificate_principal_is_the_subject_in_rfc2253_order() -> None:
    from mockbroker.security.tls import certificate_principal

    subject = ((("organizationName", "mockbroker"),), (("commonName", "client"),))
    assert certificate_principal({"subject": subject}) == "User:CN=client,O=mockbroker"
    assert certificate_principal(None) == "User:ANONYMOUS"


def test_listener_settings_from_flags_environment_and_file(tmp_path: Path) -> None:
    """Kafka's names by every source of `mockbroker serve`; listener.name.* keys of different
    sources add up (each is a setting of its own), a higher source winning per key."""
    from mockbroker.cli import parse_serve

    path = tmp_path / "listeners.toml"
    path.write_text(
        '[kafka]\nlisteners = "INTERNAL://:0,EXTERNAL://:0"\n'
        '"listener.security.protocol.map" = "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL"\n'
        'listener.name.external.ssl.client.auth = "requested"\n'  # unquoted: nested tables, read back
        '"listener.name.external.sasl.enabled.mechanisms" = "PLAIN"\n'
    )
    env = {
        "MOCKBROKER_SET_ADVERTISED_LISTENERS": "INTERNAL://mockbroker:9092,EXTERNAL://localhost:19092",
        "MOCKBROKER_SET_LISTENER_NAME_EXTERNAL_SASL_ENABLED_MECHANISMS": "SCRAM-SHA-512",
    }
    settings = parse_serve(["--config", str(path), "--set", "inter.broker.listener.name=INTERNAL"], env)
    c = settings.cluster
    assert (c.listeners, c.inter_broker_listener_name) == ("INTERNAL://:0,EXTERNAL://:0", "INTERNAL")
    assert c.listener_overrides == {
        "listener.name.external.ssl.client.auth": "requested",
        "listener.name.external.sasl.enabled.mechanisms": "SCRAM-SHA-512",  # the environment over the file
    }
    state = ClusterState(c)
    assert state.listener_mechanisms["EXTERNAL"] == ("SCRAM-SHA-512",)
    assert state.brokers[1].address("EXTERNAL") == ("localhost", 19092)


def test_listener_settings_errors_name_their_source() -> None:
    from mockbroker.cli import parse_serve
    from mockbroker.config.settings import SettingsError

    with pytest.raises(SettingsError, match=r"Each listener must have a different name.*\(from MOCKBROKER_SET_LISTENERS\)"):
        parse_serve([], {"MOCKBROKER_SET_LISTENERS": "PLAINTEXT://:0,PLAINTEXT://:1"})
