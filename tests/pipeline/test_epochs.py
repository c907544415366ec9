"""KIP-848 epochs from hand-written consumer-group events (docs/events.md), without Spark."""

from __future__ import annotations

import json
from typing import Any

from mockbroker_pipeline.epochs import replay_epochs


def _e(seq: int, time_ms: int, type: str, reason: str | None = None, **details: Any) -> dict[str, Any]:
    return {"seq": seq, "time_ms": time_ms, "type": type, "group_id": "g", "reason": reason, "details": json.dumps(details)}


def test_epochs_reconciliation_time_and_moves() -> None:
    events = [
        _e(1, 100, "consumer_group.created", state="Empty"),
        _e(2, 100, "consumer_group.epoch_bumped", "member m1 joined", group_epoch=1),
        _e(3, 100, "consumer_group.target_assignment", assignor="uniform", assignment_epoch=1,
           target={"m1": {"t": [0, 1, 2, 3]}}),
        _e(4, 105, "consumer_group.member_reconciled", assignment_epoch=1, member_epoch=1),
        _e(5, 105, "consumer_group.transition", from_state="Reconciling", to_state="Stable", group_epoch=1),
        _e(6, 200, "consumer_group.epoch_bumped", "member m2 joined", group_epoch=2),
        _e(7, 200, "consumer_group.target_assignment", assignor="uniform", assignment_epoch=2,
           target={"m1": {"t": [0, 1]}, "m2": {"t": [2, 3]}}),
        _e(8, 210, "consumer_group.member_reconciled", assignment_epoch=2),
        _e(9, 230, "consumer_group.member_reconciled", assignment_epoch=2),
        _e(10, 250, "consumer_group.transition", from_state="Reconciling", to_state="Stable", group_epoch=2),
        _e(11, 300, "consumer_group.epoch_bumped", "member m2 left", group_epoch=3),
        _e(12, 300, "consumer_group.target_assignment", assignor="uniform", assignment_epoch=3,
           target={"m1": {"t": [0, 1, 2, 3]}}),
        _e(13, 301, "member.joined"),  # another kind: ignored
    ]
    rows = [r.to_record() for r in replay_epochs("g", events)]
    assert [(r["group_epoch"], r["trigger"], r["reconciliation_ms"], r["partitions_moved"], r["members"],
             r["reconciliation_steps"]) for r in rows] == [
        (1, "member m1 joined", 5, 0, 1, 1),
        (2, "member m2 joined", 50, 2, 2, 2),
        (3, "member m2 left", None, 2, 1, 0),
    ]  # fmt: skip
    assert all(r["partitions_assigned"] == 4 for r in rows)
