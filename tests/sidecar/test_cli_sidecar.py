"""`mockbroker serve`'s control API settings (flags, MOCKBROKER_* variables, the TOML file, one
precedence), `mockbroker health`, and `mockbroker ctl` against a served broker."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mockbroker.cli import parse_serve
from mockbroker.config.settings import SettingsError
from tests.sidecar.support import Sidecar, ctl_json, run_cli

TOKEN = "ctl-token"


def test_admin_settings_from_flags_environment_and_file(tmp_path: Path) -> None:
    default = parse_serve([], {})
    assert (default.admin_port, default.admin_host, default.admin_token, default.manual_clock) == (None, "127.0.0.1", None, False)
    config = tmp_path / "broker.toml"
    config.write_text('[cluster]\nadmin_port = 18092\nadmin_host = "0.0.0.0"\nmanual_clock = true\n')
    from_file = parse_serve(["--config", str(config)], {})
    assert (from_file.admin_port, from_file.admin_host, from_file.manual_clock) == (18092, "0.0.0.0", True)
    env = {"MOCKBROKER_ADMIN_PORT": "28092", "MOCKBROKER_ADMIN_TOKEN": "from-env"}
    from_env = parse_serve(["--config", str(config)], env)
    assert (from_env.admin_port, from_env.admin_token, from_env.sources["admin_port"]) == (28092, "from-env", "MOCKBROKER_ADMIN_PORT")
    flags = parse_serve(["--config", str(config), "--admin-port", "0", "--admin-host", "::1"], env)
    assert (flags.admin_port, flags.admin_host, flags.sources["admin_port"]) == (0, "::1", "--admin-port")
    assert not from_env.warnings  # the new variables are known ones
    assert parse_serve(["--manual-clock"], {}).manual_clock is True


@pytest.mark.parametrize(
    ("argv", "env", "named"),
    [
        (["--admin-port", "http"], {}, "argument --admin-port: must be an integer 0-65535, not 'http'"),
        ([], {"MOCKBROKER_ADMIN_PORT": "70000"}, "MOCKBROKER_ADMIN_PORT: must be an integer 0-65535"),
        ([], {"MOCKBROKER_MANUAL_CLOCK": "sometimes"}, "MOCKBROKER_MANUAL_CLOCK: must be true or false"),
        (["--admin-token", "two words"], {}, "argument --admin-token: must be a token (non-empty, no spaces)"),
    ],
)
def test_bad_admin_settings_name_their_source(argv: list[str], env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named.replace("(", r"\(").replace(")", r"\)")):
        parse_serve(argv, env)
    result = run_cli(["serve", *argv], env)
    assert result.returncode == 2 and named in result.stderr and result.stderr.count("\n") == 1


def test_health_exit_status_follows_readiness(sidecar: Any) -> None:
    side: Sidecar = sidecar("--admin-token", TOKEN)
    ok = run_cli(["health", "--url", side.admin])  # /readyz needs no token
    assert ok.returncode == 0 and ok.stdout.startswith(f"ready: bootstrap={side.bootstrap}")
    port = side.admin.rsplit(":", 1)[1]
    assert run_cli(["health"], {"MOCKBROKER_ADMIN_PORT": port}).returncode == 0
    side.served.proc.terminate()
    assert side.served.proc.wait(30) == 0
    down = run_cli(["health", "--url", side.admin])
    assert down.returncode == 1 and down.stdout.startswith("not ready: cannot reach the control API")


def test_ctl_drives_a_served_broker_and_prints_json(sidecar: Any) -> None:
    side: Sidecar = sidecar("--brokers", "2", "--manual-clock", "--admin-token", TOKEN)
    env = {"MOCKBROKER_ADMIN_URL": side.admin, "MOCKBROKER_ADMIN_TOKEN": TOKEN}
    created = ctl_json(["topics", "create", "jobs", "--partitions", "2", "--config", "retention.ms=60000"], env)
    assert created["name"] == "jobs" and created["configs"] == {"retention.ms": "60000"}
    assert [t["name"] for t in ctl_json(["topics", "list"], env)["topics"]] == ["jobs"]
    placed = ctl_json(["records", "produce", "jobs", "a", "b", "--partition", "1"], env)
    assert placed["offsets"] == [{"partition": 1, "offset": 0}, {"partition": 1, "offset": 1}]
    assert [r["value"] for r in ctl_json(["records", "read", "jobs", "1"], env)["records"]] == ["a", "b"]

    pushed = ctl_json(["faults", "errors", "Produce", "NOT_LEADER_OR_FOLLOWER"], env)
    assert pushed["pending_errors"] == {"Produce": ["NOT_LEADER_OR_FOLLOWER"]}
    latency = ctl_json(["faults", "latency", "5", "--api", "Fetch"], env)
    assert ctl_json(["faults", "remove", str(latency["id"])], env) == {"ok": True}
    led_by_2 = {f"jobs-{p['index']}": -1 for p in created["partitions"] if p["leader_id"] == 2}  # one replica: no successor
    assert led_by_2 and ctl_json(["faults", "broker-down", "2"], env)["leaders_moved"] == led_by_2
    assert ctl_json(["faults", "list"], env)["brokers_down"] == [2]
    ctl_json(["faults", "broker-up", "2"], env)
    cleared = ctl_json(["faults", "clear"], env)
    assert cleared["pending_errors"] == {} and cleared["brokers_down"] == []

    now = ctl_json(["clock"], env)["now_ms"]
    assert ctl_json(["clock", "advance", "1500"], env)["now_ms"] == now + 1500
    events = ctl_json(["events", "--type", "control."], env)["events"]
    assert [e["type"] for e in events] == ["control.broker_down", "control.broker_up"]
    assert ctl_json(["groups", "list"], env) == {"groups": []}

    missing = run_cli(["ctl", "groups", "describe", "nobody"], env)
    assert missing.returncode == 1 and "no group 'nobody'" in json.loads(missing.stderr)["error"]
    no_token = run_cli(["ctl", "topics", "list"], {"MOCKBROKER_ADMIN_URL": side.admin})
    assert no_token.returncode == 1 and json.loads(no_token.stderr)["field"] == "header.Authorization"
    assert run_cli(["ctl", "topics", "create", "x", "--config", "novalue"], env).returncode == 2
