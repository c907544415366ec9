"""The same suite against a real Apache Kafka, the reference: the reference clients pass there, and
mockbroker's cell equals Kafka's for every client and scenario (fault scenarios aside: Kafka has no
fault injection), unless docs/divergences.md explains the difference."""

from __future__ import annotations

import re

from mockbroker_conformance import FAIL, PASS, Matrix, report
from mockbroker_conformance.clients import CLIENTS
from mockbroker_conformance.scenarios import SCENARIOS
from tests.conformance.conftest import REPO

# Clients that pass every scenario they support against Kafka (the others fail where they fail
# against mockbroker too, for their own reasons: docs/conformance.md).
CLEAN = ("kafka-python", "aiokafka", "confluent-kafka", "confluent-kafka/consumer", "kcat",
         "java", "java/consumer", "franz-go", "franz-go/consumer", "kafka-streams", "kafka-streams/streams")  # fmt: skip
_ROW = re.compile(r"^\| (?P<client>[^|]+?) \| (?P<scenario>[^|]+?) \| (?P<why>[^|]+) \|$")


def explained_differences() -> dict[tuple[str, str], str]:
    """(client, scenario) -> why, from the conformance table of docs/divergences.md."""
    text = (REPO / "docs" / "divergences.md").read_text()
    section = text.split("<!-- kafka-conformance-differences:begin -->")[1].split("<!-- kafka-conformance-differences:end -->")[0]
    rows = {}
    for line in section.splitlines():
        m = _ROW.match(line.strip())
        if m and m["client"] not in ("client", "---"):
            for scenario in m["scenario"].split(","):
                rows[(m["client"].strip("` "), scenario.strip("` "))] = m["why"]
    return rows


def test_kafka_runs_every_client_and_scenario(kafka_matrix: Matrix) -> None:
    assert kafka_matrix.target.startswith("Apache Kafka 4.")
    assert kafka_matrix.clients == list(CLIENTS)
    assert kafka_matrix.scenarios == [s.id for s in SCENARIOS if not s.fault]
    assert len(kafka_matrix.cells) == len(kafka_matrix.clients) * len(kafka_matrix.scenarios)


def test_reference_clients_pass_against_kafka(kafka_matrix: Matrix) -> None:
    failed = [f"{c.client} / {c.scenario}: {c.detail}" for c in kafka_matrix.cells if c.client in CLEAN and c.status == FAIL]
    assert not failed, "\n".join(failed)
    # The Java client passes every client scenario there, Kafka Streams every streams-* one
    # (both group protocols; KIP-1071 is served by Kafka 4.2+).
    kinds = {s.id: s.kind for s in SCENARIOS}
    java = [c for c in kafka_matrix.cells if c.client.startswith("java") and kinds[c.scenario] == "client"]
    assert java and all(c.status == PASS for c in java), [c for c in java if c.status != PASS]
    streams = [c for c in kafka_matrix.cells if c.client.startswith("kafka-streams") and kinds[c.scenario] == "streams"]
    assert len(streams) == 10 and all(c.status == PASS for c in streams), [c for c in streams if c.status != PASS]


def test_mockbroker_cells_equal_kafkas(mockbroker_matrix: Matrix, kafka_matrix: Matrix) -> None:
    explained = explained_differences()
    found = {(ours.client, ours.scenario): (ours, ref) for ours, ref in report.differences(mockbroker_matrix, kafka_matrix)}
    unexplained = [
        f"{c}/{s}: mockbroker {ours.status} ({ours.detail[:300]}), Kafka {ref.status} ({ref.detail[:300]})"
        for (c, s), (ours, ref) in found.items() if (c, s) not in explained
    ]  # fmt: skip
    assert not unexplained, "cells where mockbroker differs from Kafka, not in docs/divergences.md:\n" + "\n".join(unexplained)
    stale = sorted(set(explained) - set(found))
    assert not stale, f"docs/divergences.md lists conformance differences that are gone (remove them): {stale}"
