"""What ``mockbroker serve`` runs with: flags, environment and a TOML file, merged in one place.

Pure: strings and mappings in, a ``ServeSettings`` out, or a ``SettingsError`` whose one-line
message names the flag, variable or file key at fault and the values it allows. No sockets,
no event loop, no process exit; ``mockbroker.cli`` does those.

Precedence, highest first: command-line flags > ``MOCKBROKER_*`` environment variables > the
config file (``--config`` or ``MOCKBROKER_CONFIG``) > defaults. Every source is validated in full,
even where a higher one overrides it, so a typo never hides until the day the flag is dropped.
Topics from all sources are combined by name; when a name appears in more than one source, the
higher one's definition wins as a whole.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mockbroker.config.cluster import (
    FIELD_TYPES,
    KAFKA_NAMES_BY_FIELD,
    ClusterConfig,
    gather_listener_overrides,
    parse_kafka_setting,
)
from mockbroker.config.groups import CHECK_MODES, STRICT_MODES
from mockbroker.config.topics import validate_topic_configs
from mockbroker.model import OFFSETS_TOPIC, TRANSACTION_TOPIC, TopicError, validate_topic_name

ENV_PREFIX = "MOCKBROKER_"
ENV_SET_PREFIX = "MOCKBROKER_SET_"
LOG_LEVELS = ("debug", "info", "warning", "error")

# What the command line uses when nothing else says otherwise (ClusterConfig's own defaults are
# for in-process tests, where port 0 is the right choice; a served broker wants Kafka's port).
SERVE_DEFAULTS: dict[str, Any] = {"host": "127.0.0.1", "port": 9092, "brokers": 1}

# Plain (non-Kafka-named) settings that flags and the environment can set, by field name.
ENV_FIELDS: dict[str, str] = {
    "MOCKBROKER_HOST": "host",
    "MOCKBROKER_PORT": "port",
    "MOCKBROKER_BROKERS": "brokers",
    "MOCKBROKER_ADVERTISED_HOST": "advertised_host",
    "MOCKBROKER_ADVERTISED_PORT": "advertised_port",
    "MOCKBROKER_CLUSTER_ID": "cluster_id",
    "MOCKBROKER_KAFKA_VERSION": "kafka_version",
    "MOCKBROKER_KAFKA_DEFAULTS": "kafka_defaults",
    "MOCKBROKER_EVENT_LOG": "events_path",
    "MOCKBROKER_EVENTS_TOPIC": "events_topic",
    "MOCKBROKER_ASSIGNMENT_CHECKS": "assignment_checks",
    "MOCKBROKER_ASSIGNMENT_STRICT": "assignment_strict",
    "MOCKBROKER_BROKER_ASSIGNORS": "broker_assignors",
    "MOCKBROKER_SASL_USERS": "sasl_users",
    "MOCKBROKER_ADMIN_PORT": "admin_port",
    "MOCKBROKER_ADMIN_HOST": "admin_host",
    "MOCKBROKER_ADMIN_TOKEN": "admin_token",
    "MOCKBROKER_MANUAL_CLOCK": "manual_clock",
}
# MOCKBROKER_ADMIN_URL is read by `mockbroker health` and `mockbroker ctl`, not by serve.
ENV_OTHER = ("MOCKBROKER_TOPICS", "MOCKBROKER_CONFIG", "MOCKBROKER_LOG_LEVEL", "MOCKBROKER_UVLOOP", "MOCKBROKER_ADMIN_URL")
# Settings of the served process rather than of the cluster (ServeSettings, not ClusterConfig);
# the file takes them in its [cluster] table with the rest.
SERVE_FIELDS = ("admin_port", "admin_host", "admin_token", "manual_clock")
FILE_TABLES = ("cluster", "broker", "kafka", "topic")
TOPIC_KEYS = ("name", "partitions", "replication_factor", "configs")


class SettingsError(ValueError):
    """A bad setting; the message is one line naming where it came from and what is allowed."""


@dataclass(slots=True)
class Flags:
    """What the command line said, as given (strings); None or empty: not given."""

    host: str | None = None
    port: str | None = None
    brokers: str | None = None
    advertised_host: str | None = None
    advertised_port: str | None = None
    cluster_id: str | None = None
    kafka_version: str | None = None
    kafka_defaults: str | None = None  # "true" for --kafka-defaults
    events_path: str | None = None
    events_topic: str | None = None  # "true" for --events-topic
    assignment_checks: str | None = None
    assignment_strict: str | None = None
    broker_assignors: list[str] | None = None  # GLOB=ASSIGNOR, one per --broker-assignor
    sasl_users: list[str] | None = None  # NAME=PASSWORD, one per --sasl-user
    admin_port: str | None = None
    admin_host: str | None = None
    admin_token: str | None = None
    manual_clock: str | None = None  # "true" for --manual-clock
    topics: list[str] = field(default_factory=list)
    sets: list[str] = field(default_factory=list)
    config: str | None = None
    log_level: str | None = None
    uvloop: bool | None = None  # False for --no-uvloop


# The flag that sets each plain field, for messages.
FLAG_NAMES: dict[str, str] = {
    "host": "--host",
    "port": "--port",
    "brokers": "--brokers",
    "advertised_host": "--advertised-host",
    "advertised_port": "--advertised-port",
    "cluster_id": "--cluster-id",
    "kafka_version": "--kafka-version",
    "kafka_defaults": "--kafka-defaults",
    "events_path": "--event-log",
    "events_topic": "--events-topic",
    "assignment_checks": "--assignment-checks",
    "assignment_strict": "--assignment-strict",
    "broker_assignors": "--broker-assignor",
    "sasl_users": "--sasl-user",
    "admin_port": "--admin-port",
    "admin_host": "--admin-host",
    "admin_token": "--admin-token",
    "manual_clock": "--manual-clock",
}


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """A topic to create at start, and where it was declared."""

    name: str
    partitions: int | None = None  # None: num.partitions
    replication_factor: int | None = None  # None: default.replication.factor
    configs: dict[str, str] = field(default_factory=dict)
    source: str = field(default="", compare=False)  # where it was declared, for messages


@dataclass(slots=True)
class ServeSettings:
    """Everything ``mockbroker serve`` runs with, resolved from every source, with each value's source."""

    cluster: ClusterConfig
    topics: list[TopicSpec]
    log_level: str = "info"
    uvloop: bool = True
    # The HTTP control API (mockbroker.http): off unless admin_port is set (0: a free port).
    admin_port: int | None = None
    admin_host: str = "127.0.0.1"
    admin_token: str | None = None
    manual_clock: bool = False  # the cluster runs on a ManualClock (POST /clock/advance moves it)
    # field name (or "log_level", "uvloop") -> where its value came from: "default", "--port",
    # "MOCKBROKER_PORT", "broker.toml [kafka] num.partitions", ...
    sources: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # for the log (unknown MOCKBROKER_* variables)


# -- values -----------------------------------------------------------------------------------------


def _int(where: str, raw: Any, lo: int, hi: int | None) -> int:
    allowed = f"an integer >= {lo}" if hi is None or hi >= (1 << 31) - 1 else f"an integer {lo}-{hi}"
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise SettingsError(f"{where}: must be {allowed}, not {raw!r}")
    try:
        value = int(raw.strip()) if isinstance(raw, str) else raw
    except ValueError:
        raise SettingsError(f"{where}: must be {allowed}, not {raw!r}") from None
    if value < lo or (hi is not None and value > hi):
        raise SettingsError(f"{where}: must be {allowed}, not {raw!r}")
    return value


def _word(where: str, raw: Any, what: str) -> str:
    """A host name or cluster id: non-empty, no whitespace (it goes into the READY line)."""
    if not isinstance(raw, str) or not raw or any(c.isspace() or not c.isprintable() for c in raw):
        raise SettingsError(f"{where}: must be {what} (non-empty, no spaces), not {raw!r}")
    return raw


def _bool(where: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise SettingsError(f"{where}: must be true or false, not {raw!r}")


def _log_level(where: str, raw: str) -> str:
    level = raw.strip().lower()
    if level not in LOG_LEVELS:
        raise SettingsError(f"{where}: must be one of {', '.join(LOG_LEVELS)}, not {raw!r}")
    return level


def parse_field(where: str, name: str, raw: Any) -> Any:
    """A ClusterConfig field from a flag, a variable or the file; raw may be a string or typed TOML."""
    parser = _FIELD_PARSERS.get(name)
    if parser is not None:
        return parser(where, raw)
    if name in KAFKA_NAMES_BY_FIELD:
        try:
            return parse_kafka_setting(KAFKA_NAMES_BY_FIELD[name], raw)[1]
        except ValueError as exc:
            raise SettingsError(f"{where}: {exc}") from None
    raise SettingsError(f"{where}: not a setting")  # pragma: no cover - callers check names first


def _racks(where: str, raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(r, str) and r for r in raw):
        raise SettingsError(f"{where}: must be a list of rack names, one per broker, not {raw!r}")
    return tuple(raw)


def _kafka_version(where: str, raw: Any) -> str:
    from mockbroker.config.profiles import PROFILES

    version = str(raw).strip()
    if version not in PROFILES:
        raise SettingsError(f"{where}: must be one of {', '.join(sorted(PROFILES))}, not {raw!r}")
    return version


def _mode(modes: tuple[str, ...]) -> Callable[[str, Any], str]:
    def parse(where: str, raw: Any) -> str:
        value = str(raw).strip().lower()
        if value not in modes:
            raise SettingsError(f"{where}: must be one of {', '.join(modes)}, not {raw!r}")
        return value

    return parse


def _int_in(lo: int, hi: int | None) -> Callable[[str, Any], int]:
    return lambda where, raw: _int(where, raw, lo, hi)


def _word_of(what: str) -> Callable[[str, Any], str]:
    return lambda where, raw: _word(where, raw, what)


def _listener_overrides(where: str, raw: Any) -> dict[str, str]:
    """A TOML table of Kafka's per-listener settings ("listener.name.<name>.<setting>" = value)."""
    if not isinstance(raw, dict):
        raise SettingsError(f"{where}: must be a table of listener.name.<name>.<setting> = value")
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in _flatten(raw)}


def _sasl_users(where: str, raw: Any) -> dict[str, str]:
    """User -> password: a TOML table, "NAME=PASSWORD,NAME=PASSWORD" (the environment) or a list
    of "NAME=PASSWORD" (repeated flags). Messages never repeat a password."""
    if isinstance(raw, dict):
        items = [(str(k), v) for k, v in raw.items()]
    else:
        parts = raw.split(",") if isinstance(raw, str) else raw
        if not isinstance(parts, list):
            raise SettingsError(f"{where}: must be NAME=PASSWORD pairs")
        items = []
        for item in parts:
            if not isinstance(item, str) or not item.strip():
                continue
            user, sep, password = item.partition("=")
            if not sep:
                raise SettingsError(f"{where}: expected NAME=PASSWORD (e.g. 'alice=alice-secret')")
            items.append((user.strip(), password))
    users: dict[str, str] = {}
    for user, password in items:
        if not user or not isinstance(password, str) or not password:
            raise SettingsError(f"{where}: each user needs a name and a non-empty password")
        users[user] = password
    return users


def _broker_assignors(where: str, raw: Any) -> dict[str, str]:
    """Group glob -> assignor: a TOML table, "GLOB=NAME,GLOB=NAME" (the environment) or a list
    of "GLOB=NAME" (repeated flags). Every assignor is looked up now."""
    from mockbroker.config.groups import resolve_broker_assignors

    if isinstance(raw, dict):
        pairs = _flatten(raw)
    else:
        items = raw.split(",") if isinstance(raw, str) else raw
        if not isinstance(items, list):
            raise SettingsError(f"{where}: must be GLOB=ASSIGNOR pairs, not {raw!r}")
        pairs = []
        for item in items:
            if not isinstance(item, str):
                raise SettingsError(f"{where}: expected GLOB=ASSIGNOR, not {item!r}")
            if not item.strip():
                continue
            pattern, sep, name = item.partition("=")
            if not sep:
                raise SettingsError(f"{where}: expected GLOB=ASSIGNOR (e.g. 'orders-*=cooperative-sticky'), not {item!r}")
            pairs.append((pattern.strip(), name.strip()))
    mapping: dict[str, str] = {}
    for pattern, name in pairs:
        if not isinstance(name, str) or not name:
            raise SettingsError(f"{where} {pattern}: the assignor must be a name or 'module:attr', not {name!r}")
        mapping[pattern] = name
    try:
        resolve_broker_assignors(mapping)
    except ValueError as exc:
        raise SettingsError(f"{where}: {exc}") from None
    return mapping


def _api_version_caps(where: str, raw: Any) -> dict[int, int]:
    if not isinstance(raw, dict):
        raise SettingsError(f"{where}: must be a table of api key = highest version, not {raw!r}")
    caps: dict[int, int] = {}
    for key, version in raw.items():
        api_key = _int(f"{where} key", key, 0, 32767)
        caps[api_key] = _int(f"{where}.{key}", version, 0, 32767)
    return caps


def parse_topic(where: str, spec: str) -> TopicSpec:
    """NAME[:PARTITIONS[:REPLICATION]], as --topic and MOCKBROKER_TOPICS take it."""
    parts = spec.strip().split(":")
    if len(parts) > 3:
        raise SettingsError(f"{where}: expected NAME[:PARTITIONS[:REPLICATION]], not {spec!r}")
    name = _topic_name(where, parts[0])
    partitions = _int(f"{where} {name} partitions", parts[1], 1, (1 << 31) - 1) if len(parts) > 1 else None
    rf = _int(f"{where} {name} replication", parts[2], 1, 32767) if len(parts) > 2 else None
    return TopicSpec(name, partitions, rf, {}, where)


def _topic_name(where: str, name: Any) -> str:
    if not isinstance(name, str):
        raise SettingsError(f"{where}: topic name must be a string, not {name!r}")
    try:
        validate_topic_name(name)
    except TopicError as exc:
        raise SettingsError(f"{where}: {exc.message} (allowed: 1-249 of a-z A-Z 0-9 . _ -)") from None
    if name in (OFFSETS_TOPIC, TRANSACTION_TOPIC):
        raise SettingsError(f"{where}: {name} is an internal topic; the broker creates it")
    return name


def _add_topic(topics: dict[str, TopicSpec], spec: TopicSpec) -> None:
    if spec.name in topics:
        raise SettingsError(f"{spec.source}: topic {spec.name!r} is declared twice")
    topics[spec.name] = spec


def env_setting_name(variable: str) -> str:
    """MOCKBROKER_SET_<NAME> -> the Kafka name, by the rule Confluent's images use for KAFKA_*:
    ``_`` is ``.``, ``__`` is ``_``, ``___`` is ``-``; letters are lowered."""
    rest = variable[len(ENV_SET_PREFIX) :].lower()
    return re.sub(r"_{1,3}", lambda m: {1: ".", 2: "_", 3: "-"}[len(m.group())], rest)


def _kafka_setting(where: str, key: str, raw: Any) -> tuple[str, Any]:
    try:
        return parse_kafka_setting(key, raw)
    except ValueError as exc:
        raise SettingsError(f"{where}: {exc}") from None


# -- sources -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Layer:
    """One source's settings, validated: field -> (value, where)."""

    fields: dict[str, tuple[Any, str]] = field(default_factory=dict)
    topics: dict[str, TopicSpec] = field(default_factory=dict)

    def put(self, name: str, value: Any, where: str) -> None:
        if name in self.fields and self.fields[name][1] != where:
            raise SettingsError(f"{where}: sets {name} again (already set by {self.fields[name][1]})")
        self.fields[name] = (value, where)


def _flags_layer(flags: Flags) -> _Layer:
    layer = _Layer()
    for name, flag in FLAG_NAMES.items():
        raw = getattr(flags, name)
        if raw is not None:
            layer.put(name, parse_field(f"argument {flag}", name, raw), flag)
    for spec in flags.topics:
        _add_topic(layer.topics, parse_topic("argument --topic", spec))
    for item in flags.sets:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"argument --set: expected KEY=VALUE with a Kafka setting name, not {item!r}")
        name, typed = _kafka_setting("argument --set", key.strip(), value)
        layer.fields[name] = (typed, f"--set {key.strip()}")  # repeated --set: the last one wins
    return layer


def _env_layer(environ: Mapping[str, str], warnings: list[str]) -> _Layer:
    layer = _Layer()
    for variable, name in ENV_FIELDS.items():
        if variable in environ:
            layer.put(name, parse_field(variable, name, environ[variable]), variable)
    if "MOCKBROKER_TOPICS" in environ:
        for item in environ["MOCKBROKER_TOPICS"].split(","):
            if item.strip():
                _add_topic(layer.topics, parse_topic("MOCKBROKER_TOPICS", item))
    for variable in sorted(environ):
        if variable.startswith(ENV_SET_PREFIX):
            name, typed = _kafka_setting(variable, env_setting_name(variable), environ[variable])
            layer.put(name, typed, variable)
        elif variable.startswith(ENV_PREFIX) and variable not in ENV_FIELDS and variable not in ENV_OTHER:
            warnings.append(f"ignoring unknown environment variable {variable}")
    return layer


def read_config_file(path: str) -> dict[str, Any]:
    import tomllib  # only with a config file: start-up without one does not pay for it

    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as exc:
        raise SettingsError(f"config file {path!r}: cannot read it: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path!r}: not valid TOML: {exc}") from None


def _file_layer(path: str, document: Mapping[str, Any]) -> _Layer:
    layer = _Layer()
    for table in document:
        if table not in FILE_TABLES:
            raise SettingsError(
                f"{path}: unknown table [{table}]; allowed: [cluster] (or [broker]), [kafka], [[topic]]"
            )
    for table in ("cluster", "broker"):
        body = document.get(table, {})
        if not isinstance(body, dict):
            raise SettingsError(f"{path}: [{table}] must be a table")
        for key, raw in body.items():
            where = f"{path} [{table}] {key}"
            if key not in FIELD_TYPES and key not in SERVE_FIELDS:
                raise SettingsError(f"{where}: unknown setting; allowed: {', '.join([*FIELD_TYPES, *SERVE_FIELDS])}")
            layer.put(key, parse_field(where, key, raw), where)
    kafka = document.get("kafka", {})
    if not isinstance(kafka, dict):
        raise SettingsError(f"{path}: [kafka] must be a table")
    for key, raw in _flatten(kafka):
        where = f"{path} [kafka] {key}"
        name, typed = _kafka_setting(where, key, raw)
        layer.put(name, typed, where)
    entries = document.get("topic", [])
    if not isinstance(entries, list):
        raise SettingsError(f"{path}: topics are [[topic]] entries (an array of tables)")
    for i, entry in enumerate(entries):
        _add_topic(layer.topics, _file_topic(f"{path} [[topic]] #{i + 1}", entry))
    return layer


def _flatten(table: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    # An unquoted dotted key (auto.create.topics.enable = false) is a nested table in TOML;
    # read it back as the Kafka name it was meant to be.
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _file_topic(where: str, entry: Any) -> TopicSpec:
    if not isinstance(entry, dict) or "name" not in entry:
        raise SettingsError(f"{where}: needs a name (keys: {', '.join(TOPIC_KEYS)})")
    unknown = sorted(set(entry) - set(TOPIC_KEYS))
    if unknown:
        raise SettingsError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(TOPIC_KEYS)}")
    name = _topic_name(where, entry["name"])
    where = f"{where} ({name})"
    partitions = (
        _int(f"{where} partitions", entry["partitions"], 1, (1 << 31) - 1) if "partitions" in entry else None
    )
    rf = (
        _int(f"{where} replication_factor", entry["replication_factor"], 1, 32767)
        if "replication_factor" in entry
        else None
    )
    raw_configs = entry.get("configs", {})
    if not isinstance(raw_configs, dict):
        raise SettingsError(f"{where} configs: must be a table of topic config name = value")
    configs: dict[str, str] = {}
    for key, value in _flatten(raw_configs):
        if not isinstance(value, str | int | float | bool):
            raise SettingsError(f"{where} configs {key}: must be a string, number or boolean, not {value!r}")
        # Kafka's topic configs are strings on the wire (CreateTopics, DescribeConfigs).
        configs[key] = str(value).lower() if isinstance(value, bool) else str(value)
    # What CreateTopics and POST /topics check (LogConfig.validate), before anything starts.
    problem = validate_topic_configs(configs)
    if problem is not None:
        raise SettingsError(f"{where} configs: {problem.message}")
    return TopicSpec(name, partitions, rf, configs, where)


# The ClusterConfig fields that are not Kafka settings (those parse by their Kafka name), and
# their parsers: (where, raw) -> value or SettingsError.
_FIELD_PARSERS: dict[str, Callable[[str, Any], Any]] = {
    "port": _int_in(0, 65535),
    "admin_port": _int_in(0, 65535),
    "admin_host": _word_of("a host name or address"),
    "admin_token": _word_of("a token"),
    "manual_clock": _bool,
    "advertised_port": _int_in(1, 65535),
    "brokers": _int_in(1, None),
    "first_node_id": _int_in(0, (1 << 31) - 1),
    "host": _word_of("a host name or address"),
    "advertised_host": _word_of("a host name or address"),
    "cluster_id": _word_of("a cluster id"),
    "racks": _racks,
    "api_version_caps": _api_version_caps,
    "kafka_version": _kafka_version,
    "kafka_defaults": _bool,
    "events_path": _word_of("a file path"),
    "events_topic": _bool,
    "events_topic_partitions": _int_in(1, (1 << 31) - 1),
    "events_topic_retention_ms": _int_in(-1, None),
    "events_topic_retention_bytes": _int_in(-1, None),
    "assignment_checks": _mode(CHECK_MODES),
    "assignment_strict": _mode(STRICT_MODES),
    "broker_assignors": _broker_assignors,
    "sasl_users": _sasl_users,
    "listener_overrides": _listener_overrides,
}


# -- merge ---------------------------------------------------------------------------------------------


def resolve(flags: Flags, environ: Mapping[str, str]) -> ServeSettings:
    """Merge defaults, the config file, the environment and the flags (in rising precedence)."""
    warnings: list[str] = []
    flag_layer = _flags_layer(flags)
    env_layer = _env_layer(environ, warnings)
    path = flags.config if flags.config is not None else environ.get("MOCKBROKER_CONFIG")
    file_layer = _file_layer(path, read_config_file(path)) if path else _Layer()

    merged: dict[str, tuple[Any, str]] = {name: (value, "default") for name, value in SERVE_DEFAULTS.items()}
    topics: dict[str, TopicSpec] = {}
    for layer in (file_layer, env_layer, flag_layer):
        merged.update(layer.fields)
        topics.update(layer.topics)

    serve = {name: merged.pop(name) for name in SERVE_FIELDS if name in merged}
    cluster = _cluster_config(merged)
    _check_topics(topics.values(), cluster)
    sources = {f.name: "default" for f in dataclasses.fields(ClusterConfig)}
    sources.update({name: where for name, (_, where) in merged.items()})
    log_level, uvloop = _runtime(flags, environ, sources)
    for name in SERVE_FIELDS:
        sources[name] = serve[name][1] if name in serve else "default"
    settings = ServeSettings(cluster, list(topics.values()), log_level, uvloop, sources=sources, warnings=warnings)
    for name, (value, _) in serve.items():
        setattr(settings, name, value)
    return settings


def _cluster_config(merged: dict[str, tuple[Any, str]]) -> ClusterConfig:
    """The merged settings as a ClusterConfig; its ValueError names where the culprits came from."""
    try:
        return ClusterConfig(**gather_listener_overrides({name: value for name, (value, _) in merged.items()}))
    except ValueError as exc:
        # Name the sources of the settings the message is about ("port 65535 leaves no room for
        # 2 brokers" -> --port, MOCKBROKER_BROKERS), so the user knows where to look.
        message = str(exc)
        culprits = [
            where
            for name, (_, where) in merged.items()
            if where != "default"
            and re.search(rf"\b({name}|{re.escape(KAFKA_NAMES_BY_FIELD.get(name, name))})\b", message)
        ]
        hint = f" (from {', '.join(culprits)})" if culprits else ""
        raise SettingsError(f"{message}{hint}") from None


def _check_topics(topics: Iterable[TopicSpec], cluster: ClusterConfig) -> None:
    for spec in topics:
        rf = spec.replication_factor or cluster.default_replication_factor
        if rf > cluster.brokers:
            raise SettingsError(
                f"{spec.source}: topic {spec.name!r} needs replication factor {rf} but there "
                f"{'is 1 broker' if cluster.brokers == 1 else f'are {cluster.brokers} brokers'}"
            )


def _runtime(flags: Flags, environ: Mapping[str, str], sources: dict[str, str]) -> tuple[str, bool]:
    """The log level and the event loop (flag > environment > default), their sources noted."""
    log_level, sources["log_level"] = "info", "default"
    if "MOCKBROKER_LOG_LEVEL" in environ:
        log_level = _log_level("MOCKBROKER_LOG_LEVEL", environ["MOCKBROKER_LOG_LEVEL"])
        sources["log_level"] = "MOCKBROKER_LOG_LEVEL"
    if flags.log_level is not None:
        log_level, sources["log_level"] = _log_level("argument --log-level", flags.log_level), "--log-level"

    uvloop, sources["uvloop"] = True, "default"
    if "MOCKBROKER_UVLOOP" in environ:
        uvloop, sources["uvloop"] = (
            _bool("MOCKBROKER_UVLOOP", environ["MOCKBROKER_UVLOOP"]),
            "MOCKBROKER_UVLOOP",
        )
    if flags.uvloop is not None:
        uvloop, sources["uvloop"] = flags.uvloop, "--no-uvloop"
    return log_level, uvloop


def describe(settings: ServeSettings) -> Sequence[str]:
    """One line per setting with where it came from (logged at debug level)."""
    lines = [
        f"{name} = {getattr(settings.cluster, name)!r} ({where})"
        for name, where in settings.sources.items()
        if hasattr(settings.cluster, name)
    ]
    lines.append(f"log_level = {settings.log_level!r} ({settings.sources['log_level']})")
    lines.append(f"uvloop = {settings.uvloop!r} ({settings.sources['uvloop']})")
    for name in SERVE_FIELDS:
        value = getattr(settings, name)
        shown = "<set>" if name == "admin_token" and value is not None else repr(value)
        lines.append(f"{name} = {shown} ({settings.sources.get(name, 'default')})")
    lines += [
        f"topic {t.name}: partitions={t.partitions or 'default'} replication_factor={t.replication_factor or 'default'} "
        f"configs={t.configs} ({t.source})"
        for t in settings.topics
    ]
    return lines
