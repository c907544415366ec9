"""The assignor lab's core, in pure Python: scenario grids, and one scenario run through one assignor.

A scenario is a group (members, topics with partition counts, who subscribes to what) and a churn
sequence; ``simulate`` plays it through an assignor the way the group protocol would and measures
each step. The Spark job (``mockbroker_pipeline.lab``) runs ``simulate`` on executors, one row per step.

How a step is played, per rebalance protocol:
- **eager** (range, roundrobin, sticky, and client-side plugins without COOPERATIVE): every member
  revokes everything before it rejoins (KIP-429's description of eager), so ``revoked`` is all the
  surviving members held; one generation.
- **cooperative** (cooperative-sticky, or a plugin whose protocols include COOPERATIVE): members
  keep what they own and send it in ``owned_partitions``; partitions taken from them are revoked,
  and when any were, a follow-up generation hands them out (two generations).
- **server** (KIP-848 assignors, ``mockbroker_assignors.registry.server_names()``): the coordinator computes a
  target from each member's current assignment; a member revokes only what leaves it. One target
  computation per step.
Sticky assignors get what their Java counterparts send: "sticky" its user data (previous
assignment and generation), "cooperative-sticky" the generation with ``owned_partitions``.
A static member's restart within its session timeout triggers no rebalance at all (KIP-345): its
step has zero rebalances. A dynamic member's restart is a leave and a join under a new member id.

Step metrics: ``spread`` (max - min partitions per member) and ``stddev`` after the step;
``moved`` (partitions whose owner after the step differs from the owner before it);
``moved_from_survivors`` (per rebalance: partitions a member that stays in it held before and not
after; summed over the step's rebalances);
``revoked``; ``gained`` (partitions handed to members by the step's last generation: eager, every
assigned partition, since members start from nothing; otherwise those a member did not hold before);
``ownership_changes`` (revoked + gained: the partition callbacks the applications see);
``rebalances`` (generations, or target computations) and ``assign_ms`` (assignor time in the step).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import statistics
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from mockbroker_assignors import registry
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupSpec,
    MemberSpec,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)

CHURNS = ("scale_out", "scale_in", "rolling_restart_dynamic", "rolling_restart_static")
PATTERNS = ("uniform", "nested", "halves")


@dataclass(frozen=True)
class Scenario:
    """A group and a churn sequence. ``topics``: name -> partitions (ordered)."""

    scenario: str
    members: int
    topics: dict[str, int]
    pattern: str  # uniform: all subscribe to all; nested: member i to the first (i % T) + 1 topics;
    # halves: even members the first half of the topics, odd members the rest (all when one topic)
    churn: str

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Scenario:
        return cls(**json.loads(text))

    def subscription_of(self, index: int) -> tuple[str, ...]:
        names = list(self.topics)
        if self.pattern == "uniform" or len(names) == 1:
            return tuple(names)
        if self.pattern == "nested":
            return tuple(names[: index % len(names) + 1])
        if self.pattern == "halves":
            half = (len(names) + 1) // 2
            return tuple(names[:half] if index % 2 == 0 else names[half:])
        raise ValueError(f"unknown subscription pattern {self.pattern!r}; one of {', '.join(PATTERNS)}")


def _topics(count: int, partitions: int) -> dict[str, int]:
    return {f"t{i:02d}": partitions for i in range(count)}


def grid(size: str) -> list[Scenario]:
    """The scenarios of grid ``size`` (small, medium, large)."""
    if size == "small":
        # Chosen so that each reference claim has a scenario that shows it (docs/pipeline.md).
        shapes = [
            ("many-topics", 3, _topics(8, 2), ("uniform",)),
            ("one-topic", 4, _topics(1, 12), ("uniform",)),
            ("javadoc-nested", 3, {"t0": 1, "t1": 2, "t2": 3}, ("nested",)),
            ("halves", 4, _topics(4, 3), ("halves",)),
        ]
        return [
            Scenario(f"{name}/{pattern}/{churn}", members, topics, pattern, churn)
            for name, members, topics, patterns in shapes
            for pattern in patterns
            for churn in CHURNS
        ]
    if size == "medium":
        members_, topic_counts, partition_counts = (3, 6, 12), (1, 4, 16), (4, 12)
    elif size == "large":
        members_, topic_counts, partition_counts = (4, 16, 64), (1, 8, 32), (8, 32)
    else:
        raise ValueError(f"unknown grid {size!r}: small, medium or large")
    return [
        Scenario(f"m{m}-t{t}x{p}/{pattern}/{churn}", m, _topics(t, p), pattern, churn)
        for m, t, p, pattern, churn in itertools.product(members_, topic_counts, partition_counts, PATTERNS, CHURNS)
        if not (t == 1 and pattern != "uniform")  # one topic: every pattern is uniform
    ]


def assignor_names() -> list[tuple[str, str]]:
    """Every registered assignor as (name, kind): client-side protocol names, then server-side ones.
    (Names are resolved again on the executors: a plugin must be installed where they run. A
    ``"module:attr"`` reference, see ``mockbroker_assignors.registry.resolve``, works too.)"""
    return [(n, "client") for n in registry.names()] + [(n, "server") for n in registry.server_names()]


# -- simulation ----------------------------------------------------------------------------------


@dataclass
class _Member:
    member_id: str
    client: str
    index: int  # its place in the scenario: decides its subscription
    instance_id: str | None


@dataclass
class StepRow:
    scenario: str
    assignor: str
    kind: str
    protocol: str
    members: int
    topics: int
    partitions: int
    pattern: str
    churn: str
    step: int
    action: str
    group_size: int
    rebalances: int
    spread: int
    stddev: float
    max_partitions: int
    min_partitions: int
    moved: int
    moved_from_survivors: int
    revoked: int
    gained: int
    ownership_changes: int
    assign_ms: float
    counts_json: str  # partitions per member after the step, in member order (JSON list)
    errors: str = ""


def _new_id(client: str, salt: str) -> str:
    return f"{client}-{hashlib.sha1(salt.encode()).hexdigest()[:12]}"


@dataclass
class _Group:
    scenario: Scenario
    assignor_name: str
    kind: str
    members: list[_Member] = field(default_factory=list)
    owned: dict[str, tuple[TopicPartition, ...]] = field(default_factory=dict)
    generation: int = 0

    def __post_init__(self) -> None:
        self.cluster = ClusterMetadata.of(self.scenario.topics)
        if self.kind == "server":
            self.server = registry.resolve_server(self.assignor_name)
            self.protocol = "server"
        else:
            self.client = registry.resolve(self.assignor_name)
            cooperative = RebalanceProtocol.COOPERATIVE in self.client.supported_protocols
            self.protocol = "cooperative" if cooperative else "eager"
        self.static = self.scenario.churn == "rolling_restart_static"

    def member(self, index: int, salt: str) -> _Member:
        client = f"c{index:02d}"
        return _Member(_new_id(client, salt), client, index, f"i{index:02d}" if self.static else None)

    # -- one assignment --

    def _subscriptions(self) -> dict[str, Subscription]:
        from mockbroker_assignors import cooperative_sticky, sticky

        subs: dict[str, Subscription] = {}
        for m in self.members:
            owned = self.owned.get(m.member_id, ())
            topics = self.scenario.subscription_of(m.index)
            if self.protocol == "cooperative":
                user_data = cooperative_sticky.encode_user_data(self.generation) if self.assignor_name == "cooperative-sticky" else None
                subs[m.member_id] = Subscription(topics, user_data, owned, self.generation, None, m.instance_id)
            else:
                user_data = sticky.encode_user_data(owned, self.generation) if self.assignor_name == "sticky" and owned else None
                subs[m.member_id] = Subscription(topics, user_data, (), -1, None, m.instance_id)
        return subs

    def _assign(self) -> tuple[dict[str, tuple[TopicPartition, ...]], float]:
        started = time.perf_counter()
        if self.kind == "server":
            spec = GroupSpec({
                m.member_id: MemberSpec(
                    m.member_id,
                    frozenset(self.scenario.subscription_of(m.index)),
                    _by_topic(self.owned.get(m.member_id, ())),
                    m.instance_id,
                )
                for m in self.members
            })  # fmt: skip
            target = self.server.assign(spec, self.cluster)
            result = {
                m: tuple(sorted(TopicPartition(t, p) for t, ps in target.get(m, {}).items() for p in ps))
                for m in (x.member_id for x in self.members)
            }
        else:
            assigned = self.client.assign(self.cluster, self._subscriptions())
            result = {m.member_id: tuple(assigned[m.member_id].partitions) for m in self.members}
        return result, (time.perf_counter() - started) * 1000

    def rebalance(self) -> _Rebalance:
        """One rebalance of the current members (one or, cooperative with revocations, two generations)."""
        survivors = {m.member_id for m in self.members}
        before = {m: set(ps) for m, ps in self.owned.items() if m in survivors}
        self.generation += 1
        result, ms = self._assign()
        generations = 1
        if self.protocol == "eager":
            revoked = sum(len(ps) for ps in before.values())
        else:
            revoked = sum(len(ps - set(result.get(m, ()))) for m, ps in before.items())
        self.owned = result
        if self.protocol == "cooperative" and revoked:
            self.generation += 1  # KIP-429: the follow-up rebalance hands out what was revoked
            result, more = self._assign()
            self.owned, ms, generations = result, ms + more, 2
        after = {tp: m for m, ps in self.owned.items() for tp in ps}
        moved_from_survivors = sum(1 for m, ps in before.items() for tp in ps if after.get(tp) != m)
        return _Rebalance(generations, revoked, ms, moved_from_survivors)


@dataclass
class _Rebalance:
    generations: int = 0
    revoked: int = 0
    ms: float = 0.0
    moved_from_survivors: int = 0  # partitions a member that stays held before and not after

    def __add__(self, other: _Rebalance) -> _Rebalance:
        return _Rebalance(
            self.generations + other.generations,
            self.revoked + other.revoked,
            self.ms + other.ms,
            self.moved_from_survivors + other.moved_from_survivors,
        )


def _by_topic(partitions: tuple[TopicPartition, ...]) -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}
    for tp in partitions:
        out.setdefault(tp.topic, set()).add(tp.partition)
    return {t: frozenset(ps) for t, ps in out.items()}


def _actions(scenario: Scenario) -> Iterator[tuple[str, int]]:
    """The churn as (action, member index) steps after the initial join."""
    n = scenario.members
    if scenario.churn == "scale_out":
        yield from (("join", n), ("join", n + 1))
    elif scenario.churn == "scale_in":
        yield from (("leave", n // 2), ("leave", 0))
    elif scenario.churn in ("rolling_restart_dynamic", "rolling_restart_static"):
        for i in range(n):
            yield "restart", i
    elif scenario.churn != "none":
        raise ValueError(f"unknown churn {scenario.churn!r}; one of {', '.join(CHURNS)}")


def simulate(scenario: Scenario, assignor: str, kind: str) -> list[StepRow]:
    """Play ``scenario`` through ``assignor``: the initial assignment (step 0), then each churn step."""
    g = _Group(scenario, assignor, kind)
    rows: list[StepRow] = []
    owners_before: dict[TopicPartition, str] = {}

    def record(step: int, action: str, r: _Rebalance) -> None:
        nonlocal owners_before
        # Owners by client: a restarted dynamic member is the same application under a new id.
        client_of = {m.member_id: m.client for m in g.members}
        owners = {tp: client_of[m] for m, ps in g.owned.items() if m in client_of for tp in ps}
        moved = sum(1 for tp, c in owners.items() if tp in owners_before and owners_before[tp] != c)
        counts = [len(g.owned.get(m.member_id, ())) for m in g.members]
        if g.protocol == "eager" and r.generations:
            gained = sum(counts)  # every member is handed its whole assignment anew
        else:
            gained = sum(1 for tp, c in owners.items() if owners_before.get(tp) != c)
        rows.append(StepRow(
            scenario=scenario.scenario, assignor=assignor, kind=kind, protocol=g.protocol,
            members=scenario.members, topics=len(scenario.topics), partitions=sum(scenario.topics.values()),
            pattern=scenario.pattern, churn=scenario.churn, step=step, action=action, group_size=len(g.members),
            rebalances=r.generations, spread=(max(counts) - min(counts)) if counts else 0,
            stddev=statistics.pstdev(counts) if counts else 0.0,
            max_partitions=max(counts, default=0), min_partitions=min(counts, default=0),
            moved=moved, moved_from_survivors=r.moved_from_survivors, revoked=r.revoked, gained=gained,
            ownership_changes=r.revoked + gained, assign_ms=r.ms, counts_json=json.dumps(counts),
        ))  # fmt: skip
        owners_before = owners

    g.members = [g.member(i, f"{scenario.scenario}/{i}/0") for i in range(scenario.members)]
    record(0, "initial", g.rebalance())
    for step, (action, index) in enumerate(_actions(scenario), start=1):
        if action == "join":
            g.members.append(g.member(index, f"{scenario.scenario}/{index}/{step}"))
            r = g.rebalance()
        elif action == "leave":
            leaving = g.members.pop(min(index, len(g.members) - 1))
            g.owned.pop(leaving.member_id, None)
            r = g.rebalance()
        else:  # restart
            position = next(i for i, m in enumerate(g.members) if m.index == index)
            old = g.members[position]
            new = g.member(index, f"{scenario.scenario}/{index}/{step}")
            if g.static:
                # KIP-345: the coordinator swaps the new member id in with the old assignment.
                g.members[position] = new
                g.owned[new.member_id] = g.owned.pop(old.member_id, ())
                r = _Rebalance()
            else:
                # A leave (one rebalance without it), then a join under a new id (another).
                g.members.pop(position)
                g.owned.pop(old.member_id, None)
                r = g.rebalance()
                g.members.insert(position, new)
                r = r + g.rebalance()
        record(step, action, r)
    return rows


def simulate_safely(scenario: Scenario, assignor: str, kind: str) -> list[StepRow]:
    """``simulate``, but an assignor that raises gives one row naming the error instead of failing
    the whole grid (a plugin's bug is a finding of the lab, not a crash of it)."""
    try:
        return simulate(scenario, assignor, kind)
    except Exception as exc:
        return [StepRow(
            scenario=scenario.scenario, assignor=assignor, kind=kind, protocol="", members=scenario.members,
            topics=len(scenario.topics), partitions=sum(scenario.topics.values()), pattern=scenario.pattern,
            churn=scenario.churn, step=-1, action="error", group_size=0, rebalances=0, spread=0, stddev=0.0,
            max_partitions=0, min_partitions=0, moved=0, moved_from_survivors=0, revoked=0, gained=0,
            ownership_changes=0, assign_ms=0.0, counts_json="[]", errors=f"{type(exc).__name__}: {exc}",
        )]  # fmt: skip


def rows_as_dicts(rows: list[StepRow]) -> list[dict[str, Any]]:
    return [asdict(r) for r in rows]


STEP_COLUMNS: Mapping[str, str] = {
    "scenario": "STRING", "assignor": "STRING", "kind": "STRING", "protocol": "STRING", "members": "INT",
    "topics": "INT", "partitions": "INT", "pattern": "STRING", "churn": "STRING", "step": "INT", "action": "STRING",
    "group_size": "INT", "rebalances": "INT", "spread": "INT", "stddev": "DOUBLE", "max_partitions": "INT",
    "min_partitions": "INT", "moved": "INT", "moved_from_survivors": "INT", "revoked": "INT", "gained": "INT",
    "ownership_changes": "INT", "assign_ms": "DOUBLE", "counts_json": "STRING", "errors": "STRING",
}  # fmt: skip
