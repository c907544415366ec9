"""The same suite against librdkafka's mock cluster: every difference from mockbroker's matrix must
be one that docs/conformance.md explains (a place where that mock departs from Kafka, or we do)."""

from __future__ import annotations

import re

from mockbroker_conformance import Matrix
from mockbroker_conformance.clients import CLIENTS
from tests.conformance.conftest import NOT_ON_RDKAFKA_MOCK, REPO

_ROW = re.compile(r"^\| (?P<client>[^|]+?) \| (?P<scenario>[^|]+?) \| (?P<why>[^|]+) \|$")


def explained_differences() -> dict[tuple[str, str], str]:
    """(client or "*", scenario or "*") -> why, from the table under "## Differences" in the docs."""
    text = (REPO / "docs" / "conformance.md").read_text()
    section = text.split("<!-- rdkafka-mock-differences:begin -->")[1].split("<!-- rdkafka-mock-differences:end -->")[0]
    rows = {}
    for line in section.splitlines():
        m = _ROW.match(line.strip())
        if m and m["client"] not in ("client", "---"):
            for scenario in m["scenario"].split(","):
                rows[(m["client"].strip("` "), scenario.strip("` "))] = m["why"]
    return rows


def test_every_difference_from_mockbroker_is_explained(mockbroker_matrix: Matrix, rdkafka_matrix: Matrix) -> None:
    explained = explained_differences()
    assert explained, "docs/conformance.md lists no differences"
    unexplained = []
    assert set(rdkafka_matrix.clients) == set(CLIENTS) - set(NOT_ON_RDKAFKA_MOCK)
    for ours in mockbroker_matrix.cells:
        if ours.client in NOT_ON_RDKAFKA_MOCK:
            continue
        theirs = rdkafka_matrix.cell(ours.client, ours.scenario)
        assert theirs is not None
        if theirs.status == ours.status:
            continue
        if ours.detail.startswith("client audit:") and theirs.status == "pass":
            continue  # only the audit failed it, and nothing audits the mock (the docs' rule)
        keys = [(ours.client, ours.scenario), ("*", ours.scenario), (ours.client, "*")]
        if not any(k in explained for k in keys):
            unexplained.append(f"{ours.client} / {ours.scenario}: mockbroker {ours.status}, rdkafka-mock {theirs.status}: {theirs.detail}")
    assert not unexplained, "differences docs/conformance.md does not explain:\n" + "\n".join(unexplained)


def test_mock_runs_every_cell(rdkafka_matrix: Matrix) -> None:
    assert len(rdkafka_matrix.cells) == len(rdkafka_matrix.clients) * len(rdkafka_matrix.scenarios)
    assert rdkafka_matrix.target.startswith("librdkafka")
    # librdkafka's own client works with its own mock on the basics.
    for scenario in ("produce-consume-none", "group-join", "commit-resume"):
        cell = rdkafka_matrix.cell("confluent-kafka", scenario)
        assert cell is not None and cell.status == "pass", cell
