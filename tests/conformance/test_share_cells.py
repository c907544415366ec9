"""The share-group scenarios' cells (KIP-932, mockbroker_conformance/share_scenarios.py) in the
session's matrices against mockbroker and Kafka (no run of their own): every client with a share
consumer passes them on both, and the others are "not supported", saying why."""

from __future__ import annotations

from mockbroker_conformance import PASS, UNSUPPORTED, Matrix
from mockbroker_conformance.scenarios import SCENARIOS

SHARE = [s.id for s in SCENARIOS if s.id.startswith("share-")]
# The clients with a share consumer, and the share scenarios each cannot do (no share admin calls).
SHARE_CLIENTS = {
    "confluent-kafka": {"share-admin"}, "confluent-kafka/consumer": {"share-admin"},
    "java": set(), "java/consumer": set(),
    "franz-go": {"share-admin"}, "franz-go/consumer": {"share-admin"},
}  # fmt: skip


def check(matrix: Matrix) -> None:
    assert SHARE == ["share-consume", "share-release-redeliver", "share-reject-archive", "share-lock-expiry", "share-admin"]
    for client in matrix.clients:
        for scenario in SHARE:
            cell = matrix.cell(client, scenario)
            assert cell is not None, (client, scenario)
            if client in SHARE_CLIENTS and scenario not in SHARE_CLIENTS[client]:
                assert cell.status == PASS, f"{matrix.target}: {client} / {scenario}: {cell.status} {cell.detail}"
            else:
                # the client's own reason; the Kafka Streams columns run only streams-* scenarios
                reason = ("Kafka Streams",) if client.startswith("kafka-streams") else ("share", "admin")
                assert cell.status == UNSUPPORTED and any(r in cell.detail for r in reason), (client, scenario, cell)


def test_share_cells_against_mockbroker(mockbroker_matrix: Matrix) -> None:
    check(mockbroker_matrix)


def test_share_cells_against_kafka(kafka_matrix: Matrix) -> None:
    check(kafka_matrix)
