"""Listeners by Kafka's names: ``listeners``, ``advertised.listeners``,
``listener.security.protocol.map`` and ``inter.broker.listener.name`` parsed and checked with
Kafka's rules and messages (SocketServerConfigs.listenerListToEndPoints, AbstractKafkaConfig and
KafkaConfig.validateValues), with the SASL and SSL settings they need.

Several listeners per broker, each on its own port with its own security protocol; every broker
has the same listeners (one config for the cluster), broker i on each listener's port + i.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol


class SecuritySettings(Protocol):
    """The settings these functions read (a ClusterConfig): typed by what they use, so that
    config.cluster, which checks itself with them, is not imported back."""

    host: str
    port: int
    brokers: int
    listeners: str
    advertised_listeners: str
    listener_security_protocol_map: str
    inter_broker_listener_name: str
    control_plane_listener_name: str
    sasl_enabled_mechanisms: str
    ssl_client_auth: str
    listener_overrides: dict[str, str]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SERVED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
# SocketServerConfigs.URI_PARSE_REGEXP: NAME://host:port, an IPv6 host in brackets.
_LISTENER = re.compile(r"^([A-Za-z0-9_]+)://(\[[0-9a-fA-F:.]*\]|[^:\[\]]*):(-?[0-9]+)$")
# The per-listener settings Kafka reads as listener.name.<name>.<setting> and mockbroker serves.
LISTENER_OVERRIDABLE = ("sasl.enabled.mechanisms", "ssl.client.auth")


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
    """listener.security.protocol.map: "NAME:PROTOCOL,...". Unset, Kafka's default maps each
    protocol's name to itself; set, it is the whole map (AbstractKafkaConfig
    .effectiveListenerSecurityProtocolMap), so a listener named PLAINTEXT needs PLAINTEXT:PLAINTEXT."""
    if not text.strip():
        return {p: p for p in SECURITY_PROTOCOLS}
    out: dict[str, str] = {}
    for item in filter(None, (i.strip() for i in text.split(","))):
        name, sep, protocol = item.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"Error parsing configuration property 'listener.security.protocol.map': {item!r} is not NAME:PROTOCOL")
        if protocol.strip().upper() not in SECURITY_PROTOCOLS:
            raise ValueError(
                f"Invalid security protocol `{protocol.strip()}` defined in listener.security.protocol.map"
                f" (one of {', '.join(SECURITY_PROTOCOLS)})"
            )
        out[name.strip().upper()] = protocol.strip().upper()
    return out


def parse_listeners(text: str, mapping: dict[str, str], key: str = "listeners") -> list[ListenerSpec]:
    """``listeners`` or ``advertised.listeners``: ValueError with Kafka's message, prefixed as
    Kafka's "Error creating broker listeners from '...'"."""
    out: list[ListenerSpec] = []
    items = [i.strip() for i in text.split(",") if i.strip()]
    prefix = f"{key}: Error creating broker listeners from '{text}'"
    for item in items:
        match = _LISTENER.match(item)
        if match is None:
            raise ValueError(f"{prefix}: Unable to parse {item} to a broker endpoint (NAME://host:port)")
        name = match.group(1).upper()
        protocol = mapping.get(name)
        if protocol is None:
            raise ValueError(f"{prefix}: No security protocol defined for listener {name}")
        port = int(match.group(3))
        if not 0 <= port <= 65535:
            raise ValueError(f"{prefix}: port {port} of {item!r} must be 0-65535")
        out.append(ListenerSpec(name, match.group(2).strip("[]"), port, protocol))
    if len({spec.name for spec in out}) != len(out):
        raise ValueError(f"{prefix}: Each listener must have a different name, listeners: {text}")
    ports = [spec.port for spec in out if spec.port]
    if key == "listeners" and len(set(ports)) != len(ports):  # advertised ones may share a port (a proxy)
        raise ValueError(f"{prefix}: Each listener must have a different port, listeners: {text}")
    return out


def listeners_of(config: SecuritySettings) -> list[ListenerSpec]:
    """The brokers' listeners, in the order given: those of ``listeners``, or PLAINTEXT on host and
    port. A host left empty is the cluster's host; the first listener's port 0 is the cluster's
    port (``--port``), another's a free port."""
    specs = parse_listeners(config.listeners, protocol_map(config.listener_security_protocol_map))
    if not specs:
        return [ListenerSpec("PLAINTEXT", config.host, config.port, "PLAINTEXT")]
    return [
        ListenerSpec(s.name, s.host or config.host, s.port or (config.port if i == 0 else 0), s.security_protocol)
        for i, s in enumerate(specs)
    ]


def advertised_of(config: SecuritySettings) -> dict[str, tuple[str | None, int | None]] | None:
    """advertised.listeners by listener name: (host, port), None where left empty (the bound one);
    None when advertised.listeners is not set (every listener advertises itself)."""
    specs = parse_listeners(config.advertised_listeners, protocol_map(config.listener_security_protocol_map), "advertised.listeners")
    if not specs:
        return None
    return {s.name: (s.host or None, s.port or None) for s in specs}


def enabled_mechanisms(config: SecuritySettings, listener: str | None = None) -> tuple[str, ...]:
    """sasl.enabled.mechanisms, or listener.name.<listener>.sasl.enabled.mechanisms where given."""
    text = listener_setting(config, listener, "sasl.enabled.mechanisms", config.sasl_enabled_mechanisms)
    return tuple(m.strip().upper() for m in text.split(",") if m.strip())


def listener_setting(config: SecuritySettings, listener: str | None, key: str, default: str) -> str:
    """A listener's own ``listener.name.<name>.<key>`` (Kafka's per-listener override), else ``default``."""
    if listener is None:
        return default
    return config.listener_overrides.get(f"listener.name.{listener.lower()}.{key}", default)


def parse_listener_override(key: str) -> tuple[str, str] | None:
    """``listener.name.<name>.<setting>`` -> (listener name, setting) for a served setting; None
    for a key of another shape."""
    if not key.startswith("listener.name."):
        return None
    rest = key[len("listener.name."):]
    name, _, setting = rest.partition(".")
    if not name or setting not in LISTENER_OVERRIDABLE:
        return None
    return name.upper(), setting


def check_security(config: SecuritySettings) -> None:
    """ValueError naming the setting for what Kafka refuses at start, or cannot be served."""
    mapping = protocol_map(config.listener_security_protocol_map)
    specs = listeners_of(config)
    _check_port_ranges(specs, config.brokers)
    names = [s.name for s in specs]
    advertised = parse_listeners(config.advertised_listeners, mapping, "advertised.listeners")
    advertised_names = [s.name for s in advertised] if advertised else names
    if advertised and not set(advertised_names) <= set(names):
        raise ValueError(
            "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
            f"Found {','.join(advertised_names)}. The valid options based on the current configuration are {','.join(names)}"
        )
    if any(s.host == "0.0.0.0" for s in advertised):
        raise ValueError("advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")
    _check_named_listener(config.inter_broker_listener_name, "inter.broker.listener.name", mapping, advertised_names, "advertised.listeners")
    _check_named_listener(config.control_plane_listener_name, "control.plane.listener.name", mapping, names, "listeners")
    _check_overrides(config, names)
    for listener in [None, *names]:
        for mechanism in enabled_mechanisms(config, listener):
            if mechanism not in SERVED_MECHANISMS:
                raise ValueError(f"sasl.enabled.mechanisms: {mechanism} is not served (served: {', '.join(SERVED_MECHANISMS)})")
        client_auth = listener_setting(config, listener, "ssl.client.auth", config.ssl_client_auth)
        if client_auth not in ("none", "requested", "required"):
            raise ValueError(f"ssl.client.auth must be none, requested or required, not {client_auth!r}")


def _check_port_ranges(specs: list[ListenerSpec], brokers: int) -> None:
    """Broker i listens on each listener's port + i: two listeners' ranges must not meet."""
    taken: dict[int, str] = {}
    for spec in specs:
        if not spec.port:
            continue
        if spec.port + brokers - 1 > 65535:
            raise ValueError(f"listeners: port {spec.port} of {spec.name} leaves no room for {brokers} brokers (above 65535)")
        for port in range(spec.port, spec.port + brokers):
            if port in taken:
                raise ValueError(
                    f"listeners: {spec.name} and {taken[port]} would both listen on port {port} "
                    f"(broker i listens on each listener's port + i, for {brokers} brokers)"
                )
            taken[port] = spec.name


def _check_named_listener(value: str, key: str, mapping: dict[str, str], names: list[str], where: str) -> None:
    """inter.broker.listener.name and control.plane.listener.name: accepted, without effect (one
    process has no inter-broker traffic), but checked as Kafka checks them."""
    name = value.strip().upper()
    if not name:
        return
    if name not in mapping:
        raise ValueError(f"Listener with name {name} defined in {key} not found in listener.security.protocol.map.")
    if name not in names:
        raise ValueError(
            f"{key} must be a listener name defined in {where}. "
            f"The valid options based on currently configured listeners are {','.join(names)}"
        )


def _check_overrides(config: SecuritySettings, names: list[str]) -> None:
    for key in config.listener_overrides:
        parsed = parse_listener_override(key)
        if parsed is None:
            raise ValueError(
                f"unknown setting {key!r}: listener.name.<listener>.<setting> is served for "
                f"{', '.join(LISTENER_OVERRIDABLE)}"
            )
        if parsed[0] not in names:
            raise ValueError(f"{key}: no listener {parsed[0]} in listeners ({','.join(names)})")
