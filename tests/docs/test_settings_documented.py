"""The documented settings exist as documented, and every one of them is documented:

- README.md's "Command line" table: each flag is one of `mockbroker serve`'s, each variable one the
  settings loader reads, and every flag and variable of the loader is in the table;
- docs/security.md's settings table: each Kafka name is accepted (by ``--set``, the environment,
  the TOML file), its environment variable spells it, its Python field is the one it sets, its
  default is ClusterConfig's; every security setting of the code (listeners, SSL, SASL, ACLs) has
  a row.
"""

from __future__ import annotations

import dataclasses
import re

from mockbroker.cli import build_parser
from mockbroker.config.cluster import KAFKA_NAMES, ClusterConfig
from mockbroker.config.listeners import LISTENER_OVERRIDABLE, MECHANISM_OVERRIDABLE
from mockbroker.config.settings import ENV_FIELDS, ENV_OTHER, FLAG_NAMES, env_setting_name
from tests.docs.snippets import ROOT

SECURITY_KEYS = re.compile(
    r"^(listeners|advertised\.listeners|listener\.|inter\.broker\.listener|control\.plane\.listener|sasl\.|ssl\."
    r"|authorizer\.|super\.users|allow\.everyone)"
)


def _table_rows(text: str) -> list[list[str]]:
    """A markdown table's rows as cells (an escaped ``\\|`` is part of a cell)."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])] for line in text.splitlines() if line.startswith("| ")]


def _code(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def test_readme_command_line_table_names_real_flags_and_variables() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Command line"):]
    section = section[: section.index("\n## ", 4)]
    rows = [r for r in _table_rows(section) if r[0].startswith("`--")]
    flags = {c.split()[0].split("=")[0] for r in rows for c in _code(r[0]) if c.startswith("--")}
    variables = {c.split("=")[0] for r in rows for c in _code(r[1]) if c.startswith("MOCKBROKER_")}
    serve = build_parser(serve_only=True).commands["serve"]
    served = {option for action in serve._actions for option in action.option_strings}
    assert flags - served == set(), "README names flags `mockbroker serve` does not have"
    assert set(FLAG_NAMES.values()) - flags == set(), "flags missing from README's table"
    known = set(ENV_FIELDS) | set(ENV_OTHER) | {"MOCKBROKER_SET_<NAME>"}
    assert variables - known == set(), "README names variables the settings loader does not read"
    assert set(ENV_FIELDS) - variables == set(), "variables missing from README's table"


def _security_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "security.md").read_text()
    table = text[text.index("<!-- security-settings -->"):text.index("<!-- /security-settings -->")]
    return [r for r in _table_rows(table) if r[0].startswith("`")]


def _default_matches(cell: str, default: object) -> bool:
    """The default column: "empty" for an empty string or None, a backticked literal for a value;
    other text (a behaviour: "the generated CA") is not checked here."""
    if cell.startswith("empty"):
        return default in ("", None)
    if cell.startswith("none"):
        return default is None
    if cell.startswith("`"):
        literal = _code(cell)[0]
        return literal == (str(default).lower() if isinstance(default, bool) else str(default))
    return True


def test_security_settings_table_is_true_to_the_code() -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(ClusterConfig)}
    documented = set()
    for kafka_cell, env_cell, field_cell, default_cell, _ in _security_rows():
        [name], [variable], [field] = _code(kafka_cell), _code(env_cell), _code(field_cell)
        documented.add(name)
        if name.startswith("listener.name.<name>."):
            setting = name.removeprefix("listener.name.<name>.")
            if setting.startswith("<mechanism>."):
                assert setting.removeprefix("<mechanism>.") in MECHANISM_OVERRIDABLE, name
            else:
                assert setting in LISTENER_OVERRIDABLE, name
            assert field == "listener_overrides"
            concrete = name.replace("<name>", "sasl_ssl").replace("<mechanism>", "scram-sha-512")
            spelled = variable.replace("<NAME>", "SASL__SSL").replace("<MECHANISM>", "SCRAM___SHA___512")
            assert env_setting_name(spelled) == concrete, variable
            sample = _SAMPLES[setting.removeprefix("<mechanism>.")]
            assert ClusterConfig.from_kafka({"listeners": "SASL_SSL://:0", concrete: sample}).listener_overrides == {concrete: sample}
            documented.add(name)
            continue
        assert KAFKA_NAMES.get(name) == field, f"{name}: the table says field {field}"
        assert env_setting_name(variable) == name, f"{variable} does not spell {name}"
        assert _default_matches(default_cell, defaults[field]), f"{name}: default {default_cell!r}, code {defaults[field]!r}"
    security = {k for k in KAFKA_NAMES if SECURITY_KEYS.match(k)}
    assert security - documented == set(), "security settings missing from docs/security.md's table"
    assert {f"listener.name.<name>.{s}" for s in LISTENER_OVERRIDABLE} <= documented
    assert {f"listener.name.<name>.<mechanism>.{s}" for s in MECHANISM_OVERRIDABLE} <= documented


# A value of each per-listener setting, for the check that its row's names are accepted.
_SAMPLES = {
    "sasl.enabled.mechanisms": "PLAIN",
    "ssl.client.auth": "required",
    "ssl.keystore.location": "/certs/broker.pem",
    "ssl.key.password": "secret",
    "ssl.truststore.location": "/certs/ca.pem",
    "connections.max.reauth.ms": "60000",
    "max.connections": "10",
}
