"""KIP-848 consumer groups, KIP-932 share groups and KIP-1071 streams groups from one group's event
log: one row per group epoch (pure Python, no Spark).

The three coordinators tell each epoch's story alike (docs/events.md, "Consumer group events",
"Share group events", "Streams group events"): ``<kind>.epoch_bumped`` starts it (its ``reason``
is the trigger), ``<kind>.target_assignment`` gives the target the server assignor computed
(partitions; a streams group's active tasks), and the members' steps towards it follow
(``member_reconciled``; a share group's ``member_assignment``). Kinds differ where their
coordinators do:

- a share group's epoch bump carries no reason, and a member leaving or fenced bumps the epoch
  without an ``epoch_bumped`` event (``share_group.member_left``/``member_fenced`` carry the new
  epoch as ``generation_id``, as ShareGroup's coordinator bumps it in the removal itself);
- a share group is Stable whenever it has members (share members revoke nothing first, KIP-932), so
  its epoch is reconciled when every member of the target has taken an assignment at that epoch;
  consumer and streams groups are reconciled at their ``transition`` to Stable with that
  ``group_epoch``.

Definitions:
- *reconciliation time*: from the epoch bump to its reconciliation (None when the group never got
  there: a later epoch superseded it, or the log ends first).
- *partitions moved*: partitions (tasks) whose owner in this epoch's target differs from their
  owner in the previous target (one new to the group, or one nobody owns now, is not counted).
- *reconciliation steps*: the members' steps recorded for this epoch's assignment.
- *cause*: what bumped the epoch, from the events since the previous bump: ``join``, ``leave``,
  the fencing cause (``session_timeout``, ``rebalance_timeout``, ``join_timeout``,
  ``sync_timeout``), ``subscription_change``, ``metadata_change``, ``forced_rebalance``, ``other``;
  ``control`` is true when the control API started it (``control.rebalance_forced``,
  ``control.session_expired``, docs/control.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

EPOCH_COLUMNS = (
    "group_id STRING, group_epoch INT, trigger STRING, cause STRING, control BOOLEAN, start_ms LONG, stable_ms LONG, "
    "reconciliation_ms LONG, members INT, partitions_assigned INT, partitions_moved INT, reconciliation_steps INT"
)
# Event-type prefix of each group kind -> its table (docs/pipeline.md).
KINDS = {
    "consumer_group": "consumer_group_epochs",
    "share_group": "share_group_epochs",
    "streams_group": "streams_group_epochs",
}
# Member events that say why the next epoch bump happens (the fencing cause comes from details).
_CAUSES = {
    "member_joined": "join",
    "member_left": "leave",
    "member_updated": "subscription_change",
    "member_subscription": "subscription_change",
    "subscription_metadata": "metadata_change",
    "topology_configured": "metadata_change",
}
# A joining member's subscription is recorded too (member_updated after member_joined), and a
# subscription brings metadata: these never hide the membership change that came with them.
_WEAK = ("other", "subscription_change", "metadata_change")


@dataclass
class Epoch:
    group_id: str
    group_epoch: int
    trigger: str | None
    start_ms: int
    cause: str = "other"
    control: bool = False
    stable_ms: int | None = None
    reconciliation_ms: int | None = None
    members: int = 0
    partitions_assigned: int = 0
    partitions_moved: int = 0
    reconciliation_steps: int = 0

    def to_record(self) -> dict[str, Any]:
        return asdict(self)

    def reconciled(self, time_ms: int) -> None:
        if self.stable_ms is None:
            self.stable_ms = time_ms
            self.reconciliation_ms = time_ms - self.start_ms


def _details(event: Mapping[str, Any]) -> dict[str, Any]:
    raw = event.get("details")
    if raw is None:
        return {}
    if isinstance(raw, str):
        parsed = json.loads(raw)
        return parsed if isinstance(parsed, dict) else {}
    return dict(raw)


def _owners(target: Mapping[str, Mapping[str, Any]], kind: str) -> dict[tuple[str, int], str]:
    """(topic or subtopology, partition) -> member; a streams group's target is its active tasks."""
    if kind == "streams_group":
        target = {member: tasks.get("active") or {} for member, tasks in target.items()}
    return {(topic, p): member for member, topics in target.items() for topic, parts in topics.items() for p in parts}


class _Replay:
    """One group's epochs, event by event."""

    def __init__(self, group_id: str, kind: str) -> None:
        self.group_id, self.kind = group_id, kind
        self.epochs: dict[int, Epoch] = {}
        self.previous_owners: dict[tuple[str, int], str] = {}
        self.targets: dict[int, set[str]] = {}
        self.taken: dict[int, set[str]] = {}
        self.cause, self.control = "other", False

    def bump(self, epoch: int, trigger: str | None, time_ms: int) -> None:
        self.epochs[epoch] = Epoch(self.group_id, epoch, trigger, time_ms, self.cause, self.control)
        self.cause, self.control = "other", False

    def note_cause(self, name: str, event: Mapping[str, Any], details: Mapping[str, Any]) -> None:
        if name == "member_fenced":
            self.cause = str(details.get("cause") or "other")
        elif name in _CAUSES and (self.cause in _WEAK or _CAUSES[name] not in _WEAK):
            self.cause = _CAUSES[name]
        if self.kind == "share_group" and name in ("member_left", "member_fenced"):
            member = event.get("member_id") or "?"
            self.bump(int(event.get("generation_id") or 0), f"member {member} {self.cause}", int(event["time_ms"]))

    def target(self, details: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        epoch = int(details.get("assignment_epoch", event.get("generation_id") or 0))
        target = details.get("target") or {}
        owners = _owners(target, self.kind)
        row = self.epochs.get(epoch)
        if row is not None:
            row.members = len(target)
            row.partitions_assigned = len(owners)
            row.partitions_moved = sum(1 for tp, m in owners.items() if tp in self.previous_owners and self.previous_owners[tp] != m)
        self.previous_owners = owners
        self.targets[epoch] = set(target)

    def step(self, details: Mapping[str, Any], event: Mapping[str, Any]) -> None:
        key = "assignment_epoch" if self.kind == "consumer_group" else "member_epoch"
        epoch = int(details.get(key, -1))
        row = self.epochs.get(epoch)
        if row is None:
            return
        row.reconciliation_steps += 1
        if self.kind == "share_group":
            self.taken.setdefault(epoch, set()).add(str(event.get("member_id")))
            if epoch in self.targets and self.targets[epoch] <= self.taken[epoch]:
                row.reconciled(int(event["time_ms"]))

    def event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if not isinstance(kind, str):
            return
        if kind in ("control.rebalance_forced", "control.session_expired"):
            self.control = True
            self.cause = "forced_rebalance" if kind == "control.rebalance_forced" else self.cause
            return
        prefix, _, name = kind.partition(".")
        if prefix != self.kind:
            return
        details = _details(event)
        if name == "epoch_bumped":
            trigger = event.get("reason") or (f"{self.cause} (member {event.get('member_id')})" if self.kind == "share_group" else None)
            self.bump(int(details.get("group_epoch", event.get("generation_id") or 0)), trigger, int(event["time_ms"]))
        elif name == "target_assignment":
            self.target(details, event)
        elif name in ("member_reconciled", "member_assignment"):
            self.step(details, event)
        elif name == "transition" and details.get("to_state") == "Stable" and self.kind != "share_group":
            row = self.epochs.get(int(details.get("group_epoch", -1)))
            if row is not None:
                row.reconciled(int(event["time_ms"]))
        else:
            self.note_cause(name, event, details)


def replay_epochs(group_id: str, events: Iterable[Mapping[str, Any]], kind: str = "consumer_group") -> list[Epoch]:
    """Rows of one group of ``kind`` (a KINDS key), in epoch order; ``events`` in ``seq`` order
    (other kinds' events ignored, the control API's for this group kept as causes)."""
    if kind not in KINDS:
        raise ValueError(f"unknown group kind {kind!r}: one of {', '.join(KINDS)}")
    replay = _Replay(group_id, kind)
    for event in events:
        replay.event(event)
    return [replay.epochs[e] for e in sorted(replay.epochs)]
