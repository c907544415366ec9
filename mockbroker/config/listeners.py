"""Listeners by Kafka's names: ``listeners``, ``advertised.listeners`` and
``listener.security.protocol.map`` parsed and checked (Kafka's SocketServerConfigs and
EndPoint.parseListenerName rules), with the SASL and SSL settings they need."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol


class SecuritySettings(Protocol):
    """The settings these functions read (a ClusterConfig): typed by what they use, so that
    config.cluster, which checks itself with them, is not imported back."""

    host: str
    port: int
    listeners: str
    advertised_listeners: str
    listener_security_protocol_map: str
    sasl_enabled_mechanisms: str
    ssl_client_auth: str

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SERVED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_LISTENER = re.compile(r"^([A-Za-z0-9_]+)://(\[[0-9a-fA-F:.]*\]|[^:\[\]]*):(-?[0-9]+)$")


@dataclass(frozen=True, slots=True)
class ListenerSpec:
    name: str
    host: str  # "" binds every interface in Kafka; here: the cluster's host
    port: int
    security_protocol: str

    @property
    def tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")


def protocol_map(text: str) -> dict[str, str]:
    """listener.security.protocol.map: "NAME:PROTOCOL,..." on top of Kafka's default (each
    protocol's name to itself)."""
    out = {p: p for p in SECURITY_PROTOCOLS}
    for item in filter(None, (i.strip() for i in text.split(","))):
        name, sep, protocol = item.partition(":")
        if not sep or protocol.strip().upper() not in SECURITY_PROTOCOLS:
            raise ValueError(
                f"listener.security.protocol.map: {item!r} is not NAME:PROTOCOL with a protocol of {', '.join(SECURITY_PROTOCOLS)}"
            )
        out[name.strip().upper()] = protocol.strip().upper()
    return out


def parse_listeners(text: str, mapping: dict[str, str], key: str = "listeners") -> list[ListenerSpec]:
    out: list[ListenerSpec] = []
    for item in filter(None, (i.strip() for i in text.split(","))):
        match = _LISTENER.match(item)
        if match is None:
            raise ValueError(f"{key}: {item!r} is not NAME://host:port")
        name = match.group(1).upper()
        protocol = mapping.get(name)
        if protocol is None:
            raise ValueError(f"{key}: no security protocol for listener {name} in listener.security.protocol.map")
        port = int(match.group(3))
        if not 0 <= port <= 65535:
            raise ValueError(f"{key}: port {port} of {item!r} must be 0-65535")
        out.append(ListenerSpec(name, match.group(2).strip("[]"), port, protocol))
    if len({spec.name for spec in out}) != len(out):
        raise ValueError(f"{key}: each listener name must appear once")
    return out


def listener_of(config: SecuritySettings) -> ListenerSpec:
    """The brokers' listener: the one of ``listeners``, or PLAINTEXT on host and port."""
    specs = parse_listeners(config.listeners, protocol_map(config.listener_security_protocol_map))
    if not specs:
        return ListenerSpec("PLAINTEXT", config.host, config.port, "PLAINTEXT")
    spec = specs[0]
    return ListenerSpec(spec.name, spec.host or config.host, spec.port or config.port, spec.security_protocol)


def advertised_of(config: SecuritySettings) -> tuple[str | None, int | None]:
    """advertised.listeners' host and port for the brokers' listener (None: not given)."""
    specs = parse_listeners(config.advertised_listeners, protocol_map(config.listener_security_protocol_map), "advertised.listeners")
    if not specs:
        return None, None
    return specs[0].host or None, specs[0].port or None


def enabled_mechanisms(config: SecuritySettings) -> tuple[str, ...]:
    return tuple(m.strip().upper() for m in config.sasl_enabled_mechanisms.split(",") if m.strip())


def check_security(config: SecuritySettings) -> None:
    """ValueError naming the setting for what cannot be served."""
    mapping = protocol_map(config.listener_security_protocol_map)
    specs = parse_listeners(config.listeners, mapping)
    if len(specs) > 1:
        raise ValueError(
            f"listeners: {len(specs)} listeners given; mockbroker serves one listener per broker for now"
        )
    advertised = parse_listeners(config.advertised_listeners, mapping, "advertised.listeners")
    if advertised and (not specs or advertised[0].name != specs[0].name or len(advertised) > 1):
        raise ValueError("advertised.listeners must name the listener of listeners")
    for mechanism in enabled_mechanisms(config):
        if mechanism not in SERVED_MECHANISMS:
            raise ValueError(f"sasl.enabled.mechanisms: {mechanism} is not served (served: {', '.join(SERVED_MECHANISMS)})")
    if config.ssl_client_auth not in ("none", "requested", "required"):
        raise ValueError(f"ssl.client.auth must be none, requested or required, not {config.ssl_client_auth!r}")
