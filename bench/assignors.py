"""Assignor benchmark: our assignors vs kafka-python's and aiokafka's, on the same inputs, in one run.

Not a test: it measures how long one ``assign`` call takes for each implementation on the same
group, at three sizes, and how that time grows with the size.

    python bench/assignors.py                   # full run, prints the tables
    python bench/assignors.py --quick           # short run (fewer repeats, 5 s budget)
    python bench/assignors.py --write           # also append a dated section to bench/RESULTS.md
    python bench/assignors.py --json            # print the results as JSON instead of tables
    python bench/assignors.py --json out.json   # also write the results as JSON to out.json
    python bench/assignors.py --profile         # also cProfile our sticky assignors at (100, 1,000)

Scenarios: (members, partitions) = (10, 100), (100, 1,000), (1,000, 10,000), the partitions spread
over 10 topics of equal size; member ids look like Java's (``consumer-bench-<n>-<uuid4>``, from a
fixed seed). Subscriptions are *identical* (every member takes all 10 topics) or *heterogeneous*
(member ``i`` takes topic ``i % 10`` plus a random subset of the others, fixed seed).

* range, roundrobin: a cold assignment. Ours, kafka-python's and aiokafka's results must be equal
  (per-member partition sets); every difference is reported with its reason.
* sticky, cooperative-sticky: a *cold* assignment (nobody owns anything) and a *rebalance*: every
  member owned its partitions of our sticky's cold result (generation 1) and one member (the
  middle one in member id order) has left. Each implementation gets that ownership the way its own
  client sends it: sticky user data (kafka-python 3.0.12 writes and reads it with a 2-byte version
  prefix that Java, librdkafka, aiokafka and we neither write nor read, so it gets its own
  encoding), or ``owned_partitions`` plus ``generation_id`` for cooperative-sticky.
  kafka-python 3.0.12 has a ``CooperativeStickyAssignor`` (its sticky executor plus a filter),
  which is what our cooperative-sticky is compared with; aiokafka has none, so its column in the
  cooperative-sticky rows is its sticky on the same ownership (taken from the sticky row).
  The target table compares both of ours with kafka-python's *sticky*.
* uniform, server range (KIP-848, server-side): no kafka-python or aiokafka counterpart; absolute
  times and growth only. uniform also gets a rebalance (its own cold target, one member gone).

Checks, before anything is timed (a failure of ours stops the run): every result gives each
subscribed partition to exactly one subscribed member (``mockbroker_assignors.validation.check_assignment``).
A cooperative result may leave out partitions being revoked: those must still be held by their
previous owner and by nobody else, and no partition may go straight from one owner to another.
For the sticky assignors the table notes the balance (largest minus smallest member load) and, in
rebalances, how many partitions left a member that stayed.

Method: one ``assign`` call per sample, timed with ``time.perf_counter_ns``, the garbage
collector off (as ``timeit`` does), our assignors' module caches (``functools.lru_cache``) cleared
before each sample so no sample reuses hashes of member ids computed by an earlier one.
Implementations take turns within each repeat (in alternating order), so load drifting on a shared
machine hits them alike; the median of the repeats is reported (7, 5 and 3 repeats by size, fewer
when a call is slow). A call that runs longer than the budget (``--budget``, 60 s; 5 s with
``--quick``) is interrupted (SIGALRM) and reported as "> budget"; an implementation stops repeating
once another repeat would take its total past the budget. The first, checked call is a warm-up,
kept as a sample only when it took more than a second.
"""

# ruff: noqa: E402 - the project's imports must come after the sys.path fix below
from __future__ import annotations

import sys
from pathlib import Path

# This file is bench/assignors.py: run as a script, its directory comes first on sys.path and its name
# would shadow the ``assignors`` package. Take that directory off before importing the project.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import argparse
import cProfile
import datetime as dt
import gc
import hashlib
import io
import itertools
import json
import logging
import math
import os
import platform
import pstats
import random
import signal
import statistics
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType, SimpleNamespace
from typing import Any

from aiokafka.coordinator.assignors.range import RangePartitionAssignor as AioRange
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor as AioRoundRobin
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyAssignorUserDataV1
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor as AioSticky
from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor as KpCooperative
from kafka.coordinator.assignors.range import RangePartitionAssignor as KpRange
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor as KpRoundRobin
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor as KpSticky
from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from mockbroker_assignors import cooperative_sticky as ours_cooperative_module
from mockbroker_assignors import sticky as ours_sticky_module
from mockbroker_assignors.cooperative_sticky import CooperativeStickyAssignor
from mockbroker_assignors.range import RangeAssignor
from mockbroker_assignors.roundrobin import RoundRobinAssignor
from mockbroker_assignors.server_range import ServerRangeAssignor
from mockbroker_assignors.sticky import StickyAssignor
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupSpec,
    MemberAssignment,
    MemberSpec,
    Subscription,
    TopicPartition,
)
from mockbroker_assignors.uniform import UniformAssignor
from mockbroker_assignors.validation import check_assignment

RESULTS_PATH = Path(__file__).with_name("RESULTS.md")
ROOT = Path(__file__).resolve().parent.parent

SIZES: tuple[tuple[int, int], ...] = ((10, 100), (100, 1_000), (1_000, 10_000))
NUM_TOPICS = 10
SEED = 848
GENERATION = 1  # the generation the previous assignment of a rebalance belongs to
TARGET_SIZE = (100, 1_000)
TARGET_SPEEDUP = 10.0

Owners = dict[
    str, frozenset[TopicPartition]
]  # member id -> partitions, every implementation's result as this


# --------------------------------------------------------------------------- inputs


@dataclass
class Group:
    """One group to assign: cluster, members and their subscribed topics (our types)."""

    shape: str  # "identical" | "heterogeneous"
    members: int
    partitions: int
    cluster: ClusterMetadata
    topics: dict[str, int]  # topic -> partition count
    subscribed: dict[str, tuple[str, ...]]  # member id -> topics, in topic order

    @property
    def size(self) -> tuple[int, int]:
        return (self.members, self.partitions)


def make_group(shape: str, members: int, partitions: int) -> Group:
    rng = random.Random(f"{SEED}-{shape}-{members}-{partitions}")
    topics = {f"topic-{t}": partitions // NUM_TOPICS for t in range(NUM_TOPICS)}
    names = list(topics)
    member_ids = [
        f"consumer-bench-{n}-{uuid.UUID(int=rng.getrandbits(128), version=4)}" for n in range(members)
    ]
    subscribed: dict[str, tuple[str, ...]] = {}
    for i, m in enumerate(member_ids):
        if shape == "identical":
            subscribed[m] = tuple(names)
        else:
            # topic i % 10 so that every topic has a subscriber, plus 0-9 random others
            chosen = {names[i % NUM_TOPICS], *rng.sample(names, rng.randint(0, NUM_TOPICS - 1))}
            subscribed[m] = tuple(t for t in names if t in chosen)
    return Group(shape, members, partitions, ClusterMetadata.of(topics), topics, subscribed)


def leaving_member(group: Group) -> str:
    return sorted(group.subscribed)[len(group.subscribed) // 2]


def by_topic(partitions: frozenset[TopicPartition]) -> list[tuple[str, list[int]]]:
    grouped: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return list(grouped.items())


class KafkaCluster:
    """What kafka-python's and aiokafka's assignors read of ClusterMetadata."""

    def __init__(self, topics: Mapping[str, int]) -> None:
        self._partitions = {t: set(range(n)) for t, n in topics.items()}

    def topics(self) -> set[str]:
        return set(self._partitions)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._partitions.get(topic)


# --- result converters


def ours_owners(result: Mapping[str, MemberAssignment]) -> Owners:
    return {m: frozenset(a.partitions) for m, a in result.items()}


def server_owners(result: Mapping[str, Mapping[str, frozenset[int]]]) -> Owners:
    return {
        m: frozenset(TopicPartition(t, p) for t, ps in topics.items() for p in ps)
        for m, topics in result.items()
    }


def kafka_python_owners(result: Mapping[str, Any]) -> Owners:
    return {
        m: frozenset(TopicPartition(tp.topic, tp.partition) for tp in a.partitions())
        for m, a in result.items()
    }


def aiokafka_owners(result: Mapping[str, Any]) -> Owners:
    return {
        m: frozenset(TopicPartition(t, p) for t, ps in a.assignment for p in ps) for m, a in result.items()
    }


# --------------------------------------------------------------------------- scenarios


@dataclass
class Impl:
    label: str  # "ours" | "kafka-python" | "aiokafka"
    run: Callable[[], Any]
    owners: Callable[[Any], Owners]
    cooperative: bool = False  # may leave out partitions being revoked (KIP-429)
    is_ours: bool = False


@dataclass
class Scenario:
    assignor: str
    side: str  # "client" | "server"
    group: Group
    case: str  # "cold" | "rebalance"
    subscribed: dict[str, tuple[str, ...]]  # the members of this assignment and their topics
    previous: Owners | None  # for a rebalance: what the remaining members owned
    impls: list[Impl]
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, tuple[int, int], str]:
        return (self.assignor, self.group.shape, self.group.size, self.case)


def client_scenarios(group: Group, sticky_cold: Owners) -> list[Scenario]:
    cluster, kcluster = group.cluster, KafkaCluster(group.topics)
    out: list[Scenario] = []

    # range and roundrobin: cold only (they do not read previous ownership)
    plain_subs = {m: Subscription(topics=ts) for m, ts in group.subscribed.items()}
    plain_kp = [
        SimpleNamespace(
            member_id=m,
            group_instance_id=None,
            metadata=ConsumerProtocolSubscription(version=0, topics=list(ts), user_data=b""),
        )
        for m, ts in group.subscribed.items()
    ]
    plain_aio = {m: ConsumerProtocolMemberMetadata(0, list(ts), b"") for m, ts in group.subscribed.items()}
    for name, ours_cls, kp_cls, aio_cls in (
        ("range", RangeAssignor, KpRange, AioRange),
        ("roundrobin", RoundRobinAssignor, KpRoundRobin, AioRoundRobin),
    ):
        ours_assignor = ours_cls()
        out.append(
            Scenario(
                name,
                "client",
                group,
                "cold",
                group.subscribed,
                None,
                [
                    Impl(
                        "ours",
                        lambda a=ours_assignor: a.assign(cluster, plain_subs),
                        ours_owners,
                        is_ours=True,
                    ),
                    Impl("kafka-python", lambda k=kp_cls: k.assign(kcluster, plain_kp), kafka_python_owners),
                    Impl("aiokafka", lambda k=aio_cls: k.assign(kcluster, plain_aio), aiokafka_owners),
                ],
            )
        )

    for case in ("cold", "rebalance"):
        if case == "cold":
            subscribed = dict(group.subscribed)
            previous: Owners | None = None
            owned: Owners = {m: frozenset() for m in subscribed}
        else:
            gone = leaving_member(group)
            subscribed = {m: ts for m, ts in group.subscribed.items() if m != gone}
            previous = {m: sticky_cold[m] for m in subscribed}
            owned = previous

        def sticky_user_data(m: str, case: str = case, owned: Owners = owned) -> bytes | None:
            if case == "cold":
                return None
            return ours_sticky_module.encode_user_data(sorted(owned[m]), GENERATION)

        # sticky (eager): previous ownership in the assignor's user data, in each client's encoding
        ours_subs = {
            m: Subscription(topics=ts, user_data=sticky_user_data(m)) for m, ts in subscribed.items()
        }
        kp_members = [
            SimpleNamespace(
                member_id=m,
                group_instance_id=None,
                metadata=ConsumerProtocolSubscription(
                    version=0,
                    topics=list(ts),
                    user_data=b""
                    if case == "cold"
                    else StickyAssignorUserData(by_topic(owned[m]), GENERATION).encode(),
                ),
            )
            for m, ts in subscribed.items()
        ]
        aio_members = {
            m: ConsumerProtocolMemberMetadata(
                0,
                list(ts),
                b"" if case == "cold" else StickyAssignorUserDataV1(by_topic(owned[m]), GENERATION).encode(),
            )
            for m, ts in subscribed.items()
        }
        out.append(
            Scenario(
                "sticky",
                "client",
                group,
                case,
                subscribed,
                previous,
                [
                    Impl(
                        "ours",
                        lambda s=ours_subs: StickyAssignor().assign(cluster, s),
                        ours_owners,
                        is_ours=True,
                    ),
                    Impl(
                        "kafka-python",
                        lambda k=kp_members: KpSticky().assign(kcluster, k),
                        kafka_python_owners,
                    ),
                    Impl("aiokafka", lambda a=aio_members: AioSticky.assign(kcluster, a), aiokafka_owners),
                ],
            )
        )

        # cooperative-sticky: owned partitions and generation in the subscription (v2+ fields), the
        # generation also in the user data, as a Java member sends them
        generation = GENERATION if case == "rebalance" else -1
        coop_subs = {
            m: Subscription(
                topics=ts,
                user_data=ours_cooperative_module.encode_user_data(generation),
                owned_partitions=tuple(sorted(owned[m])),
                generation_id=generation,
            )
            for m, ts in subscribed.items()
        }
        kp_coop_members = [
            SimpleNamespace(
                member_id=m,
                group_instance_id=None,
                metadata=ConsumerProtocolSubscription(
                    version=2,
                    topics=list(ts),
                    user_data=b"",
                    owned_partitions=[
                        ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps)
                        for t, ps in by_topic(owned[m])
                    ],
                    generation_id=generation,
                ),
            )
            for m, ts in subscribed.items()
        ]
        out.append(
            Scenario(
                "cooperative-sticky",
                "client",
                group,
                case,
                subscribed,
                previous,
                [
                    Impl(
                        "ours",
                        lambda s=coop_subs: CooperativeStickyAssignor().assign(cluster, s),
                        ours_owners,
                        cooperative=True,
                        is_ours=True,
                    ),
                    Impl(
                        "kafka-python",
                        lambda k=kp_coop_members: KpCooperative().assign(kcluster, k),
                        kafka_python_owners,
                        cooperative=True,
                    ),
                ],
            )
        )
    return out


def server_scenarios(group: Group, uniform_cold: Owners) -> list[Scenario]:
    cluster = group.cluster
    spec = GroupSpec({m: MemberSpec(m, frozenset(ts)) for m, ts in group.subscribed.items()})
    out = [
        Scenario(
            "uniform",
            "server",
            group,
            "cold",
            group.subscribed,
            None,
            [Impl("ours", lambda: UniformAssignor().assign(spec, cluster), server_owners, is_ours=True)],
        ),
        Scenario(
            "server range",
            "server",
            group,
            "cold",
            group.subscribed,
            None,
            [Impl("ours", lambda: ServerRangeAssignor().assign(spec, cluster), server_owners, is_ours=True)],
        ),
    ]
    gone = leaving_member(group)
    subscribed = {m: ts for m, ts in group.subscribed.items() if m != gone}
    previous = {m: uniform_cold[m] for m in subscribed}
    assigned = {m: {t: frozenset(ps) for t, ps in by_topic(previous[m])} for m in subscribed}
    rebalance_spec = GroupSpec(
        {m: MemberSpec(m, frozenset(ts), assigned=assigned[m]) for m, ts in subscribed.items()}
    )
    out.insert(
        1,
        Scenario(
            "uniform",
            "server",
            group,
            "rebalance",
            subscribed,
            previous,
            [
                Impl(
                    "ours",
                    lambda: UniformAssignor().assign(rebalance_spec, cluster),
                    server_owners,
                    is_ours=True,
                )
            ],
        ),
    )
    return out


# --------------------------------------------------------------------------- checks


class CheckFailed(Exception):
    pass


def check(sc: Scenario, impl: Impl, owners: Owners) -> tuple[int, int | None, int]:
    """Exactly-once ownership of subscribed partitions (cooperative: counting partitions still held
    by their previous owner while it revokes them). Returns (balance spread, partitions that left a
    member that stayed, partitions withheld because they are being revoked)."""
    subs = {m: Subscription(topics=ts) for m, ts in sc.subscribed.items()}
    holding = dict(owners)
    withheld = 0
    if impl.cooperative and sc.previous:
        assigned = {tp for ps in owners.values() for tp in ps}
        for m, before in sc.previous.items():
            for tp in before:
                if tp not in owners.get(m, frozenset()) and tp in assigned:
                    raise CheckFailed(f"{tp.topic}-{tp.partition} goes from {m} straight to a new owner")
            revoked = frozenset(tp for tp in before - owners.get(m, frozenset()) if tp not in assigned)
            if revoked:
                holding[m] = holding.get(m, frozenset()) | revoked
                withheld += len(revoked)
    findings = check_assignment(
        sc.group.cluster, subs, {m: MemberAssignment(tuple(sorted(ps))) for m, ps in holding.items()}
    )
    if findings:
        more = f" (and {len(findings) - 3} more)" if len(findings) > 3 else ""
        raise CheckFailed("; ".join(findings[:3]) + more)
    loads = [len(owners.get(m, ())) for m in sc.subscribed]
    spread = max(loads) - min(loads)
    moved = None
    if sc.previous is not None:
        moved = sum(len(before - owners.get(m, frozenset())) for m, before in sc.previous.items())
    return spread, moved, withheld


def describe_difference(ours: Owners, theirs: Owners) -> str:
    differing = sorted(m for m in ours.keys() | theirs.keys() if ours.get(m) != theirs.get(m))
    return f"{len(differing)} of {len(ours)} members differ (e.g. {differing[0]})"


# --------------------------------------------------------------------------- timing


class BudgetExceeded(BaseException):
    """A BaseException, so that no ``except Exception`` in the code under test swallows it."""


def _on_alarm(signum: int, frame: object) -> None:
    raise BudgetExceeded


_OUR_MODULES: tuple[ModuleType, ...] = ()


def clear_our_caches() -> None:
    """Forget our assignors' memoised hashes and structs, so every sample starts from scratch."""
    for module in _OUR_MODULES:
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


def timed_call(fn: Callable[[], Any], budget_s: float) -> tuple[int, Any]:
    """(nanoseconds, result) of one call with the GC off; BudgetExceeded after ``budget_s``."""
    gc.collect()
    gc_was_on = gc.isenabled()
    gc.disable()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, budget_s)
    try:
        t0 = time.perf_counter_ns()
        result = fn()
        ns = time.perf_counter_ns() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if gc_was_on:
            gc.enable()
    return ns, result


@dataclass
class Measure:
    label: str
    status: str = "ok"  # "ok" | "over budget" | "failed" | "invalid"
    samples_ns: list[int] = field(default_factory=list)
    detail: str = ""
    spread: int | None = None
    moved: int | None = None
    withheld: int = 0

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples_ns) / 1e6 if self.samples_ns and self.status == "ok" else None


@dataclass
class Result:
    assignor: str
    side: str
    shape: str
    members: int
    partitions: int
    case: str
    measures: dict[str, Measure]
    notes: list[str]
    same_as_ours: dict[str, bool] = field(default_factory=dict)  # range, roundrobin: result equal to ours

    @property
    def size(self) -> tuple[int, int]:
        return (self.members, self.partitions)


KNOWN_FAILURES = {
    ("roundrobin", "kafka-python", "KeyError"): (
        "kafka-python 3.0.12's skip loop rebinds member_id to an (instance id, member id) pair, so it raises "
        "KeyError whenever the member whose turn it is does not subscribe to the topic (mockbroker_assignors/README.md)"
    ),
}


def run_scenario(sc: Scenario, repeats: int, budget_s: float, log: Callable[[str], None]) -> Result:
    measures: dict[str, Measure] = {}
    owners_of: dict[str, Owners] = {}
    spent: dict[str, int] = {}
    for impl in sc.impls:
        m = measures[impl.label] = Measure(impl.label)
        if impl.is_ours:
            clear_our_caches()
        try:
            ns, result = timed_call(impl.run, budget_s)
        except BudgetExceeded:
            m.status, m.detail = "over budget", f"> {budget_s:g} s"
            log(f"  {impl.label}: over the {budget_s:g} s budget")
            continue
        except Exception as exc:
            if impl.is_ours:
                raise
            m.status, m.detail = "failed", f"{type(exc).__name__}: {exc}"
            known = KNOWN_FAILURES.get((sc.assignor, impl.label, type(exc).__name__))
            sc.notes.append(
                f"{impl.label}'s {sc.assignor} fails on {sc.group.shape} {size_label(sc.group.size)}: "
                f"{type(exc).__name__}" + (f": {known}" if known else f" {exc}")
            )
            continue
        owners = owners_of[impl.label] = impl.owners(result)
        try:
            m.spread, m.moved, m.withheld = check(sc, impl, owners)
        except CheckFailed as exc:
            if impl.is_ours:
                raise SystemExit(f"our {sc.assignor} gives a wrong assignment in {sc.key}: {exc}") from exc
            m.status, m.detail = "invalid", str(exc)
            sc.notes.append(f"{impl.label}'s {sc.assignor} result is invalid on {sc.key}: {exc}")
            continue
        spent[impl.label] = ns
        if ns > 1_000_000_000:  # a slow call's warm-up is a fair sample
            m.samples_ns.append(ns)

    same_as_ours: dict[str, bool] = {}
    if sc.assignor in ("range", "roundrobin") and "ours" in owners_of:
        for label, theirs in owners_of.items():
            if label != "ours":
                same_as_ours[label] = theirs == owners_of["ours"]
                if not same_as_ours[label]:
                    sc.notes.append(
                        f"{sc.assignor} {sc.group.shape} {size_label(sc.group.size)}: ours and {label} "
                        f"differ: {describe_difference(owners_of['ours'], theirs)}"
                    )

    order = [impl for impl in sc.impls if measures[impl.label].status == "ok"]
    done: set[str] = set()
    for _ in range(repeats):
        for impl in order:
            m = measures[impl.label]
            if impl.label in done or len(m.samples_ns) >= repeats:
                continue
            last = m.samples_ns[-1] if m.samples_ns else spent[impl.label]
            if m.samples_ns and spent[impl.label] + last > budget_s * 1e9:
                done.add(impl.label)  # another repeat would take this implementation past its budget
                continue
            if impl.is_ours:
                clear_our_caches()
            try:
                ns, _ = timed_call(impl.run, budget_s)
            except BudgetExceeded:
                done.add(impl.label)
                if not m.samples_ns:
                    m.status, m.detail = "over budget", f"> {budget_s:g} s"
                continue
            spent[impl.label] += ns
            m.samples_ns.append(ns)
        order.reverse()
    g = sc.group
    return Result(
        sc.assignor, sc.side, g.shape, g.members, g.partitions, sc.case, measures, sc.notes, same_as_ours
    )


# --------------------------------------------------------------------------- reporting


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:,.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def cell(m: Measure | None) -> str:
    if m is None:
        return "-"
    if m.status == "ok":
        return fmt_ms(m.median_ms) + (f" ({len(m.samples_ns)})" if len(m.samples_ns) < 3 else "")
    if m.status == "over budget":
        return m.detail
    return m.status


def speedup(ours: Measure | None, theirs: Measure | None, budget_s: float) -> tuple[str, float | None]:
    """theirs / ours as text (``> N x`` when theirs ran over the budget) and as a number (lower bound)."""
    if ours is None or theirs is None or ours.median_ms is None:
        return "-", None
    if theirs.status == "over budget":
        bound = budget_s * 1e3 / ours.median_ms
        return f"> {bound:,.0f}x", bound
    if theirs.median_ms is None:
        return "-", None
    value = theirs.median_ms / ours.median_ms
    if value >= 100:
        return f"{value:,.0f}x", value
    return (f"{value:.1f}x" if value >= 1 else f"{value:.2g}x"), value


def size_label(size: tuple[int, int]) -> str:
    return f"{size[0]:,} x {size[1]:,}"


def by_key(results: list[Result]) -> dict[tuple[str, str, tuple[int, int], str], Result]:
    return {(r.assignor, r.shape, r.size, r.case): r for r in results}


def quality(r: Result) -> str:
    parts = []
    for label, m in r.measures.items():
        if m.spread is None:
            continue
        text = f"{label} {m.spread}"
        if m.moved is not None:
            text += f"/{m.moved}"
        if m.withheld:
            text += f" ({m.withheld} revoking)"
        parts.append(text)
    return "; ".join(parts)


def client_table(results: list[Result], budget_s: float) -> str:
    keyed = by_key(results)
    head = [
        "assignor",
        "subscriptions",
        "members x partitions",
        "case",
        "ours ms",
        "kafka-python ms",
        "aiokafka ms",
        "vs kafka-python",
        "vs aiokafka",
        "spread/moved",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 4 + ["---:"] * 5 + ["---"]) + "|"]
    for r in results:
        if r.side != "client":
            continue
        ours, kp = r.measures.get("ours"), r.measures.get("kafka-python")
        aio = r.measures.get("aiokafka")
        aio_text = cell(aio)
        if r.assignor == "cooperative-sticky":
            ref = keyed.get(("sticky", r.shape, r.size, r.case))
            aio = ref.measures.get("aiokafka") if ref else None
            aio_text = cell(aio) + " [s]"
        kp_text = cell(kp) + (" [c]" if r.assignor == "cooperative-sticky" else "")
        lines.append(
            "| "
            + " | ".join(
                [
                    r.assignor,
                    r.shape,
                    size_label(r.size),
                    r.case,
                    cell(ours),
                    kp_text,
                    aio_text,
                    speedup(ours, kp, budget_s)[0],
                    speedup(ours, aio, budget_s)[0],
                    quality(r) if r.assignor in ("sticky", "cooperative-sticky") else "",
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def target_table(results: list[Result], budget_s: float) -> tuple[str, bool | None]:
    keyed = by_key(results)
    head = ["ours", "subscriptions", "case", "ours ms", "kafka-python sticky ms", "speedup", ">= 10x"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|---:|---:|---:|---|"]
    verdicts: list[bool] = []
    for assignor in ("sticky", "cooperative-sticky"):
        for shape in ("identical", "heterogeneous"):
            for case in ("cold", "rebalance"):
                r = keyed.get((assignor, shape, TARGET_SIZE, case))
                ref = keyed.get(("sticky", shape, TARGET_SIZE, case))
                if r is None or ref is None:
                    continue
                ours, kp = r.measures.get("ours"), ref.measures.get("kafka-python")
                text, value = speedup(ours, kp, budget_s)
                ok = value is not None and value >= TARGET_SPEEDUP
                verdicts.append(ok)
                lines.append(
                    "| "
                    + " | ".join(
                        [
                            assignor,
                            shape,
                            case,
                            cell(ours),
                            cell(kp),
                            f"**{text}**",
                            "yes" if ok else "**no**",
                        ]
                    )
                    + " |"
                )
    return "\n".join(lines), (all(verdicts) if verdicts else None)


Step = tuple[float, bool] | None  # (growth factor, is a lower bound), or None when not measured


def growth_series(results: list[Result], budget_s: float) -> list[tuple[str, str, str, str, list[Step]]]:
    """Per (assignor, shape, case, implementation): time at each size over time at the size before;
    a lower bound when the larger size ran over the budget."""
    keyed = by_key(results)
    series = []
    seen: set[tuple[str, str, str]] = set()
    for r in results:
        k = (r.assignor, r.shape, r.case)
        if k in seen:
            continue
        seen.add(k)
        sizes = sorted({x.size for x in results if (x.assignor, x.shape, x.case) == k})
        for label in r.measures:
            steps: list[Step] = []
            for small, big in itertools.pairwise(sizes):
                a = keyed[(r.assignor, r.shape, small, r.case)].measures.get(label)
                b = keyed[(r.assignor, r.shape, big, r.case)].measures.get(label)
                if a is None or b is None or a.median_ms is None:
                    steps.append(None)
                elif b.status == "over budget":
                    steps.append((budget_s * 1e3 / a.median_ms, True))
                elif b.median_ms is None:
                    steps.append(None)
                else:
                    steps.append((b.median_ms / a.median_ms, False))
            series.append((r.assignor, r.shape, r.case, label, steps))
    return series


def fmt_step(step: Step) -> str:
    if step is None:
        return "-"
    value, bound = step
    return ("> " if bound else "") + (f"{value:,.0f}" if value >= 100 else f"{value:.1f}")


def growth_table(results: list[Result], budget_s: float) -> str:
    sizes = sorted({r.size for r in results})
    steps = [f"{size_label(a)} -> {size_label(b)}" for a, b in itertools.pairwise(sizes)]
    head = ["assignor", "subscriptions", "case", "implementation", *steps, "exponent (last step)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 4 + ["---:"] * (len(steps) + 1)) + "|"]
    for assignor, shape, case, label, values in growth_series(results, budget_s):
        last = values[-1] if values else None
        exponent = "-" if last is None else ("> " if last[1] else "") + f"{math.log10(last[0]):.2f}"
        lines.append(
            "| " + " | ".join([assignor, shape, case, label, *map(fmt_step, values), exponent]) + " |"
        )
    return "\n".join(lines)


def server_table(results: list[Result]) -> str:
    head = ["assignor", "subscriptions", "members x partitions", "case", "ours ms", "spread/moved"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|---|---:|---|"]
    for r in results:
        if r.side == "server":
            lines.append(
                "| "
                + " | ".join(
                    [r.assignor, r.shape, size_label(r.size), r.case, cell(r.measures["ours"]), quality(r)]
                )
                + " |"
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------- environment


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def source_digest() -> str:
    """sha256 (12 hex digits) of mockbroker_assignors/*.py: names the code measured even when uncommitted."""
    h = hashlib.sha256()
    for path in sorted((ROOT / "mockbroker_assignors").glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def git_head() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def environment(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "kafka_python": metadata.version("kafka-python"),
        "aiokafka": metadata.version("aiokafka"),
        "mockbroker": metadata.version("mockbroker"),
        "git_head": git_head(),
        "assignors_sha256": source_digest(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "mode": "quick" if args.quick else "full",
        "repeats": dict(zip([size_label(s) for s in SIZES], args.repeats, strict=True)),
        "budget_s": args.budget,
    }


# --------------------------------------------------------------------------- profile


def profile_ours(group: Group, sticky_cold: Owners) -> str:
    out = []
    for sc in client_scenarios(group, sticky_cold):
        if sc.assignor not in ("sticky", "cooperative-sticky"):
            continue
        fn = sc.impls[0].run
        n = 20
        clear_our_caches()
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(n):
            fn()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("tottime").print_stats(10)
        out.append(
            f"### ours {sc.assignor}, {group.shape} {size_label(group.size)}, {sc.case} ({n} calls)\n"
            + buf.getvalue()
        )
    return "\n".join(out)


# --------------------------------------------------------------------------- main


def write_results(env: dict[str, Any], text: str) -> None:
    existing = RESULTS_PATH.read_text() if RESULTS_PATH.exists() else ""  # re-read right before appending
    lead = "" if not existing or existing.endswith("\n\n") else ("\n" if existing.endswith("\n") else "\n\n")
    with RESULTS_PATH.open("a") as f:
        f.write(lead + text.rstrip("\n") + "\n")


def report(
    env: dict[str, Any], results: list[Result], notes: list[str], facts: list[str]
) -> tuple[str, bool | None]:
    target, holds = target_table(results, env["budget_s"])
    verdict = {True: "met", False: "not met", None: "not measured"}[holds]
    repeats = ", ".join(f"{n} at {s}" for s, n in env["repeats"].items())
    lines = [
        f"## Assignor benchmark, {env['utc']} ({env['mode']} run)",
        "",
        "`python bench/assignors.py --write`: one `assign` call per sample, our assignors vs kafka-python's and",
        "aiokafka's on the same inputs in one process (method in the module docstring). Times are medians in",
        'milliseconds (a count in parentheses when fewer than 3 samples); "vs" columns are their time / ours',
        "(higher: ours faster). spread/moved: largest minus smallest member load / partitions that left a member",
        'that stayed (rebalance only); "revoking": left out by a cooperative assignor until their owner revokes.',
        "",
        f"- machine: {env['cpu']} ({env['cpus']} logical CPUs), {env['platform']}",
        f"- Python {env['python']}; kafka-python {env['kafka_python']}; aiokafka {env['aiokafka']}; "
        f"mockbroker {env['mockbroker']} (HEAD {env['git_head']}, mockbroker_assignors/*.py sha256 {env['assignors_sha256']})",
        "- load average (1/5/15 min) before: "
        + " / ".join(f"{x:.2f}" for x in env["loadavg"])
        + "; after: "
        + " / ".join(f"{x:.2f}" for x in env["loadavg_after"]),
        f"- repeats: {repeats}; budget per call {env['budget_s']:g} s; GC off while timing; "
        f"run took {env['elapsed_s']:.0f} s",
        "",
        f"### Target: sticky and cooperative-sticky >= 10x kafka-python's sticky at {size_label(TARGET_SIZE)}: "
        f"**{verdict}**",
        "",
        target,
        "",
        "### Client-side assignors",
        "",
        client_table(results, env["budget_s"]),
        "",
        "[c] kafka-python's CooperativeStickyAssignor (3.0.12 has one: its sticky executor plus a filter of",
        "moving partitions). [s] aiokafka has no cooperative-sticky: its sticky (eager) on the same ownership,",
        "from the sticky row.",
        "",
        "### Server-side assignors (KIP-848; no kafka-python or aiokafka counterpart)",
        "",
        server_table(results),
        "",
        "### Growth per 10x size (members and partitions both x10)",
        "",
        "Time at the larger size over time at the smaller; exponent = log10 of the last step (1: linear,",
        "2: quadratic in the group size).",
        "",
        growth_table(results, env["budget_s"]),
        "",
        "### Checks and differences",
        "",
        *[f"- {line}" for line in facts + notes],
        "",
    ]
    return "\n".join(lines), holds


def main(argv: list[str] | None = None) -> int:
    global _OUR_MODULES
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run: 3/2/1 repeats, 5 s budget")
    ap.add_argument("--budget", type=float, help="seconds one call may take (default 60, quick 5)")
    ap.add_argument("--sizes", help="e.g. 10x100,100x1000 (default: the three sizes)")
    ap.add_argument("--write", action="store_true", help=f"append a dated section to {RESULTS_PATH.name}")
    ap.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="PATH",
        help="JSON results to PATH, or to stdout (instead of the tables) without PATH",
    )
    ap.add_argument("--profile", action="store_true", help="cProfile our sticky assignors at (100, 1,000)")
    args = ap.parse_args(argv)
    sizes = SIZES
    if args.sizes:
        sizes = tuple((int(a), int(b)) for a, b in (s.split("x") for s in args.sizes.split(",")))
    args.budget = args.budget or (5.0 if args.quick else 60.0)
    default_repeats = {10: 3, 100: 2, 1_000: 1} if args.quick else {10: 7, 100: 5, 1_000: 3}
    args.repeats = [default_repeats.get(m, 3) for m, _ in SIZES]
    repeats_for = {s: default_repeats.get(s[0], 3) for s in sizes}

    logging.getLogger("kafka").setLevel(logging.ERROR)
    logging.getLogger("aiokafka").setLevel(logging.ERROR)
    _OUR_MODULES = tuple(
        module for name, module in sys.modules.items() if name == "mockbroker_assignors" or name.startswith("mockbroker_assignors.")
    )
    to_stdout = args.json != "-"

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    env = environment(args)
    env["repeats"] = {size_label(s): repeats_for[s] for s in sizes}
    started = time.perf_counter()
    results: list[Result] = []
    for members, partitions in sizes:
        for shape in ("identical", "heterogeneous"):
            group = make_group(shape, members, partitions)
            clear_our_caches()
            sticky_cold = ours_owners(
                StickyAssignor().assign(
                    group.cluster, {m: Subscription(topics=ts) for m, ts in group.subscribed.items()}
                )
            )
            spec = GroupSpec({m: MemberSpec(m, frozenset(ts)) for m, ts in group.subscribed.items()})
            uniform_cold = server_owners(UniformAssignor().assign(spec, group.cluster))
            for sc in client_scenarios(group, sticky_cold) + server_scenarios(group, uniform_cold):
                log(f"{sc.assignor} {shape} {size_label(group.size)} {sc.case} ...")
                results.append(run_scenario(sc, repeats_for[(members, partitions)], args.budget, log))
    env["elapsed_s"] = time.perf_counter() - started
    env["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]

    notes = [n for r in results for n in r.notes]
    equality = []
    for label in ("kafka-python", "aiokafka"):
        same = [r for r in results if r.same_as_ours.get(label)]
        differ = [r for r in results if r.same_as_ours.get(label) is False]
        failed = [r for r in results if r.assignor in ("range", "roundrobin") and label not in r.same_as_ours]
        text = f"{label}: equal on {len(same)} of {len(same) + len(differ) + len(failed)}"
        if differ:
            text += "; differ on " + ", ".join(f"{r.assignor} {r.shape} {size_label(r.size)}" for r in differ)
        if failed:
            text += "; no result on " + ", ".join(
                f"{r.assignor} {r.shape} {size_label(r.size)}" for r in failed
            )
        equality.append(text)
    facts = [
        "every result checked before timing: each subscribed partition owned by exactly one subscribed member "
        "(mockbroker_assignors.validation.check_assignment); cooperative results: partitions left out are exactly those "
        "still held by a previous owner that stays, none moves straight to a new owner",
        "range and roundrobin, per-member partition sets compared with ours: " + "; ".join(equality),
        "kafka-python 3.0.12 writes its sticky user data with a 2-byte version prefix (StickyAssignorUserData "
        "encoded as versioned ApiData) and cannot read Java's, librdkafka's or aiokafka's prefix-less struct (it "
        "logs 'Could not parse member data' and treats the member as owning nothing): its rebalance input "
        "here is in its own encoding",
    ]
    slower = [
        f"{r.assignor} {r.shape} {size_label(r.size)} {r.case} (vs {label}: {text})"
        for r in results
        for label in ("kafka-python", "aiokafka")
        for text, value in [speedup(r.measures.get("ours"), r.measures.get(label), args.budget)]
        if value is not None and value < 1
    ]
    if slower:
        facts.append("ours is slower than the other implementation on: " + "; ".join(slower))
    text, holds = report(env, results, notes, facts)
    if to_stdout:
        print(text)
    if args.profile:
        group = make_group("heterogeneous", *TARGET_SIZE)
        sticky_cold = ours_owners(
            StickyAssignor().assign(
                group.cluster, {m: Subscription(topics=ts) for m, ts in group.subscribed.items()}
            )
        )
        prof = profile_ours(group, sticky_cold)
        print(prof, file=sys.stdout if to_stdout else sys.stderr)
    if args.write:
        write_results(env, text)
        log(f"appended to {RESULTS_PATH}")
    if args.json:
        payload = {
            "environment": env,
            "target_met": holds,
            "results": [
                {
                    "assignor": r.assignor,
                    "side": r.side,
                    "shape": r.shape,
                    "members": r.members,
                    "partitions": r.partitions,
                    "case": r.case,
                    "measures": {
                        label: {
                            "status": m.status,
                            "detail": m.detail,
                            "median_ms": m.median_ms,
                            "samples_ns": m.samples_ns,
                            "spread": m.spread,
                            "moved": m.moved,
                            "withheld": m.withheld,
                        }
                        for label, m in r.measures.items()
                    },
                }
                for r in results
            ],
            "growth": [
                {"assignor": a, "shape": s, "case": c, "implementation": i, "steps": v}
                for a, s, c, i, v in growth_series(results, args.budget)
            ],
            "facts": facts,
            "notes": notes,
        }
        data = json.dumps(payload, indent=2) + "\n"
        if args.json == "-":
            sys.stdout.write(data)
        else:
            Path(args.json).write_text(data)
            log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
