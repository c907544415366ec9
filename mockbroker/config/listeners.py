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
    ssl_keystore_location: str | None
    ssl_key_password: str | None
    ssl_truststore_location: str | None
    connections_max_reauth_ms: int
    max_connections: int
    listener_overrides: dict[str, str]

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SERVED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
# SocketServerConfigs.URI_PARSE_REGEXP: NAME://host:port, an IPv6 host in brackets.
_LISTENER = re.compile(r"^([A-Za-z0-9_]+)://(\[[0-9a-fA-F:.]*\]|[^:\[\]]*):(-?[0-9]+)$")
# The per-listener settings Kafka reads as listener.name.<name>.<setting> and mockbroker serves:
# ChannelBuilders.channelBuilderConfigs and ConnectionQuotas read a listener's configs as
# AbstractConfig.valuesWithPrefixOverride("listener.name." + the name lower-cased + "."), each key
# its own override of the broker-wide value.
LISTENER_OVERRIDABLE = (
    "sasl.enabled.mechanisms",
    "ssl.client.auth",
    "ssl.keystore.location",
    "ssl.key.password",
    "ssl.truststore.location",
    "connections.max.reauth.ms",
    "max.connections",
)
# ...and the ones also read per SASL mechanism, listener.name.<name>.<mechanism lower-cased>.<setting>
# (valuesWithPrefixOverride's secondary prefix; SaslChannelBuilder.createConnectionsMaxReauthMsMap
# looks up "<mechanism>.connections.max.reauth.ms" before "connections.max.reauth.ms": KIP-368).
MECHANISM_OVERRIDABLE = ("connections.max.reauth.ms",)
# Mechanism prefixes a configuration may carry: those served, and Kafka's GSSAPI (its setting is
# then without effect, as in a Kafka where the mechanism is not enabled).
_MECHANISM_PREFIXES = {m.lower() for m in (*SERVED_MECHANISMS, "GSSAPI")}
# ConfigDef's types and validators of the overridable numbers (SocketServerConfigs: max.connections
# INT atLeast(0); BrokerSecurityConfigs: connections.max.reauth.ms LONG without a validator).
_NUMBERS = {"max.connections": ("INT", 0, (1 << 31) - 1), "connections.max.reauth.ms": ("LONG", -(1 << 63), (1 << 63) - 1)}


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


def listener_ssl(config: SecuritySettings, listener: str) -> tuple[str | None, str | None, str | None]:
    """A listener's (ssl.keystore.location, ssl.key.password, ssl.truststore.location): each its
    listener.name.<name>. value, else the broker-wide one (valuesWithPrefixOverride, key by key)."""
    prefix = f"listener.name.{listener.lower()}."
    overrides = config.listener_overrides
    return (
        overrides.get(prefix + "ssl.keystore.location", config.ssl_keystore_location),
        overrides.get(prefix + "ssl.key.password", config.ssl_key_password),
        overrides.get(prefix + "ssl.truststore.location", config.ssl_truststore_location),
    )


def listener_max_connections(config: SecuritySettings, listener: str) -> int:
    """ConnectionQuotas.ListenerConnectionQuota: listener.name.<name>.max.connections, else
    max.connections (KIP-402; the broker-wide max.connections bounds all listeners together too)."""
    key = f"listener.name.{listener.lower()}.max.connections"
    raw = config.listener_overrides.get(key)
    return config.max_connections if raw is None else _number(key, "max.connections", raw)


def connections_max_reauth_ms(config: SecuritySettings, listener: str | None, mechanism: str | None) -> int:
    """KIP-368's lookup (SaslChannelBuilder.createConnectionsMaxReauthMsMap on the listener's
    configs): listener.name.<name>.<mechanism>.connections.max.reauth.ms, else
    listener.name.<name>.connections.max.reauth.ms, else connections.max.reauth.ms."""
    if listener is not None:
        prefix = f"listener.name.{listener.lower()}."
        keys = [prefix + "connections.max.reauth.ms"]
        if mechanism:
            keys.insert(0, f"{prefix}{mechanism.lower()}.connections.max.reauth.ms")
        for key in keys:
            raw = config.listener_overrides.get(key)
            if raw is not None:
                return _number(key, "connections.max.reauth.ms", raw)
    return config.connections_max_reauth_ms


def _number(key: str, setting: str, raw: str) -> int:
    """ConfigDef.parseValue of an overridable number: ValueError with Kafka's ConfigException
    message (which names the setting without its prefix), then the key as given."""
    type_name, lo, hi = _NUMBERS[setting]
    try:
        value: int | None = int(raw.strip())
    except ValueError:
        value = None
    if value is None or not -hi - 1 <= value <= hi:
        raise ValueError(f"Invalid value {raw} for configuration {setting}: Not a number of type {type_name} ({key})")
    if value < lo:
        raise ValueError(f"Invalid value {raw} for configuration {setting}: Value must be at least {lo} ({key})")
    return value


def parse_listener_override(key: str) -> tuple[str, str | None, str] | None:
    """``listener.name.<name>.[<mechanism>.]<setting>`` -> (listener name as written, mechanism
    or None, setting) for a served setting; None for a key of another shape."""
    if not key.startswith("listener.name."):
        return None
    name, _, setting = key[len("listener.name."):].partition(".")
    if not name:
        return None
    if setting in LISTENER_OVERRIDABLE:
        return name, None, setting
    mechanism, _, setting = setting.partition(".")
    if mechanism in _MECHANISM_PREFIXES and setting in MECHANISM_OVERRIDABLE:
        return name, mechanism.upper(), setting
    return None


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
    """Each listener.name.* key: a served setting, of a listener of ``listeners`` (its name
    lower-cased, as ListenerName.configPrefix spells it: Kafka would not read another spelling),
    a number where Kafka parses one."""
    served = ", ".join(
        [*LISTENER_OVERRIDABLE, *(f"<mechanism>.{s}" for s in MECHANISM_OVERRIDABLE)]
    )
    for key, raw in config.listener_overrides.items():
        parsed = parse_listener_override(key)
        if parsed is None:
            raise ValueError(f"unknown setting {key!r}: listener.name.<listener>.<setting> is served for {served}")
        name, _, setting = parsed
        if name.upper() not in names:
            raise ValueError(f"{key}: no listener {name.upper()} in listeners ({','.join(names)})")
        if name != name.lower():
            raise ValueError(
                f"{key}: Kafka reads a listener's settings as listener.name.{name.lower()}.{key.split('.', 3)[3]} "
                "(the listener's name lower-cased)"
            )
        if setting in _NUMBERS:
            _number(key, setting, raw)
