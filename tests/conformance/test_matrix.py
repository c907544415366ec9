"""The whole matrix against mockbroker, all clients, and the README's compatibility table."""

from __future__ import annotations

import difflib
import re

from mockbroker_conformance import FAIL, PASS, UNSUPPORTED, Matrix, report
from mockbroker_conformance.clients import CLIENTS
from mockbroker_conformance.scenarios import SCENARIOS
from tests.conformance.conftest import OUT, REPO

# Clients whose every scenario passes (or is not supported by the client) against mockbroker; the
# others' failures are their own (docs/conformance.md, "What the matrix shows").
CLEAN = ("kafka-python", "aiokafka", "confluent-kafka", "confluent-kafka/consumer", "kcat", "java", "java/consumer",
         "franz-go", "franz-go/consumer", "kafka-streams", "kafka-streams/streams")  # fmt: skip


def test_every_cell_ran(mockbroker_matrix: Matrix) -> None:
    m = mockbroker_matrix
    assert m.clients == list(CLIENTS) and m.scenarios == [s.id for s in SCENARIOS]
    assert {(c.client, c.scenario) for c in m.cells} == {(c, s) for c in m.clients for s in m.scenarios}
    for c in m.cells:
        assert c.status in (PASS, FAIL, UNSUPPORTED)
        if c.status != PASS:
            assert c.detail, f"{c.client} / {c.scenario}: {c.status} without a reason"


def test_reference_clients_pass_against_mockbroker(mockbroker_matrix: Matrix) -> None:
    failed = [f"{c.client} / {c.scenario}: {c.detail}" for c in mockbroker_matrix.cells if c.client in CLEAN and c.status == FAIL]
    assert not failed, "\n".join(failed)
    # Each client's own limits, as its driver states them.
    unsupported = {(c.client, c.scenario) for c in mockbroker_matrix.cells if c.status == UNSUPPORTED}
    assert ("aiokafka", "cooperative-rebalance") in unsupported
    assert ("kcat", "seek-pause-resume") in unsupported
    # Only the Java driver has admin commands (the admin scenarios), and kafka-python no share
    # consumer (test_share_cells.py); otherwise these clients run every client scenario (the
    # streams-* ones are Kafka Streams').
    assert not {c for c in unsupported if c[0] in ("kafka-python", "confluent-kafka", "confluent-kafka/consumer")
                and c[1] not in ("admin", "share-admin") and not c[1].startswith("streams-")
                and not (c[0] == "kafka-python" and c[1].startswith("share-"))}  # fmt: skip


def test_kafka_streams_runs_its_own_scenarios_only(mockbroker_matrix: Matrix) -> None:
    """The Kafka Streams columns (classic and KIP-1071) pass every streams-* scenario, and the
    kinds do not mix: a streams scenario is "not supported" for the other clients, the other
    scenarios for Kafka Streams."""
    streams = {s.id for s in SCENARIOS if s.kind == "streams"}
    assert streams == {"streams-wordcount", "streams-scale-out", "streams-crash", "streams-standby", "streams-missing-topic"}
    for c in mockbroker_matrix.cells:
        app = c.client.startswith("kafka-streams")
        if app and c.scenario in streams:
            assert c.status == PASS, (c.client, c.scenario, c.detail)
        elif app or c.scenario in streams:
            assert c.status == UNSUPPORTED and "Kafka Streams" in c.detail, (c.client, c.scenario, c.detail)


def test_audit_findings_name_the_request(mockbroker_matrix: Matrix) -> None:
    # sarama 1.22 commits with OffsetCommit v1, which Kafka 4 no longer advertises (KIP-896).
    sarama = mockbroker_matrix.cell("sarama", "commit-resume")
    assert sarama is not None and sarama.status == FAIL
    versions = [f for f in sarama.findings if f.check == "api-version"]
    assert versions and versions[0].request["api"] == "OffsetCommit" and versions[0].request["version"] == 1


def test_readme_table_is_the_generated_one(mockbroker_matrix: Matrix, kafka_matrix: Matrix) -> None:
    readme = (REPO / "README.md").read_text()
    current = report.readme_table(readme)
    assert current is not None, f"README.md lacks the block {report.BEGIN!r} ... {report.END!r}"
    fresh = report.readme_block(mockbroker_matrix, kafka_matrix)
    diff = "\n".join(difflib.unified_diff(current.splitlines(), fresh.splitlines(), "README.md", "this run", lineterm=""))
    assert _statuses(current) == _statuses(fresh), (
        "README.md's compatibility table differs from this run's matrix "
        f"(build/conformance/matrix.md; `mockbroker conformance --update-readme` rewrites it):\n{diff}"
    )


def _statuses(block: str) -> str:
    """The README block with what a failing cell's footnote says after "fails:" left out: every
    cell's status and footnote number, and every other footnote, must match this run; the words of
    a client's failure (which records it lost, how long it waited) are that run's evidence and
    change from run to run (kafkajs after a leader move loses or repeats records)."""
    return re.sub(r"^(\d+\. (?:against [^:]+: )?fails: ).*$", r"\1...", block, flags=re.MULTILINE)


def test_outputs_written(mockbroker_matrix: Matrix) -> None:
    md, js, page = (OUT / f"matrix.{ext}" for ext in ("md", "json", "html"))
    assert report.readme_block(mockbroker_matrix).splitlines()[4] in md.read_text()
    assert Matrix.from_json(__import__("json").loads(js.read_text())).to_json() == mockbroker_matrix.to_json()
    html = page.read_text()
    assert html.startswith("<!doctype html>") and "<script" not in html and "http" not in html.split("<body>")[0]
