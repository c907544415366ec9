"""Rebalances from one group's event log: a replay of the coordinator's events, one row per generation.

Pure Python (no Spark): the Spark job (``mockbroker_pipeline.analyze``) runs ``replay`` once per (run, group)
on its executors, and tests run it directly on hand-written logs. The input is the documented
event log (docs/events.md, schema version 1): ``group.transition`` gives states and generations,
``member.assigned`` the decoded assignments, ``member.joined`` each member's protocol names, and
the member event just before a transition to PreparingRebalance says what started the rebalance.

The rebalance protocol of a generation (eager or cooperative, KIP-429) is not on the wire: each
client computes it from its own assignors. A Java consumer uses the highest protocol that *all*
its configured assignors support (ConsumerCoordinator), and librdkafka refuses assignors of mixed
protocols, so a member's protocol follows from the names it offers in JoinGroup, looked up in
``mockbroker_assignors.registry``: cooperative when every offered name supports COOPERATIVE; a generation is
cooperative when all its members are, eager when any is eager, ``unknown`` when a name is not
registered (a custom client-side assignor the registry does not know).

Definitions (docs/pipeline.md has the same in a table):
- *start*: the transition to PreparingRebalance that led to the generation; *end*: its transition
  to Stable (or to Empty for a generation formed without members).
- *revoked*: partitions that members present before and after had to give up. Eager: everything
  they held (KIP-429: every member revokes all before rejoining); cooperative: what they held
  before and not after. Partitions of departed members are not counted (they are *released*).
- *moved*: partitions assigned in this generation to a member other than their last owner.
- *time without partitions*: for each member that receives partitions in this generation, the time
  since it last held any (eager: since its JoinGroup in this rebalance; a new member: since it
  joined). Members are identified across restarts by group instance id when they have one.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

SCHEMA_VERSION = 1

EAGER = "eager"
COOPERATIVE = "cooperative"
UNKNOWN = "unknown"

# Triggers: what started the rebalance that formed a generation.
JOIN = "join"
LEAVE = "leave"
SESSION_EXPIRY = "session_expiry"
JOIN_TIMEOUT = "join_timeout"
SYNC_TIMEOUT = "sync_timeout"
METADATA_CHANGE = "metadata_change"
LEADER_REJOIN = "leader_rejoin"
COOPERATIVE_FOLLOWUP = "cooperative_followup"
STATIC_REPLACEMENT = "static_replacement"
OTHER = "other"

# Outcomes of a generation.
STABLE = "stable"
EMPTY = "empty"
ABORTED = "aborted"  # a new rebalance began before it reached Stable
DEAD = "dead"
OPEN = "open"  # the log ends before it settled

TP = tuple[str, int]


@dataclass
class MemberRow:
    """One member's part in one generation (the ``rebalance_members`` table)."""

    member: str  # group instance id for static members, member id otherwise
    member_id: str
    partitions_before: int
    partitions_after: int
    revoked: int
    gained: int
    time_without_partitions_ms: int | None  # None: it held partitions throughout, or got none


@dataclass
class GenerationRow:
    """One generation of one group (the ``rebalances`` table); see the module docstring."""

    group_id: str
    generation_id: int
    trigger: str
    trigger_member: str | None
    start_ms: int | None
    formed_ms: int
    end_ms: int | None
    duration_ms: int | None
    outcome: str
    members_before: int
    members_after: int
    members_joined: int
    members_departed: int
    protocol_name: str | None
    rebalance_protocol: str
    leader: str | None
    partitions_assigned: int
    partitions_moved: int
    partitions_revoked: int
    members_without_partitions: int
    max_time_without_partitions_ms: int | None
    total_time_without_partitions_ms: int
    max_partitions_per_member: int | None
    min_partitions_per_member: int | None
    stddev_partitions_per_member: float | None
    members: list[MemberRow] = field(default_factory=list)

    def to_record(self) -> dict[str, Any]:
        """A flat record: scalars, plus ``members_json`` (the member rows as a JSON array)."""
        record = {k: v for k, v in asdict(self).items() if k != "members"}
        record["members_json"] = json.dumps([asdict(m) for m in self.members], separators=(",", ":"))
        return record


@cache
def assignor_protocols(name: str) -> frozenset[str] | None:
    """The rebalance protocols the registered client-side assignor ``name`` supports (None: unknown)."""
    from mockbroker_assignors import registry
    from mockbroker_assignors.registry import UnknownAssignorError

    try:
        assignor = registry.get(name)
    except UnknownAssignorError:
        return None
    return frozenset(p.name.lower() for p in assignor.supported_protocols)


def member_protocol(names: Iterable[str]) -> str:
    """Java's rule: the highest protocol every one of the member's assignors supports."""
    supported: frozenset[str] | None = None
    for name in names:
        protocols = assignor_protocols(name)
        if protocols is None:
            return UNKNOWN
        supported = protocols if supported is None else supported & protocols
    if not supported:
        return UNKNOWN
    return COOPERATIVE if COOPERATIVE in supported else EAGER


@dataclass
class _Pending:
    """A generation formed (CompletingRebalance) and not yet settled."""

    row: GenerationRow
    before: dict[str, frozenset[TP]]  # holdings per member identity when the rebalance started
    members: list[str]  # member ids
    assigned: dict[str, frozenset[TP]] = field(default_factory=dict)
    gaps: dict[str, int] = field(default_factory=dict)


class _Group:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.state = "Empty"
        self.identity: dict[str, str] = {}  # member id -> instance id or member id
        self.protocols: dict[str, list[str]] = {}  # member id -> offered protocol names
        self.holdings: dict[str, frozenset[TP]] = {}  # identity -> partitions held now
        self.without_since: dict[str, int] = {}  # identity -> when it last stopped holding any
        self.last_owner: dict[TP, str] = {}  # partition -> identity of its last owner
        self.cause: tuple[str, str | None] | None = None  # the last member event, unconsumed
        self.start_ms: int | None = None
        self.trigger: tuple[str, str | None] = (OTHER, None)
        self.before: dict[str, frozenset[TP]] = {}
        self.previous_members: list[str] = []  # identities of the last formed generation
        self.previous: GenerationRow | None = None
        self.protocol = UNKNOWN  # of the current generation
        self.pending: _Pending | None = None
        self.rows: list[GenerationRow] = []

    def ident(self, member_id: str | None) -> str:
        return self.identity.get(member_id or "", member_id or "")

    # -- events --

    def on(self, e: Mapping[str, Any]) -> None:
        kind = e["type"]
        d: dict[str, Any] = e.get("details") or {}
        t = int(e["time_ms"])
        member_id: str = e.get("member_id") or ""
        if kind == "member.joined":
            instance = d.get("group_instance_id")
            self.identity[member_id] = instance or member_id
            self.protocols[member_id] = [p.get("name", "") for p in d.get("protocols") or []]
            ident = self.ident(member_id)
            if not self.holdings.get(ident):
                self.without_since.setdefault(ident, t)
            self.cause = (JOIN, ident)
        elif kind == "member.rejoined":
            ident = self.ident(member_id)
            if self.state == "PreparingRebalance" and self.protocol != COOPERATIVE and ident in self.before:
                self.without_since[ident] = t  # an eager member revokes everything just before it rejoins
            self.cause = (METADATA_CHANGE if d.get("same_metadata") is False else LEADER_REJOIN, ident)
        elif kind == "member.replaced":
            old = str(d.get("old_member_id") or "")
            self.identity[member_id] = d.get("group_instance_id") or self.ident(old)
            self.protocols[member_id] = self.protocols.pop(old, [])
            self.cause = (STATIC_REPLACEMENT, self.ident(member_id))
        elif kind == "member.left":
            self.cause = (LEAVE, self.ident(member_id))
            self._depart(member_id)
        elif kind == "member.expired":
            k = d.get("kind")
            self.cause = (SESSION_EXPIRY if k == "session_timeout" else JOIN_TIMEOUT, self.ident(member_id))
            self._depart(member_id)
        elif kind == "member.removed":
            self.cause = (SYNC_TIMEOUT if d.get("cause") == "pending_sync_expired" else OTHER, self.ident(member_id))
            self._depart(member_id)
        elif kind == "member.assigned":
            self._assigned(member_id, d.get("assignment"), t)
        elif kind == "group.transition":
            self._transition(e, d, t)

    def _depart(self, member_id: str | None) -> None:
        ident = self.ident(member_id)
        if ident in self.holdings:
            self.holdings[ident] = frozenset()
        self.without_since.pop(ident, None)

    def _assigned(self, member_id: str | None, assignment: Mapping[str, list[int]] | None, t: int) -> None:
        pending = self.pending
        if pending is None:
            return
        ident = self.ident(member_id)
        parts = frozenset((topic, int(p)) for topic, ps in (assignment or {}).items() for p in ps)
        pending.assigned[ident] = parts
        self.holdings[ident] = parts
        if parts:
            since = self.without_since.pop(ident, None)
            if since is not None:
                pending.gaps[ident] = t - since
        else:
            self.without_since.setdefault(ident, t)

    def _transition(self, e: Mapping[str, Any], d: Mapping[str, Any], t: int) -> None:
        to, generation = d.get("to_state"), int(e.get("generation_id") or 0)
        if to == "PreparingRebalance":
            self._close_pending(ABORTED, None)
            self.start_ms = t
            self.trigger = self._classify(e.get("reason") or "")
            # Snapshot what members hold; under eager every member revokes everything (from now
            # until its JoinGroup in this rebalance, which moves the mark forward).
            self.before = {i: p for i, p in self.holdings.items() if p}
            if self.protocol != COOPERATIVE:
                for ident in self.before:
                    self.holdings[ident] = frozenset()
                    self.without_since[ident] = t
        elif to == "CompletingRebalance":
            self._form(e, d, t, generation)
        elif to == "Stable":
            self._close_pending(STABLE, t)
        elif to == "Empty":
            if self.state == "PreparingRebalance":  # a generation formed with no members
                self._form(e, d, t, generation)
                self._close_pending(EMPTY, t)
            self.holdings = {}
        elif to == "Dead":
            self._close_pending(DEAD, None)
        self.state = to or self.state
        self.cause = None  # a cause counts only for the transition right after it

    def _classify(self, reason: str) -> tuple[str, str | None]:
        if self.cause is not None:
            kind, who = self.cause
            if (
                kind in (LEADER_REJOIN, METADATA_CHANGE)
                and self.previous is not None
                and self.previous.rebalance_protocol == COOPERATIVE
                and self.previous.partitions_revoked > 0
            ):
                return COOPERATIVE_FOLLOWUP, who  # KIP-429: rejoin after revoking
            return kind, who
        # No member event just before: read Kafka's own log wording.
        lowered = reason.lower()
        for needle, kind in (
            ("heartbeat expiration", SESSION_EXPIRY),
            ("leavegroup", LEAVE),
            ("adding new member", JOIN),
            ("static member", STATIC_REPLACEMENT),
            ("pending sync", SYNC_TIMEOUT),
            ("updating metadata", METADATA_CHANGE),
            ("re-joining", LEADER_REJOIN),
        ):
            if needle in lowered:
                return kind, None
        return OTHER, None

    def _form(self, e: Mapping[str, Any], d: Mapping[str, Any], t: int, generation: int) -> None:
        member_ids = [str(m) for m in d.get("members") or []]
        idents = [self.ident(m) for m in member_ids]
        protocols = {member_protocol(self.protocols.get(m, [])) for m in member_ids}
        if not protocols:
            protocol = self.protocol
        elif protocols == {COOPERATIVE}:
            protocol = COOPERATIVE
        elif EAGER in protocols:
            protocol = EAGER
        else:
            protocol = UNKNOWN
        before_set, after_set = set(self.previous_members), set(idents)
        row = GenerationRow(
            group_id=self.group_id,
            generation_id=generation,
            trigger=self.trigger[0],
            trigger_member=self.trigger[1],
            start_ms=self.start_ms,
            formed_ms=t,
            end_ms=None,
            duration_ms=None,
            outcome=OPEN,
            members_before=len(before_set),
            members_after=len(after_set),
            members_joined=len(after_set - before_set),
            members_departed=len(before_set - after_set),
            protocol_name=d.get("protocol_name"),
            rebalance_protocol=protocol,
            leader=self.ident(d.get("leader")) if d.get("leader") else None,
            partitions_assigned=0,
            partitions_moved=0,
            partitions_revoked=0,
            members_without_partitions=0,
            max_time_without_partitions_ms=None,
            total_time_without_partitions_ms=0,
            max_partitions_per_member=None,
            min_partitions_per_member=None,
            stddev_partitions_per_member=None,
        )
        self.protocol = protocol
        self.previous_members = idents
        self.pending = _Pending(row=row, before=dict(self.before), members=member_ids)

    def _close_pending(self, outcome: str, end_ms: int | None) -> None:
        pending, self.pending = self.pending, None
        if pending is None:
            return
        row = pending.row
        row.outcome = outcome
        row.end_ms = end_ms
        if end_ms is not None and row.start_ms is not None:
            row.duration_ms = end_ms - row.start_ms
        idents = [self.ident(m) for m in pending.members]
        counts: list[int] = []
        moved = revoked = 0
        for ident, member_id in zip(idents, pending.members, strict=True):
            before = pending.before.get(ident, frozenset())
            after = pending.assigned.get(ident, frozenset())
            counts.append(len(after))
            lost = before if row.rebalance_protocol != COOPERATIVE else before - after
            revoked += len(lost)
            for tp in after:
                previous_owner = self.last_owner.get(tp)
                if previous_owner is not None and previous_owner != ident:
                    moved += 1
                self.last_owner[tp] = ident
            gap = pending.gaps.get(ident)
            row.members.append(
                MemberRow(
                    member=ident,
                    member_id=member_id,
                    partitions_before=len(before),
                    partitions_after=len(after),
                    revoked=len(lost),
                    gained=len(after - before),
                    time_without_partitions_ms=gap,
                )
            )
        row.partitions_assigned = sum(counts)
        row.partitions_moved = moved
        row.partitions_revoked = revoked
        row.members_without_partitions = sum(1 for c in counts if c == 0)
        gaps = [g for g in pending.gaps.values()]
        row.max_time_without_partitions_ms = max(gaps) if gaps else None
        row.total_time_without_partitions_ms = sum(gaps)
        if counts:
            row.max_partitions_per_member = max(counts)
            row.min_partitions_per_member = min(counts)
            row.stddev_partitions_per_member = statistics.pstdev(counts)
        self.previous = row
        self.rows.append(row)


def replay(group_id: str, events: Iterable[Mapping[str, Any]]) -> list[GenerationRow]:
    """One row per generation of ``group_id``, from its events (any order: sorted by ``seq``).
    ``details`` may be a dict or its JSON text (as Spark hands it over)."""
    group = _Group(group_id)
    for e in sorted(events, key=lambda e: int(e["seq"])):
        details = e.get("details")
        if isinstance(details, str):
            e = {**e, "details": json.loads(details) if details else {}}
        group.on(e)
    group._close_pending(OPEN, None)
    return group.rows
