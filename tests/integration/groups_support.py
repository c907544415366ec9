"""Shared pieces of the consumer-group tests (test_groups_*.py): group members as processes, the
broker's own view of a group, the same group as DescribeGroups/ListGroups show it over the wire,
and the waits that tie the three together.

- ``Member``: one consumer of kafka-python, aiokafka or confluent-kafka running
  clients/group_member.py in its own process; what its rebalance callbacks report arrives as
  events, and it takes commands (commit, pause, close). ``kill()`` is real process death.
- ``group_state(broker, group_id, topic)``: the coordinator's state, read on the broker's loop
  (``group_view(cluster, ...)`` for a cluster on the test's own loop).
- ``settle(...)``: wait until the group is Stable with exactly the expected members and every
  member's own callbacks report the assignment the broker stored for it; then check that every
  partition is owned by exactly one member.
- ``check_wire(...)``: DescribeGroups and ListGroups, as a client's admin API sends them, agree
  with the coordinator's state.

GROUP_MEMBER_DEBUG=1 in the environment turns on the member processes' client debug logs; a
failing wait shows each member's events and the tail of its log, with the coordinator's events.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mockbroker import MockCluster
from mockbroker.events import Event
from mockbroker.testing import KafkaCluster
from mockbroker_protocol.consumer_protocol import decode_assignment
from tests.integration.support import DEADLINE_S, BrokerThread, wait_for

CLIENTS = ("kafka-python", "aiokafka", "confluent")
MEMBER_SCRIPT = Path(__file__).resolve().parent / "clients" / "group_member.py"
REPO_ROOT = Path(__file__).resolve().parents[2]

# Group settings for the test clusters: no initial rebalance delay (Kafka waits 3 s before the
# first generation of a new group) and a low minimum session timeout, so tests run fast.
GROUP_CLUSTER_SETTINGS: dict[str, Any] = {
    "group_initial_rebalance_delay_ms": 0,
    "group_min_session_timeout_ms": 1000,
}
BROKERS = 3
# Client timings. A short heartbeat interval makes members notice a rebalance quickly; the
# session timeout is what a killed member costs; the rebalance timeout bounds a rebalance that
# waits for a member that does not rejoin.
SESSION_TIMEOUT_MS = 6000
HEARTBEAT_INTERVAL_MS = 200
REBALANCE_TIMEOUT_MS = 10000


# -- the cluster ---------------------------------------------------------------------------------


def fail_on_broker_bugs(errors: list[BaseException]) -> None:
    if errors:
        details = "\n".join(f"  {type(e).__name__}: {e}" for e in errors)
        pytest.fail(f"the broker recorded {len(errors)} internal error(s) (broker bugs):\n{details}")


def group_broker(**settings: Any) -> Iterator[BrokerThread]:
    """Body of the tests' broker fixture: a 3-broker cluster on its own thread with the group
    settings above (plus ``settings``); fails the test when the broker recorded an internal
    error (a broker bug)."""
    broker = BrokerThread(brokers=BROKERS, **{**GROUP_CLUSTER_SETTINGS, **settings})
    try:
        broker.start()
        yield broker
    finally:
        errors = broker.stop()
    fail_on_broker_bugs(errors)


async def group_cluster() -> AsyncIterator[MockCluster]:
    """Body of an async test's cluster fixture: on the test's own loop, with the group settings above."""
    cluster = MockCluster(brokers=BROKERS, **GROUP_CLUSTER_SETTINGS)
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()
    fail_on_broker_bugs(cluster.internal_errors)


# -- waiting -------------------------------------------------------------------------------------


# -- members -------------------------------------------------------------------------------------


@dataclass
class Member:
    """One group member in its own process (clients/group_member.py)."""

    client: str
    bootstrap: str
    group: str
    topic: str
    client_id: str
    instance_id: str | None = None
    assignor: str = "range"
    session_timeout_ms: int = SESSION_TIMEOUT_MS
    heartbeat_interval_ms: int = HEARTBEAT_INTERVAL_MS
    rebalance_timeout_ms: int = REBALANCE_TIMEOUT_MS
    group_protocol: str = "classic"  # "consumer": KIP-848 (confluent only)
    remote_assignor: str | None = None  # KIP-848: the server-side assignor to ask for
    events: list[dict[str, Any]] = field(default_factory=list)
    _proc: subprocess.Popen[bytes] | None = None
    _stderr: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Member:
        argv = [
            sys.executable, str(MEMBER_SCRIPT),
            "--client", self.client,
            "--bootstrap", self.bootstrap,
            "--group", self.group,
            "--topic", self.topic,
            "--client-id", self.client_id,
            "--assignor", self.assignor,
            "--session-timeout-ms", str(self.session_timeout_ms),
            "--heartbeat-interval-ms", str(self.heartbeat_interval_ms),
            "--rebalance-timeout-ms", str(self.rebalance_timeout_ms),
        ]  # fmt: skip
        if self.instance_id is not None:
            argv += ["--instance-id", self.instance_id]
        if self.group_protocol != "classic":
            argv += ["--group-protocol", self.group_protocol]
        if self.remote_assignor is not None:
            argv += ["--remote-assignor", self.remote_assignor]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - outlives this call; closed by stop()
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        threading.Thread(target=self._read, name=f"member-{self.client_id}", daemon=True).start()
        self.wait_event("ready")
        return self

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._proc.stdout:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = {"event": "garbage", "line": line}
            with self._lock:
                self.events.append(event)

    # -- reading what it reported --

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.events)

    def of(self, *kinds: str, since: int = 0) -> list[dict[str, Any]]:
        return [e for e in self.snapshot()[since:] if e["event"] in kinds]

    def mark(self) -> int:
        """Position in the event list, for ``since=``."""
        with self._lock:
            return len(self.events)

    def wait_event(self, kind: str, since: int = 0, where: Callable[[dict[str, Any]], bool] = lambda e: True,
                   timeout: float = DEADLINE_S) -> dict[str, Any]:
        def found() -> dict[str, Any] | None:
            for e in self.of(kind, since=since):
                if where(e):
                    return e
            if self._proc is not None and self._proc.poll() is not None and kind != "closed":
                pytest.fail(f"{self.client_id} exited ({self._proc.returncode}) before reporting {kind!r}\n{self.explain()}")
            return None

        return wait_for(found, f"{self.client_id} to report {kind!r}", self.explain, timeout)

    @property
    def assignment(self) -> frozenset[int] | None:
        """The partitions the member's own rebalance callbacks say it owns now (None: no callback yet)."""
        changes = self.of("assigned", "revoked", "lost")
        return frozenset(changes[-1]["assignment"]) if changes else None

    @property
    def last_change(self) -> dict[str, Any] | None:
        changes = self.of("assigned", "revoked", "lost")
        return changes[-1] if changes else None

    def records(self, since: int = 0) -> list[dict[str, Any]]:
        return self.of("record", since=since)

    def errors(self) -> list[dict[str, Any]]:
        return self.of("error")

    def stderr_tail(self, lines: int = 30) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read().decode(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def explain(self) -> str:
        events = [e for e in self.snapshot() if e["event"] != "record"]
        shown = "\n".join(f"    {json.dumps(e)}" for e in events[-15:])
        return f"  {self.client_id} ({self.client}) events:\n{shown}\n  stderr tail:\n{self.stderr_tail()}"

    # -- telling it what to do --

    def send(self, cmd: str, **fields: Any) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write((json.dumps({"cmd": cmd, **fields}) + "\n").encode())
        self._proc.stdin.flush()

    def commit(self, offsets: dict[int, int] | None = None, timeout: float = DEADLINE_S) -> dict[str, Any]:
        """Commit (what it consumed, or ``offsets``) and return the "committed" or "commit_failed" event."""
        since = self.mark()
        if offsets is None:
            self.send("commit")
        else:
            self.send("commit", offsets={str(p): o for p, o in offsets.items()})
        return wait_for(
            lambda: next(iter(self.of("committed", "commit_failed", since=since)), None),
            f"{self.client_id} to finish a commit", self.explain, timeout,
        )

    def fetch_committed(self, partitions: Iterable[int]) -> dict[int, int]:
        since = self.mark()
        self.send("fetch_committed", partitions=sorted(partitions))
        event = self.wait_event("committed_offsets", since=since)
        return {int(p): o for p, o in event["offsets"].items()}

    def close(self) -> None:
        """Close the consumer (LeaveGroup for a dynamic member) and wait for the process to end."""
        self.send("close")
        self.wait_event("closed")
        self._wait_exit()
        assert self._proc is not None
        assert self._proc.returncode == 0, f"{self.client_id} exited {self._proc.returncode}\n{self.explain()}"

    def kill(self) -> None:
        """SIGKILL: the process dies at once, its sockets drop, no LeaveGroup is sent."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGKILL)
        self._wait_exit()
        assert self._proc.returncode == -signal.SIGKILL

    def _wait_exit(self) -> None:
        assert self._proc is not None
        try:
            self._proc.wait(DEADLINE_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
            pytest.fail(f"{self.client_id} did not exit within {DEADLINE_S:.0f}s\n{self.explain()}")

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        """Teardown: end the process whatever its state."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        if self._stderr is not None:
            self._stderr.close()


class Members:
    """The members a test started, in a ``with`` block that kills whatever still runs at its end."""

    def __init__(self, broker: BrokerThread, group: str, topic: str) -> None:
        self.broker = broker
        self.group = group
        self.topic = topic
        self.started: list[Member] = []

    def start(self, client: str, client_id: str, **options: Any) -> Member:
        member = Member(client, self.broker.bootstrap_servers, self.group, self.topic, client_id, **options)
        self.started.append(member)
        return member.start()

    def explain(self) -> str:
        return "\n".join(m.explain() for m in self.started)

    def __enter__(self) -> Members:
        return self

    def __exit__(self, *exc: object) -> None:
        for m in self.started:
            m.stop()


# -- the broker's view ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberView:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: frozenset[int]  # partitions of the test's topic in the member's stored assignment


@dataclass(frozen=True)
class GroupView:
    group_id: str
    state: str
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str | None
    members: tuple[MemberView, ...]
    awaiting_join: frozenset[str]  # member ids whose JoinGroup the coordinator holds
    awaiting_sync: frozenset[str]  # member ids whose SyncGroup the coordinator holds

    def by_client_id(self) -> dict[str, MemberView]:
        return {m.client_id: m for m in self.members}

    def by_member_id(self) -> dict[str, MemberView]:
        return {m.member_id: m for m in self.members}


def assigned_partitions(assignment: bytes | None, topic: str) -> frozenset[int]:
    """The partitions of ``topic`` in a ConsumerProtocolAssignment blob (empty bytes: none)."""
    if not assignment:
        return frozenset()
    _, decoded = decode_assignment(bytes(assignment))
    return frozenset(p for tp in decoded.assigned_partitions if tp.topic == topic for p in tp.partitions)


def group_state(broker: BrokerThread, group_id: str, topic: str) -> GroupView | None:
    """The coordinator's state of ``group_id`` (None: no such group), read on the broker's loop."""
    return broker.call(lambda: group_view(_cluster(broker), group_id, topic))


def _cluster(broker: BrokerThread) -> MockCluster:
    assert broker.cluster is not None, "the broker thread is not started"
    return broker.cluster


def group_view(cluster: MockCluster, group_id: str, topic: str) -> GroupView | None:
    """The coordinator's state of ``group_id``; call on the cluster's loop."""
    group = cluster.groups.groups.get(group_id)
    if group is None:
        return None
    return GroupView(
        group_id=group_id,
        state=group.state.value,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader_id=group.leader_id,
        members=tuple(
            MemberView(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                assignment=assigned_partitions(m.assignment, topic),
            )
            for m in group.members.values()
        ),
        awaiting_join=frozenset(m.member_id for m in group.members.values() if m.is_awaiting_join),
        awaiting_sync=frozenset(m.member_id for m in group.members.values() if m.is_awaiting_sync),
    )


def committed_offsets(broker: BrokerThread, group_id: str, topic: str) -> dict[int, int]:
    """The coordinator's committed offsets of ``group_id`` for ``topic`` (partition -> offset)."""
    return broker.call(lambda: stored_offsets(_cluster(broker), group_id, topic))


def stored_offsets(cluster: MockCluster, group_id: str, topic: str) -> dict[int, int]:
    """Like ``committed_offsets``; call on the cluster's loop."""
    stored = cluster.groups.offsets.group_offsets(group_id).get(topic, {})
    return {p: o.committed_offset for p, o in stored.items()}


def group_events(broker: BrokerThread, group_id: str, since_seq: int = 0) -> list[Event]:
    """The event log's records for ``group_id`` after ``since_seq``, in order."""
    return broker.call(lambda: _cluster(broker).events.filter(group_id=group_id, since_seq=since_seq))


def last_seq(broker: BrokerThread) -> int:
    """The sequence number of the latest event (for ``since_seq``)."""

    def read() -> int:
        events = list(_cluster(broker).events)
        return events[-1].seq if events else 0

    return broker.call(read)


def explain_group(broker: BrokerThread, group_id: str, topic: str, members: Members | None = None,
                  events: int = 25) -> str:
    view = group_state(broker, group_id, topic)
    lines = [f"  broker: {view}"]
    for e in group_events(broker, group_id)[-events:]:
        lines.append(f"    event {e.seq} {e.type} gen={e.generation_id} member={e.member_id} reason={e.reason!r} {e.details or ''}")
    if members is not None:
        lines.append(members.explain())
    return "\n".join(lines)


# -- settling and ownership ----------------------------------------------------------------------


def assert_exactly_once(owned: dict[str, frozenset[int]], partitions: int, who: str) -> None:
    """Every partition 0..partitions-1 is owned by exactly one member."""
    seen: dict[int, list[str]] = {}
    for name, parts in owned.items():
        for p in parts:
            seen.setdefault(p, []).append(name)
    doubles = {p: names for p, names in seen.items() if len(names) > 1}
    missing = sorted(set(range(partitions)) - set(seen))
    extra = sorted(set(seen) - set(range(partitions)))
    assert not doubles and not missing and not extra, (
        f"{who}: ownership is not exactly-once: owned twice {doubles}, unowned {missing}, unknown {extra}; "
        f"owners {({k: sorted(v) for k, v in owned.items()})}"
    )


def settle(broker: BrokerThread, members: Members, expected: Iterable[Member], partitions: int,
           timeout: float = DEADLINE_S) -> GroupView:
    """Wait until the group is Stable with exactly ``expected`` as members (matched by client id),
    every partition is assigned, and each member reports, through its own rebalance callbacks,
    the assignment the broker stored for it (member id and generation too, where the client
    exposes them). Then every partition must be owned by exactly one member, seen from the
    clients and from the broker."""
    expected = list(expected)
    want_ids = {m.client_id for m in expected}

    def agreed() -> GroupView | None:
        view = group_state(broker, members.group, members.topic)
        if view is None or view.state != "Stable" or set(view.by_client_id()) != want_ids:
            return None
        stored = view.by_client_id()
        for m in expected:
            change = m.last_change
            if change is None or frozenset(change["assignment"]) != stored[m.client_id].assignment:
                return None
            if change.get("member_id") and change["member_id"] != stored[m.client_id].member_id:
                return None
            if change.get("generation") is not None and change["generation"] != view.generation_id:
                return None
        # Some partitions may be left out for a generation (kafka-python's leader assigns nothing
        # until it has the topic's metadata, then rejoins): wait for every partition to be owned.
        if frozenset().union(*(m.assignment for m in view.members)) != frozenset(range(partitions)):
            return None
        return view

    seen: dict[str, frozenset[int]] = {}

    def agreed_and_seen() -> GroupView | None:
        view = agreed()
        if view is not None:
            # The clients' side as it was when it matched (a member may move on right after).
            seen.update({m.client_id: frozenset(m.last_change["assignment"]) for m in expected if m.last_change})
        return view

    view: GroupView = wait_for(
        agreed_and_seen,
        f"group {members.group} to be Stable with members {sorted(want_ids)}, each reporting the assignment the broker stored",
        lambda: explain_group(broker, members.group, members.topic, members),
        timeout,
    )
    assert_exactly_once(seen, partitions, "the members' rebalance callbacks")
    assert_exactly_once({m.client_id: m.assignment for m in view.members}, partitions, "the broker's group state")
    return view


# -- DescribeGroups / ListGroups over the wire ---------------------------------------------------


class _AnyInstanceId:
    """Stands for "this DescribeGroups version does not carry instance ids" (v0-3): equal to any."""

    def __eq__(self, other: object) -> bool:
        return other is None or isinstance(other, str | _AnyInstanceId)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<not on the wire>"


ANY_INSTANCE_ID: Any = _AnyInstanceId()


@dataclass(frozen=True)
class WireMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    assignment: frozenset[int]


@dataclass(frozen=True)
class WireGroup:
    state: str
    protocol_type: str
    protocol_name: str
    members: tuple[WireMember, ...]
    listed_protocol_type: str | None  # ListGroups: None when the group is not listed
    listed_state: str | None  # ListGroups v4+; None when the client does not read it


# confluent-kafka's ConsumerGroupState names -> Kafka's state names.
_CONFLUENT_STATES = {
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "EMPTY": "Empty",
    "DEAD": "Dead",
    "UNKNOWN": "Unknown",
}


def wire_group(client: str, bootstrap: str, group_id: str, topic: str) -> WireGroup:
    """DescribeGroups and ListGroups for ``group_id`` through ``client``'s admin API."""
    if client == "kafka-python":
        return _wire_kafka_python(bootstrap, group_id, topic)
    if client == "aiokafka":
        return asyncio.run(_wire_aiokafka(bootstrap, group_id, topic))
    if client == "confluent":
        return _wire_confluent(bootstrap, group_id, topic)
    raise ValueError(client)


def _wire_kafka_python(bootstrap: str, group_id: str, topic: str) -> WireGroup:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="it-groups-admin-kafka-python")
    try:
        described = admin.describe_groups([group_id])[group_id]
        listed = [g for g in admin.list_groups() if g["group_id"] == group_id]
    finally:
        admin.close()
    assert described["error"] is None, described
    members = []
    for m in described["members"]:
        blob = m["member_assignment"]  # decoded by kafka-python, as a dict (bytes if undecodable)
        if isinstance(blob, dict):
            parts = frozenset(
                p for tp in blob["assigned_partitions"] if tp["topic"] == topic for p in tp["partitions"]
            )
        else:
            parts = assigned_partitions(blob, topic)
        members.append(WireMember(m["member_id"], m["group_instance_id"], m["client_id"], m["client_host"], parts))
    return WireGroup(
        state=described["group_state"],
        protocol_type=described["protocol_type"],
        protocol_name=described["protocol_data"],
        members=tuple(members),
        listed_protocol_type=listed[0]["protocol_type"] if listed else None,
        listed_state=listed[0].get("group_state") if listed else None,
    )


async def _wire_aiokafka(bootstrap: str, group_id: str, topic: str) -> WireGroup:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="it-groups-admin-aiokafka")
    await admin.start()
    try:
        responses = await admin.describe_consumer_groups([group_id])
        listed = [g for g in await admin.list_consumer_groups() if g[0] == group_id]
    finally:
        await admin.close()
    # aiokafka hands back the raw DescribeGroupsResponse (v0-3: no member instance ids).
    groups = [g for r in responses for g in r.to_object()["groups"] if g["group"] == group_id]
    assert len(groups) == 1, groups
    g = groups[0]
    assert g["error_code"] == 0, g
    members = tuple(
        WireMember(
            m["member_id"],
            m.get("group_instance_id", ANY_INSTANCE_ID),
            m["client_id"],
            m["client_host"],
            assigned_partitions(m["member_assignment"], topic),
        )
        for m in g["members"]
    )
    return WireGroup(
        state=g["state"],
        protocol_type=g["protocol_type"],
        protocol_name=g["protocol"],
        members=members,
        listed_protocol_type=listed[0][1] if listed else None,
        listed_state=None,
    )


def _wire_confluent(bootstrap: str, group_id: str, topic: str) -> WireGroup:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "it-groups-admin-confluent"})
    described = admin.describe_consumer_groups([group_id], request_timeout=DEADLINE_S)[group_id].result(DEADLINE_S)
    listed_result = admin.list_consumer_groups(request_timeout=DEADLINE_S).result(DEADLINE_S)
    assert not listed_result.errors, listed_result.errors
    listed = [g for g in listed_result.valid if g.group_id == group_id]
    members = tuple(
        WireMember(
            m.member_id,
            m.group_instance_id,
            m.client_id,
            m.host,
            frozenset(tp.partition for tp in (m.assignment.topic_partitions if m.assignment else []) if tp.topic == topic),
        )
        for m in described.members
    )
    return WireGroup(
        state=_CONFLUENT_STATES[described.state.name],
        # librdkafka's description has no protocol type; a group with members is "consumer" for it
        protocol_type="" if described.is_simple_consumer_group else "consumer",
        protocol_name=described.partition_assignor,
        members=members,
        listed_protocol_type=("" if listed[0].is_simple_consumer_group else "consumer") if listed else None,
        listed_state=_CONFLUENT_STATES[listed[0].state.name] if listed else None,
    )


def check_wire(client: str, broker: BrokerThread, group_id: str, topic: str, attempts: int = 5) -> WireGroup:
    """DescribeGroups and ListGroups through ``client`` agree with the coordinator's state: state,
    protocol type and name, and every member's id, instance id, client id, host and assignment.

    The broker's state is read before and after the wire calls; a comparison is made only when the
    two reads are equal (nothing moved meanwhile), retrying a bounded number of times."""
    for _ in range(attempts):
        before = group_state(broker, group_id, topic)
        wire = wire_group(client, broker.bootstrap_servers, group_id, topic)
        after = group_state(broker, group_id, topic)
        if before == after:
            break
    else:
        pytest.fail(f"group {group_id} kept changing across {attempts} DescribeGroups attempts")
    assert before is not None
    assert wire.state == before.state, f"DescribeGroups state {wire.state!r}, broker {before.state!r}"
    assert wire.protocol_type == (before.protocol_type or ""), (wire.protocol_type, before.protocol_type)
    # ProtocolData carries the protocol name only in Stable (and "" otherwise).
    want_name = (before.protocol_name or "") if before.state == "Stable" else ""
    assert wire.protocol_name == want_name, f"DescribeGroups protocol {wire.protocol_name!r}, broker {want_name!r}"
    wire_members = {m.member_id: m for m in wire.members}
    broker_members = {
        m.member_id: WireMember(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.assignment)
        for m in before.members
    }
    assert wire_members == broker_members, (
        f"DescribeGroups members differ from the broker's:\n  wire   {wire_members}\n  broker {broker_members}"
    )
    assert wire.listed_protocol_type == (before.protocol_type or ""), (
        f"ListGroups lists {group_id} with protocol type {wire.listed_protocol_type!r} (None: not listed)"
    )
    if wire.listed_state is not None:
        assert wire.listed_state == before.state, f"ListGroups state {wire.listed_state!r}, broker {before.state!r}"
    return wire


# -- a member by hand ----------------------------------------------------------------------------


class HandMember:
    """A consumer group member driven request by request with kafka-python's network client."""

    def __init__(self, broker: KafkaCluster, group: str, instance_id: str) -> None:
        from kafka.net.compat import KafkaNetClient

        self.group, self.instance_id, self.member_id = group, instance_id, ""
        self.node = broker.call(lambda: broker.cluster.coordinator_for(group).node_id)  # type: ignore[union-attr]
        self.client = KafkaNetClient(bootstrap_servers=broker.bootstrap_servers, client_id=instance_id)
        self.client.check_version()
        self.client.await_ready(self.node)
        self.pending: Any = None

    def send_join(self, topic: str) -> None:
        from kafka.protocol.consumer.group import JoinGroupRequest
        from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

        request = JoinGroupRequest(
            group_id=self.group, session_timeout_ms=30000, rebalance_timeout_ms=30000, member_id=self.member_id,
            group_instance_id=self.instance_id, protocol_type="consumer",
            protocols=[JoinGroupRequest.JoinGroupRequestProtocol(
                name="range", metadata=ConsumerProtocolSubscription(topics=[topic], user_data=None, version=0),
            )],
            max_version=5,
        )  # fmt: skip
        self.pending = self.client.send(self.node, request)

    def poll(self) -> bool:
        self.client.poll(timeout_ms=50)
        return bool(self.pending.is_done)

    def result(self) -> Any:
        self.client.poll(future=self.pending, timeout_ms=20000)
        assert self.pending.succeeded(), self.pending.exception
        response = self.pending.value
        assert response.error_code == 0, response
        self.member_id = response.member_id
        return response

    def sync(self, generation: int, assignments: dict[str, dict[str, list[int]]]) -> Any:
        from kafka.protocol.consumer.group import SyncGroupRequest
        from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

        request = SyncGroupRequest(
            group_id=self.group, generation_id=generation, member_id=self.member_id,
            group_instance_id=self.instance_id, protocol_type="consumer", protocol_name="range",
            assignments=[
                SyncGroupRequest.SyncGroupRequestAssignment(member_id=member, assignment=ConsumerProtocolAssignment(
                    assigned_partitions=[
                        ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=ps) for t, ps in owned.items()
                    ],
                    user_data=None, version=0,
                ))
                for member, owned in assignments.items()
            ],
            max_version=5,
        )  # fmt: skip
        self.pending = self.client.send(self.node, request)
        response = self.result_of_sync()
        return response

    def result_of_sync(self) -> Any:
        self.client.poll(future=self.pending, timeout_ms=20000)
        assert self.pending.succeeded(), self.pending.exception
        return self.pending.value

    def close(self) -> None:
        self.client.close()


def hand_made_leader(
    kafka: KafkaCluster, group: str, topic: str, assign: Callable[[str, str], dict[str, dict[str, list[int]]]]
) -> int:
    """Two members of ``group`` driven by hand (``HandMember``), subscribed to ``topic``: a forms
    generation 1 alone, b joins, and a, the leader of the next generation, sends SyncGroup with
    ``assign(a's member id, b's member id)`` ({member: {topic: [partitions]}}), whatever it
    holds, which the broker stores as sent, as Kafka does. Needs a cluster without an initial
    rebalance delay. Returns the generation of that assignment."""
    a, b = HandMember(kafka, group, "a"), HandMember(kafka, group, "b")
    try:
        a.send_join(topic)
        first = a.result()  # generation 1: a alone (no initial rebalance delay)
        assert first.leader == a.member_id
        assert a.sync(first.generation_id, {a.member_id: {topic: [0, 1]}}).error_code == 0

        b.send_join(topic)  # parks until a rejoins

        def b_is_waiting() -> bool:
            b.poll()
            group_state = kafka.call(lambda: kafka.cluster.groups.groups[group])
            return group_state.state.value == "PreparingRebalance" and len(group_state.members) == 2

        wait_for(b_is_waiting, "b's JoinGroup to be parked in PreparingRebalance")
        a.send_join(topic)
        joined_a, joined_b = a.result(), b.result()
        generation: int = joined_a.generation_id
        assert joined_b.generation_id == generation == first.generation_id + 1
        assert joined_a.leader == a.member_id
        synced = a.sync(generation, assign(a.member_id, b.member_id))
        assert synced.error_code == 0  # stored as sent
        return generation
    finally:
        a.close()
        b.close()


# -- producing -----------------------------------------------------------------------------------


def produce(bootstrap: str, topic: str, per_partition: int, partitions: int, label: str) -> dict[int, list[str]]:
    """``per_partition`` records to each partition (kafka-python's producer, acks=all); returns the
    values sent per partition, in order."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=f"it-groups-producer-{label}", acks="all", linger_ms=5)
    sent: dict[int, list[str]] = {p: [] for p in range(partitions)}
    try:
        futures = []
        for i in range(per_partition):
            for p in range(partitions):
                value = f"{label}-p{p}-{i}"
                sent[p].append(value)
                futures.append(producer.send(topic, value=value.encode(), partition=p))
        producer.flush(timeout=DEADLINE_S)
        for f in futures:
            f.get(timeout=DEADLINE_S)
    finally:
        producer.close(timeout=DEADLINE_S)
    return sent
