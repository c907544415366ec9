"""KIP-848 consumer groups from one group's event log: one row per group epoch (pure Python, no Spark).

The consumer coordinator's events (docs/events.md, "Consumer group events") tell each epoch's story:
``consumer_group.epoch_bumped`` starts it (its ``reason`` is the trigger: a member joined, left or
was fenced, a subscription or the metadata changed, a forced rebalance), ``consumer_group.target_assignment``
gives the target the server assignor computed, ``consumer_group.member_reconciled`` each step a
member takes towards it, and the group's ``consumer_group.transition`` to ``Stable`` with that
``group_epoch`` ends the reconciliation.

Definitions:
- *reconciliation time*: from the epoch bump to the group's transition to Stable at that epoch
  (None when the group never got there: a later epoch superseded it, or the log ends first).
- *partitions moved*: partitions whose owner in this epoch's target differs from their owner in
  the previous target (a partition new to the group, or one nobody owns now, is not counted).
- *reconciliation steps*: ``member_reconciled`` events recorded for this epoch's assignment.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

EPOCH_COLUMNS = (
    "group_id STRING, group_epoch INT, trigger STRING, start_ms LONG, stable_ms LONG, reconciliation_ms LONG, "
    "members INT, partitions_assigned INT, partitions_moved INT, reconciliation_steps INT"
)


@dataclass
class Epoch:
    group_id: str
    group_epoch: int
    trigger: str | None
    start_ms: int
    stable_ms: int | None = None
    reconciliation_ms: int | None = None
    members: int = 0
    partitions_assigned: int = 0
    partitions_moved: int = 0
    reconciliation_steps: int = 0

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


def _details(event: Mapping[str, Any]) -> dict[str, Any]:
    raw = event.get("details")
    if raw is None:
        return {}
    if isinstance(raw, str):
        parsed = json.loads(raw)
        return parsed if isinstance(parsed, dict) else {}
    return dict(raw)


def _owners(target: Mapping[str, Mapping[str, Iterable[int]]]) -> dict[tuple[str, int], str]:
    return {(topic, p): member for member, topics in target.items() for topic, parts in topics.items() for p in parts}


def replay_epochs(group_id: str, events: Iterable[Mapping[str, Any]]) -> list[Epoch]:
    """Rows of one consumer group, in epoch order; ``events`` in ``seq`` order (other types ignored)."""
    epochs: dict[int, Epoch] = {}
    previous_owners: dict[tuple[str, int], str] = {}
    for event in events:
        kind = event.get("type")
        if not isinstance(kind, str) or not kind.startswith("consumer_group."):
            continue
        details = _details(event)
        time_ms = int(event["time_ms"])
        if kind == "consumer_group.epoch_bumped":
            epoch = int(details.get("group_epoch", event.get("generation_id") or 0))
            epochs[epoch] = Epoch(group_id, epoch, event.get("reason"), time_ms)
        elif kind == "consumer_group.target_assignment":
            epoch = int(details.get("assignment_epoch", event.get("generation_id") or 0))
            row = epochs.get(epoch)
            target = details.get("target") or {}
            owners = _owners(target)
            if row is not None:
                row.members = len(target)
                row.partitions_assigned = len(owners)
                row.partitions_moved = sum(1 for tp, m in owners.items() if tp in previous_owners and previous_owners[tp] != m)
            previous_owners = owners
        elif kind == "consumer_group.member_reconciled":
            row = epochs.get(int(details.get("assignment_epoch", -1)))
            if row is not None:
                row.reconciliation_steps += 1
        elif kind == "consumer_group.transition" and details.get("to_state") == "Stable":
            row = epochs.get(int(details.get("group_epoch", -1)))
            if row is not None and row.stable_ms is None:
                row.stable_ms = time_ms
                row.reconciliation_ms = time_ms - row.start_ms
    return [epochs[e] for e in sorted(epochs)]
