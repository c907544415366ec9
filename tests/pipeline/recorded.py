"""Event logs recorded from real clients, for the pipeline's tests: each scenario runs confluent-kafka
consumers (clients/group_member.py, one process each) against an in-process MockCluster whose
``events_path`` is set, and returns the log's path with what the scenario itself saw (the broker's
group state at each settled step, the members' own rebalance callbacks). The pipeline's numbers are
then checked against those, never against constants the pipeline produced.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.integration.groups_support import GroupView, Member, Members, group_broker, settle
from tests.integration.support import DEADLINE_S, BrokerThread

PARTITIONS = 12
CLIENT = "confluent"
KILLED_SESSION_TIMEOUT_MS = 2000
STATIC_SESSION_TIMEOUT_MS = 30000


@contextmanager
def recording(path: Path) -> Iterator[BrokerThread]:
    """A group test cluster whose event log goes to ``path``."""
    yield from group_broker(events_path=str(path))


def owners(view: GroupView) -> dict[int, str]:
    """partition -> client id of its owner, from the broker's group state."""
    return {p: m.client_id for m in view.members for p in m.assignment}


def moved_between(before: GroupView, after: GroupView) -> int:
    """Partitions whose owner (by client id) differs between two settled views."""
    a, b = owners(before), owners(after)
    return sum(1 for p, owner in b.items() if p in a and a[p] != owner)


@dataclass
class Eager:
    """range (eager): three members, a fourth joins, one leaves (LeaveGroup), one is killed."""

    path: Path
    group: str
    views: dict[str, GroupView] = field(default_factory=dict)  # "three", "four", "left", "killed"


def record_eager(path: Path) -> Eager:
    topic = group = "eager"
    result = Eager(path, group)
    with recording(path) as broker, Members(broker, group, topic) as members:
        broker.create_topic(topic, PARTITIONS)
        m1 = members.start(CLIENT, "eager-1")
        m2 = members.start(CLIENT, "eager-2")
        m3 = members.start(CLIENT, "eager-3", session_timeout_ms=KILLED_SESSION_TIMEOUT_MS)
        result.views["three"] = settle(broker, members, [m1, m2, m3], PARTITIONS)
        m4 = members.start(CLIENT, "eager-4")
        result.views["four"] = settle(broker, members, [m1, m2, m3, m4], PARTITIONS)
        m2.close()
        result.views["left"] = settle(broker, members, [m1, m3, m4], PARTITIONS)
        m3.kill()
        result.views["killed"] = settle(
            broker, members, [m1, m4], PARTITIONS, timeout=DEADLINE_S + KILLED_SESSION_TIMEOUT_MS / 1000
        )
        for m in (m1, m4):
            m.close()
    return result


@dataclass
class Cooperative:
    """cooperative-sticky: two members, a third joins; the callbacks say what each revoked."""

    path: Path
    group: str
    before: GroupView | None = None
    after: GroupView | None = None
    revoked: dict[str, set[int]] = field(default_factory=dict)  # client id -> its revoke callbacks' partitions


def record_cooperative(path: Path) -> Cooperative:
    topic = group = "cooperative"
    result = Cooperative(path, group)
    with recording(path) as broker, Members(broker, group, topic) as members:
        broker.create_topic(topic, PARTITIONS)
        c1 = members.start(CLIENT, "coop-1", assignor="cooperative-sticky")
        c2 = members.start(CLIENT, "coop-2", assignor="cooperative-sticky")
        result.before = settle(broker, members, [c1, c2], PARTITIONS)
        marks = {m.client_id: m.mark() for m in (c1, c2)}
        c3 = members.start(CLIENT, "coop-3", assignor="cooperative-sticky")
        result.after = settle(broker, members, [c1, c2, c3], PARTITIONS)
        for m in (c1, c2):
            result.revoked[m.client_id] = {p for e in m.of("revoked", since=marks[m.client_id]) for p in e["removed"]}
        for m in (c1, c2, c3):
            m.close()
    return result


@dataclass
class StaticRestart:
    """Three static members, each restarted in turn within its session timeout."""

    path: Path
    group: str
    before: GroupView | None = None
    after: GroupView | None = None
    restarts: int = 0


def record_static_restart(path: Path) -> StaticRestart:
    topic = group = "static"
    result = StaticRestart(path, group)
    with recording(path) as broker, Members(broker, group, topic) as members:
        broker.create_topic(topic, PARTITIONS)

        def start(i: int) -> Member:
            return members.start(
                CLIENT, f"static-{i}", instance_id=f"instance-{i}", session_timeout_ms=STATIC_SESSION_TIMEOUT_MS
            )

        current = [start(i) for i in (1, 2, 3)]
        result.before = settle(broker, members, current, PARTITIONS)
        for i in (1, 2, 3):
            old = next(m for m in current if m.client_id == f"static-{i}")
            old.close()
            current = [m for m in current if m is not old] + [start(i)]
            settle(broker, members, current, PARTITIONS)
            result.restarts += 1
        result.after = settle(broker, members, current, PARTITIONS)
    return result
