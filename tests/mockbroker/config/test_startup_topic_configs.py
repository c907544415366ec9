"""Topic configs declared at start (a TOML [[topic]], reached by --config or MOCKBROKER_CONFIG, and
the fixture's topics) get the check CreateTopics and POST /topics apply (LogConfig.validate): a bad
one stops the start with one line naming the key (CLI: exit status 2) or an error (fixture)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockbroker.testing import start_cluster
from tests.mockbroker.test_cli import run_cli

BAD_CONFIGS = {
    "cleanup.policy": ('"cleanup.policy" = "bogus"', "cleanup.policy"),
    "retention.ms": ('"retention.ms" = "abc"', "retention.ms"),
    "unknown key": ('"no.such.config" = "1"', "Unknown topic config name: no.such.config"),
}


def _toml(config_line: str) -> str:
    return f'[[topic]]\nname = "orders"\npartitions = 3\nconfigs = {{ {config_line} }}\n'


@pytest.mark.parametrize("source", ["--config", "MOCKBROKER_CONFIG"])
@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_a_bad_topic_config_at_start_exits_2_naming_the_key(source: str, case: str, tmp_path: Path) -> None:
    line, expected = BAD_CONFIGS[case]
    (tmp_path / "broker.toml").write_text(_toml(line))
    if source == "--config":
        result = run_cli(["serve", "--port", "0", "--config", "broker.toml"], cwd=tmp_path)
    else:
        result = run_cli(["serve", "--port", "0"], {"MOCKBROKER_CONFIG": "broker.toml"}, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mockbroker serve: error: broker.toml [[topic]] #1 (orders) configs: "), lines[0]
    assert expected in lines[0]


def test_a_good_topic_config_still_starts(tmp_path: Path) -> None:
    from mockbroker.cli import parse_serve

    (tmp_path / "broker.toml").write_text(_toml('"cleanup.policy" = "compact", "retention.ms" = 5000'))
    settings = parse_serve(["--config", str(tmp_path / "broker.toml")], {})
    assert settings.topics[0].configs == {"cleanup.policy": "compact", "retention.ms": "5000"}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_a_bad_fixture_topic_config_fails_the_start_naming_the_key(case: str) -> None:
    key, value = BAD_CONFIGS[case][0].replace('"', "").split(" = ")
    with pytest.raises(ValueError, match=r"topic 'orders' configs: .*") as refused:
        start_cluster(topics={"orders": {"partitions": 3, "configs": {key: value}}})
    assert BAD_CONFIGS[case][1] in str(refused.value)
