"""Assignment checks and broker-side assignment for classic ``consumer`` groups (the SyncGroup path).

Kafka's coordinator stores whatever the group leader sends in SyncGroup (kafka-group-semantics
§4.2, §11: the broker treats the bytes as opaque). mockbroker does the same on the wire, and in
addition looks at each assignment it stores, as a test tool should:

1. **Validation** (``assignment_checks`` "validate" or "full"): every member's bytes decode as a
   ConsumerProtocolAssignment; every partition of the subscribed topics (the union of the members'
   subscriptions, against the cluster's topics) is owned by exactly one member, only by members
   subscribed to its topic, and only real partitions are handed out
   (``mockbroker_assignors.validation.find_problems``). Cooperative protocols (KIP-429) get two rules of
   their own:

   - a partition a member still claims in its subscription's ``owned_partitions`` may be left
     unassigned: a cooperative assignor leaves out, in the first of two rebalances, every partition
     that changes owner, and the owner revokes it and rejoins (the Java ConsumerCoordinator
     requests a rejoin after revoking), so the follow-up rebalance places it;
   - a partition must not be given to a new member while another member still claims it at the
     newest claimed generation ("revoke before reassign"; Java's CooperativeStickyAssignor removes
     such partitions, AbstractStickyAssignor discards claims of older generations).

   A group's protocol is cooperative when its selected protocol name is a registered client-side
   assignor whose ``supported_protocols`` include COOPERATIVE. For names the registry does not
   know (kafkajs's ``RoundRobinAssigner``, a custom Java assignor), claimed partitions may be left
   unassigned and the revoke-before-reassign rule is not checked: the broker cannot tell.

2. **Reference check** ("full"): for the built-in protocol names (range, roundrobin, sticky,
   cooperative-sticky) the broker runs ``assignors`` (identical to Java's) on the same
   subscriptions, in the order the leader received them, with the same owned partitions,
   generations, user data and racks, and records each member whose partitions differ as an
   informational ``reference_divergence`` finding. It runs only on assignments that passed
   validation, and not when the topics changed since the generation formed (the leader's
   metadata is then unknown), nor for groups above ``REFERENCE_CHECK_MAX_SIZE`` members x
   partitions (it runs on the event loop).

3. **Broker-side assignment** (``broker_assignors``: group id or glob -> assignor name or
   ``"module:attr"``): the leader's assignment is replaced by the named assignor's, computed from
   the members' subscriptions and encoded as a ConsumerProtocolAssignment at the version of each
   member's own subscription (0-3), so every client can read it. For cooperative protocols it
   keeps the revoke-before-reassign rule: a partition whose owner changes is first only taken
   away; the new owner gets it in the next generation, after the old owner rejoined without it.

Every finding is a ``Finding`` on ``group.findings`` and a ``group.assignment_finding`` event
(docs/events.md). Strict mode (``assignment_strict``) also hands findings to a callback (the
cluster appends them to ``cluster.strict_failures``, which the pytest fixture fails the test on):
"violations" for everything but reference divergences, "all" for those too.

Partitions added, and topics created, after a generation formed are not required of its leader
(its metadata predates them): the partition counts are taken when the group enters
CompletingRebalance. A leader whose metadata is older than that (a client's metadata.max.age.ms)
may still leave brand-new partitions out; such a finding is real, and so is the follow-up
rebalance the client then starts.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The modes live with the group settings, validated at start without importing the assignors.
from mockbroker.config.groups import CHECK_MODES as CHECK_MODES
from mockbroker.config.groups import STRICT_MODES as STRICT_MODES
from mockbroker.config.groups import check_mode, resolve_broker_assignors, strict_mode
from mockbroker.coordinators.classic.findings import (
    INFORMATIONAL_KINDS as INFORMATIONAL_KINDS,
)
from mockbroker.coordinators.classic.findings import (
    REFERENCE_DIVERGENCE,
    REVOKE_BEFORE_REASSIGN,
    TOPIC_NOT_ASSIGNED,
    UNDECODABLE_ASSIGNMENT,
    UNDECODABLE_SUBSCRIPTION,
)
from mockbroker.coordinators.classic.findings import Finding as Finding
from mockbroker.coordinators.classic.group import CONSUMER_PROTOCOL_TYPE, ClassicGroup
from mockbroker.events import Event
from mockbroker_assignors import registry
from mockbroker_assignors.base import Assignor
from mockbroker_assignors.cooperative_sticky import member_data as cooperative_member_data
from mockbroker_assignors.types import (
    ClusterMetadata,
    MemberAssignment,
    RebalanceProtocol,
    Subscription,
    TopicMetadata,
    TopicPartition,
)
from mockbroker_assignors.validation import Problem, find_problems
from mockbroker_protocol.consumer_protocol import (
    ASSIGNMENT_VERSIONS,
    ConsumerProtocolAssignment,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from mockbroker_protocol.consumer_protocol import TopicPartition as WireTopicPartition
from mockbroker_protocol.errors import DecodeError

log = logging.getLogger("mockbroker.groups")


# Reference assignors: the Java client's built-ins, by protocol name.
REFERENCE_PROTOCOLS = frozenset(registry.CLIENT_BUILTINS)
MAX_FINDINGS_PER_GROUP = 1000  # group.findings keeps the newest ones
# The reference check runs on the event loop; above this many (members x subscribed partitions)
# it is skipped (sticky with different subscriptions takes seconds at 1,000 x 10,000: bench/RESULTS.md).
REFERENCE_CHECK_MAX_SIZE = 1_000_000

Record = Callable[..., None]  # ClassicCoordinatorBase._record


def tp_names(partitions: Iterable[TopicPartition]) -> list[str]:
    return [f"{tp.topic}-{tp.partition}" for tp in partitions]


def _to_subscription(data: Any, group_instance_id: str | None) -> Subscription:
    """A decoded ConsumerProtocolSubscription as the assignors' Subscription."""
    return Subscription(
        topics=tuple(data.topics),
        user_data=data.user_data,
        owned_partitions=tuple(TopicPartition(o.topic, p) for o in data.owned_partitions for p in o.partitions),
        generation_id=data.generation_id,
        rack_id=data.rack_id,
        group_instance_id=group_instance_id,
    )


def _encode(partitions: Iterable[TopicPartition], user_data: bytes | None, version: int) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    wire = ConsumerProtocolAssignment(
        assigned_partitions=[WireTopicPartition(t, ps) for t, ps in by_topic.items()], user_data=user_data
    )
    return encode_assignment(wire, max(ASSIGNMENT_VERSIONS[0], min(version, ASSIGNMENT_VERSIONS[1])))


@dataclass(slots=True)
class _Subscriptions:
    """The members' decoded subscriptions for the selected protocol, in the group's member order
    (the order the leader got them in JoinGroup)."""

    by_member: dict[str, Subscription]
    versions: dict[str, int]
    undecodable: dict[str, str]  # member id -> why


class AssignmentChecks:
    """What the coordinator asks on every leader SyncGroup of a group: which assignment to store."""

    def __init__(
        self,
        *,
        topic_sizes: Callable[[], Mapping[str, int]],
        partition_racks: Callable[[str], tuple[frozenset[str], ...]] = lambda topic: (),
        checks: str = "full",
        strict: str = "off",
        broker_assignors: Mapping[str, str] | None = None,
        on_strict_failure: Callable[[Finding], None] | None = None,
        on_internal_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.checks = check_mode(checks)
        self.strict = strict_mode(strict)
        self._topic_sizes = topic_sizes
        self._partition_racks = partition_racks
        self._broker_assignors = resolve_broker_assignors(broker_assignors or {})
        self._on_strict_failure = on_strict_failure
        self._on_internal_error = on_internal_error
        # group id -> (generation, partition counts when it formed)
        self._formed: dict[str, tuple[int, dict[str, int]]] = {}
        self._cooperative: dict[str, bool | None] = {}

    # -- configuration ----------------------------------------------------------------------------

    def broker_assignor_for(self, group_id: str) -> Assignor | None:
        """An exact pattern wins; otherwise the first glob (fnmatch, case-sensitive) in order."""
        exact = self._broker_assignors.get(group_id)
        if exact is not None:
            return exact
        for pattern, assignor in self._broker_assignors.items():
            if fnmatch.fnmatchcase(group_id, pattern):
                return assignor
        return None

    def is_cooperative(self, protocol_name: str | None) -> bool | None:
        """True/False for a protocol name the registry knows; None for one it does not."""
        if protocol_name is None:
            return None
        if protocol_name not in self._cooperative:
            try:
                assignor = registry.get(protocol_name)
            except (KeyError, ImportError, TypeError, ValueError):
                self._cooperative[protocol_name] = None
            else:
                self._cooperative[protocol_name] = RebalanceProtocol.COOPERATIVE in assignor.supported_protocols
        return self._cooperative[protocol_name]

    # -- the generation forms ---------------------------------------------------------------------

    def generation_formed(self, group_id: str, generation_id: int) -> None:
        """Remember the partition counts the leader's assignment will be judged against."""
        self._formed[group_id] = (generation_id, dict(self._topic_sizes()))

    def listen(self, event: Event) -> None:
        """An EventLog listener: a consumer group entering CompletingRebalance formed a generation;
        a deleted group is forgotten."""
        if event.type == "group.transition" and event.group_id is not None:
            if event.details.get("to_state") == "CompletingRebalance" and event.generation_id is not None:
                if event.details.get("protocol_type") == CONSUMER_PROTOCOL_TYPE:
                    self.generation_formed(event.group_id, event.generation_id)
            elif event.details.get("to_state") == "Dead":
                self._formed.pop(event.group_id, None)

    # -- SyncGroup ----------------------------------------------------------------------------------

    def assignment_to_store(
        self, group: ClassicGroup, leader_assignment: dict[str, bytes], now_ms: int, record: Record
    ) -> dict[str, bytes]:
        """Called with the leader's assignment (every member present, b"" for the missing ones);
        returns the assignment the coordinator stores: the leader's, or a broker-side assignor's."""
        if group.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return leader_assignment
        leader_assignment = {m: leader_assignment.get(m, b"") for m in group.members}  # unknown ids are ignored (§4.2)
        assignor = self.broker_assignor_for(group.group_id)
        if self.checks == "off" and assignor is None:
            return leader_assignment
        subscriptions = self._subscriptions(group)
        findings = [
            self._finding(group, UNDECODABLE_SUBSCRIPTION, member, (), f"member {member}'s subscription for "
                          f"{group.protocol_name} does not decode: {why}", "leader")
            for member, why in subscriptions.undecodable.items()
        ]  # fmt: skip
        stored, source = leader_assignment, "leader"
        if assignor is not None:
            if subscriptions.undecodable:
                log.warning("group %s: broker-side assignment skipped, undecodable subscriptions", group.group_id)
            else:
                try:
                    stored, source = self._broker_assign(group, assignor, subscriptions, now_ms, record), "broker"
                except Exception as exc:  # the plugin's bug: fail the test, let the group go on
                    if self._on_internal_error is None:
                        raise
                    self._on_internal_error(
                        RuntimeError(f"group {group.group_id}: broker-side assignor {assignor.name} failed: {exc!r}")
                    )
        if self.checks != "off":
            findings += self._check(group, stored, subscriptions, source)
        for finding in findings:
            self._report(group, finding, now_ms, record)
        return stored

    # -- validation ---------------------------------------------------------------------------------

    def _subscriptions(self, group: ClassicGroup) -> _Subscriptions:
        out = _Subscriptions({}, {}, {})
        for member in group.members.values():
            try:
                version, data = decode_subscription(member.metadata(group.protocol_name))
            except DecodeError as exc:
                out.undecodable[member.member_id] = str(exc)
                continue
            out.by_member[member.member_id] = _to_subscription(data, member.group_instance_id)
            out.versions[member.member_id] = version
        return out

    def _cluster(self, topics: Iterable[str]) -> ClusterMetadata:
        sizes = self._topic_sizes()
        return ClusterMetadata(
            {t: TopicMetadata(t, sizes[t], self._partition_racks(t)) for t in sorted(set(topics)) if t in sizes}
        )

    def _claims(self, subscriptions: Mapping[str, Subscription]) -> tuple[set[TopicPartition], dict[TopicPartition, set[str]]]:
        """(every partition some member claims, partition -> members claiming it at the newest
        claimed generation). A member's generation: the v2+ field, else cooperative-sticky's user
        data, else -1 (CooperativeStickyAssignor.memberData)."""
        data = {m: cooperative_member_data(s) for m, s in subscriptions.items()}
        generations = {m: -1 if d.generation is None else d.generation for m, d in data.items()}
        newest = max((generations[m] for m, d in data.items() if d.partitions), default=-1)
        claimed: set[TopicPartition] = set()
        holders: dict[TopicPartition, set[str]] = {}
        for member, d in data.items():
            claimed.update(d.partitions)
            if generations[member] == newest:
                for tp in d.partitions:
                    holders.setdefault(tp, set()).add(member)
        return claimed, holders

    def _check(
        self, group: ClassicGroup, stored: dict[str, bytes], subscriptions: _Subscriptions, source: str
    ) -> list[Finding]:
        findings: list[Finding] = []
        assignments = self._decode_assignments(group, stored, subscriptions, source, findings)
        subs = subscriptions.by_member
        topics = {t for s in subs.values() for t in s.topics} | {tp.topic for a in assignments.values() for tp in a.partitions}
        cluster, then, sizes_now, may_be_unassigned = self._judged_cluster(group, topics)
        cooperative = self.is_cooperative(group.protocol_name)
        claimed, holders = self._claims(subs)
        if cooperative is not False:
            may_be_unassigned |= claimed
        incomplete = bool(subscriptions.undecodable) or any(f.kind == UNDECODABLE_ASSIGNMENT for f in findings)
        problems = find_problems(cluster, subs, assignments, may_be_unassigned=may_be_unassigned)
        findings += self._problem_findings(group, problems, assignments, incomplete, source)
        if cooperative:
            findings += self._revoke_before_reassign(group, assignments, holders, source)
        if (
            self.checks == "full"
            and source == "leader"
            and group.protocol_name in REFERENCE_PROTOCOLS
            and not findings  # an invalid assignment differs from Java's anyway: one story is enough
            and then == sizes_now
        ):
            findings += self._reference(group, cluster, subs, assignments)
        return findings

    def _decode_assignments(
        self, group: ClassicGroup, stored: dict[str, bytes], subscriptions: _Subscriptions, source: str,
        findings: list[Finding],
    ) -> dict[str, MemberAssignment]:  # fmt: skip
        """The stored assignments of subscribed members, decoded; one finding per undecodable one."""
        assignments: dict[str, MemberAssignment] = {}
        for member_id, raw in stored.items():
            try:
                _, decoded = decode_assignment(raw)
            except DecodeError as exc:
                findings.append(self._finding(
                    group, UNDECODABLE_ASSIGNMENT, member_id, (),
                    f"member {member_id}'s assignment ({len(raw)} bytes) does not decode: {exc}", source,
                ))  # fmt: skip
                continue
            if member_id in subscriptions.by_member:
                assignments[member_id] = MemberAssignment(
                    tuple(TopicPartition(t.topic, p) for t in decoded.assigned_partitions for p in t.partitions)
                )
        return assignments

    def _judged_cluster(
        self, group: ClassicGroup, topics: set[str]
    ) -> tuple[ClusterMetadata, dict[str, int], dict[str, int], set[TopicPartition]]:
        """The topics an assignment is judged against: (cluster, partition counts when the
        generation formed, counts now, partitions that may stay unassigned)."""
        now = self._cluster(topics)
        sizes_now = {t: m.num_partitions for t, m in now.topics.items()}
        formed = self._formed.get(group.group_id)
        # No snapshot (checks attached to a running group): judge against the topics as they are.
        then = {t: n for t, n in formed[1].items() if t in topics} if formed and formed[0] == group.generation_id else sizes_now
        # Judge against the larger of then and now (a partition of a topic deleted meanwhile was
        # real for the leader), require only what existed both then and now.
        cluster = ClusterMetadata({
            **{t: TopicMetadata(t, n) for t, n in then.items()},
            **{t: m for t, m in now.topics.items() if m.num_partitions >= then.get(t, 0)},
        })  # fmt: skip
        may_be_unassigned: set[TopicPartition] = {
            TopicPartition(t, p)
            for t, m in cluster.topics.items()
            for p in range(min(then.get(t, 0), now.partitions_for(t)), m.num_partitions)
        }
        return cluster, then, sizes_now, may_be_unassigned

    def _problem_findings(
        self, group: ClassicGroup, problems: Iterable[Problem], assignments: Mapping[str, MemberAssignment],
        incomplete: bool, source: str,
    ) -> list[Finding]:  # fmt: skip
        """The validator's problems as findings; a leader that gave nobody any partition of a
        topic gets one TOPIC_NOT_ASSIGNED finding for it instead of one per partition."""
        findings: list[Finding] = []
        owned_topics = {tp.topic for a in assignments.values() for tp in a.partitions}
        not_assigned: dict[str, list[TopicPartition]] = {}
        for problem in problems:
            if problem.kind == "unassigned":
                if incomplete:
                    continue  # an unreadable member may own it
                topic = problem.partitions[0].topic
                if source == "leader" and topic not in owned_topics:
                    not_assigned.setdefault(topic, []).extend(problem.partitions)
                    continue
            findings.append(self._finding(group, problem.kind, problem.member, problem.partitions, problem.message, source))
        for topic, missing in not_assigned.items():
            findings.append(self._finding(
                group, TOPIC_NOT_ASSIGNED, None, tuple(sorted(missing)),
                f"no member was given any partition of {topic} ({len(missing)} unassigned): the leader's "
                "metadata may not have had the topic yet; its client rejoins once it has", source,
            ))  # fmt: skip
        return findings

    def _revoke_before_reassign(
        self, group: ClassicGroup, assignments: Mapping[str, MemberAssignment],
        holders: Mapping[TopicPartition, set[str]], source: str,
    ) -> list[Finding]:  # fmt: skip
        """A cooperative protocol must revoke a partition before another member is given it."""
        findings: list[Finding] = []
        for member_id, assignment in assignments.items():
            moved = [tp for tp in assignment.partitions if holders.get(tp, {member_id}) - {member_id}]
            if moved:
                owners = sorted({o for tp in moved for o in holders[tp] - {member_id}})
                findings.append(self._finding(
                    group, REVOKE_BEFORE_REASSIGN, member_id, tuple(moved),
                    f"member {member_id} is given {', '.join(tp_names(moved))} while {', '.join(owners)} still "
                    "own(s) it: a cooperative rebalance must revoke first and reassign in the next generation",
                    source,
                ))  # fmt: skip
        return findings

    def _reference(
        self,
        group: ClassicGroup,
        cluster: ClusterMetadata,
        subscriptions: dict[str, Subscription],
        assignments: dict[str, MemberAssignment],
    ) -> list[Finding]:
        name = group.protocol_name
        assert name is not None
        size = len(subscriptions) * sum(m.num_partitions for m in cluster.topics.values())
        if size > REFERENCE_CHECK_MAX_SIZE:
            log.info("group %s: reference check skipped, %d members x partitions is above %d", group.group_id, size, REFERENCE_CHECK_MAX_SIZE)
            return []
        try:
            expected = registry.get(name).assign(cluster, subscriptions)
        except Exception as exc:  # Java throws on some inputs (conflicting sticky data): nothing to compare
            log.info("group %s: no reference %s assignment: %s", group.group_id, name, exc)
            return []
        findings = []
        for member_id in subscriptions:
            got = set(assignments[member_id].partitions) if member_id in assignments else set()
            want = set(expected[member_id].partitions) if member_id in expected else set()
            if got != want:
                extra, missing = sorted(got - want), sorted(want - got)
                findings.append(self._finding(
                    group, REFERENCE_DIVERGENCE, member_id, tuple(sorted(got ^ want)),
                    f"member {member_id} got [{', '.join(tp_names(sorted(got)))}]; Java's {name} assignor gives "
                    f"[{', '.join(tp_names(sorted(want)))}] (extra: {', '.join(tp_names(extra)) or '-'}; "
                    f"missing: {', '.join(tp_names(missing)) or '-'})",
                    "leader",
                ))  # fmt: skip
        return findings

    # -- broker-side assignment ---------------------------------------------------------------------

    def _broker_assign(
        self, group: ClassicGroup, assignor: Assignor, subscriptions: _Subscriptions, now_ms: int, record: Record
    ) -> dict[str, bytes]:
        subs = subscriptions.by_member
        cluster = self._cluster(t for s in subs.values() for t in s.topics)
        result = assignor.assign(cluster, subs)
        withheld: list[TopicPartition] = []
        stored: dict[str, bytes] = {}
        cooperative = self.is_cooperative(group.protocol_name)
        _, holders = self._claims(subs) if cooperative else (set(), {})
        for member_id in group.members:
            given = result.get(member_id)
            partitions = list(given.partitions) if given is not None else []
            if cooperative:
                # KIP-429: a partition another member still owns is only revoked in this
                # generation; it is handed over in the next one, once the owner rejoined without it.
                keep = [tp for tp in partitions if not holders.get(tp, {member_id}) - {member_id}]
                withheld += [tp for tp in partitions if tp not in keep]
                partitions = keep
            user_data = given.user_data if given is not None else None
            stored[member_id] = _encode(partitions, user_data, subscriptions.versions.get(member_id, 0))
        record(
            "group.broker_assignment", group, now_ms,
            reason=f"broker-side assignor {assignor.name} replaced the leader's assignment",
            assignor=assignor.name, protocol_name=group.protocol_name, cooperative=bool(cooperative),
            withheld=tp_names(sorted(withheld)),
        )  # fmt: skip
        return stored

    # -- reporting ----------------------------------------------------------------------------------

    def _finding(
        self,
        group: ClassicGroup,
        kind: str,
        member_id: str | None,
        partitions: tuple[TopicPartition, ...],
        message: str,
        source: str,
    ) -> Finding:
        return Finding(kind, group.group_id, group.generation_id, member_id, partitions, message, group.protocol_name, source)

    def counts_as_strict_failure(self, finding: Finding) -> bool:
        return self.strict == "all" or (self.strict == "violations" and not finding.informational)

    def _report(self, group: ClassicGroup, finding: Finding, now_ms: int, record: Record) -> None:
        group.findings.append(finding)
        del group.findings[:-MAX_FINDINGS_PER_GROUP]
        strict = self.counts_as_strict_failure(finding)
        (log.info if finding.informational else log.warning)("assignment finding: %s", finding)
        record(
            "group.assignment_finding", group, now_ms, member_id=finding.member_id, reason=finding.message,
            kind=finding.kind, source=finding.source, protocol_name=finding.protocol_name,
            partitions=tp_names(finding.topic_partitions), informational=finding.informational, strict=strict,
        )  # fmt: skip
        if strict and self._on_strict_failure is not None:
            self._on_strict_failure(finding)
