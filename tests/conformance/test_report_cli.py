"""Reports, the README block, the command line and the bootstrap target."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mockbroker.testing import start_cluster
from mockbroker_conformance import FAIL, PASS, UNSUPPORTED, CellResult, Finding, Matrix, report, run_suite


def small_matrix(detail_suffix: str = "") -> Matrix:
    cells = [
        CellResult("a", "group-join", PASS, duration_s=1.5),
        CellResult("b", "group-join", UNSUPPORTED, "no groups here"),
        CellResult("a", "commit-resume", FAIL, f"client audit: 2 finding(s){detail_suffix}",
                   [Finding("api-version", "a-1", "OffsetCommit v1 is outside 2-10", {"api": "OffsetCommit", "version": 1})] * 2),
        CellResult("b", "commit-resume", FAIL, f"timed out waiting for 127.0.0.1:{40000 + len(detail_suffix)}; stderr tail: x{detail_suffix}"),
    ]  # fmt: skip
    return Matrix("test target", ["a", "b"], ["group-join", "commit-resume"], cells, {"a": "1.0"}, "now", 3.0)


def test_readme_block_is_deterministic_and_keeps_reasons() -> None:
    block = report.readme_block(small_matrix())
    assert block == report.readme_block(small_matrix(detail_suffix=" (second run)"))
    assert "| consumer group: join | pass | n/s [1] |" in block
    assert "1. not supported: no groups here" in block
    assert "client audit: api-version: OffsetCommit v1 is outside 2-10" in block
    assert "HOST:PORT" in block and "stderr tail" not in block


def kafka_matrix() -> Matrix:
    """The reference run of small_matrix's clients: b passes commit-resume there, fault scenarios
    are not supported (and not compared)."""
    cells = [
        CellResult("a", "group-join", PASS),
        CellResult("b", "group-join", UNSUPPORTED, "no groups here"),
        CellResult("a", "commit-resume", FAIL, "timed out waiting for the answer to commit"),
        CellResult("b", "commit-resume", PASS),
        CellResult("a", "fault-latency", UNSUPPORTED, "the kafka target cannot inject latency"),
    ]
    return Matrix("Apache Kafka 4.3.1", ["a", "b"], ["group-join", "commit-resume", "fault-latency"], cells)


def test_readme_block_with_kafka_as_reference() -> None:
    ours = small_matrix()
    ours.scenarios.append("fault-latency")
    ours.cells += [CellResult("a", "fault-latency", PASS), CellResult("b", "fault-latency", PASS)]
    block = report.readme_block(ours, kafka_matrix())
    lines = block.splitlines()
    assert lines[4].startswith("| scenario | Apache Kafka 4.3.1 (reference) | a 1.0 | b |")
    assert "| consumer group: join | pass | pass | n/s [1] |" in block
    # a fails on both (no mark); b fails against mockbroker only: marked, with Kafka's status.
    row = next(line for line in lines if line.startswith("| commit and resume |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].startswith("FAIL: a [") and cells[2].startswith("FAIL [") and "Kafka" not in cells[2]
    assert cells[3].startswith("FAIL [") and cells[3].endswith("(Kafka: pass)")
    assert "| fault: 150 ms on every request | n/s (faults) | pass | pass |" in block
    assert [(o.client, o.scenario, r.status) for o, r in report.differences(ours, kafka_matrix())] == [("b", "commit-resume", PASS)]
    assert "against Apache Kafka 4.3.1: fails: timed out waiting for the answer to commit" in block


def test_update_readme_rewrites_only_the_block(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n\n{report.BEGIN}\nold\n{report.END}\n\nafter\n")
    assert report.update_readme(readme, small_matrix()) is True
    text = readme.read_text()
    assert text.startswith("# title\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert report.readme_table(text) == report.readme_block(small_matrix())
    assert report.update_readme(readme, small_matrix()) is False
    (tmp_path / "plain.md").write_text("no block")
    with pytest.raises(ValueError, match="no conformance block"):
        report.update_readme(tmp_path / "plain.md", small_matrix())


def test_json_round_trip_and_html(tmp_path: Path) -> None:
    paths = report.write_all(small_matrix(), tmp_path)
    assert Matrix.from_json(json.loads(paths[1].read_text())).to_json() == small_matrix().to_json()
    page = paths[2].read_text()
    assert "OffsetCommit v1 is outside 2-10" in page and "&lt;" not in report.to_html(small_matrix()).split("<table>")[0]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mockbroker", "conformance", *args], capture_output=True, text=True, timeout=300, check=False)


def test_cli_list_and_bad_usage() -> None:
    listed = _cli("--list")
    assert listed.returncode == 0 and "scenario fault-broker-down" in listed.stdout and "client   sarama" in listed.stdout
    bad = _cli("--clients", "no-such-client")
    assert bad.returncode == 2 and "unknown client no-such-client" in bad.stderr


def test_bootstrap_target_runs_scenarios_and_refuses_faults(tmp_path: Path) -> None:
    """Any broker at a bootstrap address (here a mockbroker started apart): shared, so names are
    prefixed per run; no control API, so fault scenarios are not supported there."""
    with start_cluster(1) as kafka:
        matrix = run_suite(bootstrap=kafka.bootstrap_servers, clients=["confluent-kafka"],
                           scenarios=["produce-consume-gzip", "group-join", "fault-latency"])  # fmt: skip
        topics = kafka.topics()
    statuses = {c.scenario: c.status for c in matrix.cells}
    assert statuses == {"produce-consume-gzip": PASS, "group-join": PASS, "fault-latency": UNSUPPORTED}, matrix.cells
    assert matrix.cell("confluent-kafka", "fault-latency").detail == "the bootstrap target cannot inject latency"
    assert topics and all(name.startswith("conf-") for name in topics)


def test_cli_runs_and_writes_its_files(tmp_path: Path) -> None:
    done = _cli("--clients", "kafka-python", "--scenarios", "group-join", "--out", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "| consumer group: join | pass |" in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matrix.html", "matrix.json", "matrix.md"]
