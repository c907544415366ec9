"""The KIP-1071 streams-group coordinator, sans-I/O: StreamsGroupHeartbeat, StreamsGroupDescribe, and
the streams-group side of the offset and admin group APIs.

Follows Kafka 4.3.1's GroupCoordinatorService (the request checks) and GroupMetadataManager
(streamsGroupHeartbeat, streamsGroupLeave, streamsGroupFenceMember, the session, rebalance and
initial-rebalance timers, streamsGroupDescribe) rule by rule; method names are Kafka's in
snake_case. A heartbeat:
1. creates the group (epoch 0; an empty classic group with the id is replaced) and the member;
   a member whose metadata changed (client, rack, rebalance timeout, topology epoch, process,
   endpoint, tags) bumps the group epoch;
2. initializes the group's topology from the first member's (a different topology later is
   INVALID_REQUEST "Topology updates are not supported yet.", an older epoch STALE_TOPOLOGY);
3. configures the topology against the cluster's topics (topology.py) when it is new or the
   topics it names changed: the statuses MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS
   or MISSING_INTERNAL_TOPICS, and the internal topics the handler then creates; a topology
   validated for the first time bumps the group epoch, so does a change of
   ``group.streams.num.standby.replicas``;
4. computes a new target assignment (assignor.py) when the group epoch is ahead of it, unless the
   initial rebalance delay of a group's first member is running
   (``group.streams.initial.rebalance.delay.ms``: the timer computes it when it fires);
5. reconciles the member towards its target, revoking before assigning (group.py).

Every change of group state goes through one door, ``update_state``; every change of a member's
tasks through ``_set_member_assignment`` (events ``streams_group.*``, docs/events.md).
Deliberate differences, none visible on the wire in the tested sequences: the target assignment is
computed at once (Kafka may defer it by group.streams.assignment.interval.ms or compute it
off-thread, group.streams.assignor.offload.enable); the topics a topology names are re-read at
every heartbeat (Kafka refreshes them when its metadata image changes); the assignor is Kafka's
sticky assignor in outline (assignor.py). As in Kafka 4.3.1, static membership, warm-up tasks,
task offsets and source topic regexes are refused as not supported yet.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.group_admin import GroupAdmin
from mockbroker.coordinators.offsets.manager import (
    OffsetMetadataManager,
    TransactionalTopics,
    partition_list,
    rejected_commit,
)
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.coordinators.streams.assignor import AssignmentMember, assign
from mockbroker.coordinators.streams.group import (
    EMPTY_TASKS,
    GROUP_TYPE_STREAMS,
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Endpoint,
    MemberState,
    StreamsGroup,
    StreamsGroupMember,
    StreamsGroupState,
    TaskId,
    TasksTuple,
    build_current_assignment,
    by_subtopology,
    tasks_from_wire,
)
from mockbroker.coordinators.streams.topology import (
    ConfiguredTopology,
    InternalTopic,
    Status,
    StreamsTopology,
    Subtopology,
    TopicInfo,
    configure_topics,
    topology_partition_counts,
)
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages import streams_group_describe as sgd
from mockbroker_protocol.messages import streams_group_heartbeat as sgh
from mockbroker_protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponseTopic

if TYPE_CHECKING:
    from mockbroker.config.groups import GroupConfig

log = logging.getLogger("mockbroker.groups")

# OffsetCommit v9 is the first that carries a member epoch (StreamsGroup.validateOffsetCommit).
OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION = 9
SHUTDOWN_DETAIL = "Streams group member {} encountered a fatal error and requested a shutdown for the entire application."


class TopicView(Protocol):
    """What the coordinator reads of a topic (mockbroker.model.Topic)."""

    @property
    def name(self) -> str: ...

    @property
    def topic_id(self) -> uuid.UUID: ...

    @property
    def partitions(self) -> Sequence[object]: ...


class OtherGroups(Protocol):
    """What the streams coordinator asks about the other kinds of group (the router answers)."""

    def other_kind(self, group_id: str) -> str | None:
        """"classic", "consumer" (or another kind) when the id names a group of that kind."""
        ...

    def replace_empty_classic_group(self, group_id: str, now_ms: int) -> bool:
        """Remove the id's classic group if it is empty (maybeDeleteEmptyClassicGroup); whether it went."""
        ...


class _NoOtherGroups:
    def other_kind(self, group_id: str) -> str | None:
        return None

    def replace_empty_classic_group(self, group_id: str, now_ms: int) -> bool:
        return False


@dataclass(slots=True)
class StreamsGroupHeartbeatResult:
    """StreamsGroupHeartbeatResult: the answer, and the internal topics the broker must create."""

    response: sgh.StreamsGroupHeartbeatResponse
    internal_topics_to_create: list[InternalTopic] = field(default_factory=list)


def session_key(group_id: str, member_id: str) -> Hashable:
    return ("streams-group-session-timeout", group_id, member_id)


def rebalance_key(group_id: str, member_id: str) -> Hashable:
    return ("streams-group-rebalance-timeout", group_id, member_id)


def initial_rebalance_key(group_id: str) -> Hashable:
    """StreamsGroup.initialRebalanceTimeoutKey."""
    return ("streams-group-initial-rebalance", group_id)


def _blank(value: str | None) -> bool:
    """Utils.throwIfEmptyString: Java's String.trim removes every character at or below U+0020."""
    return value is not None and not value.strip("".join(chr(c) for c in range(33)))


def _topology_from_request(topology: sgh.Topology) -> StreamsTopology:
    """StreamsTopology.fromHeartbeatRequest: copartition groups turn their indexes into names."""

    def info(t: sgh.TopicInfo) -> TopicInfo:
        return TopicInfo(t.name, t.partitions, t.replication_factor, tuple(sorted((c.key, c.value) for c in t.topic_configs)))

    subs = []
    for s in topology.subtopologies:
        groups = []
        for g in s.copartition_groups:
            names = {s.source_topics[i] for i in g.source_topics if 0 <= i < len(s.source_topics)}
            names |= {s.repartition_source_topics[i].name for i in g.repartition_source_topics
                      if 0 <= i < len(s.repartition_source_topics)}  # fmt: skip
            groups.append(frozenset(names))
        subs.append(Subtopology(
            subtopology_id=s.subtopology_id,
            source_topics=tuple(sorted(s.source_topics)),
            repartition_sink_topics=tuple(sorted(s.repartition_sink_topics)),
            state_changelog_topics=tuple(sorted((info(t) for t in s.state_changelog_topics), key=lambda t: t.name)),
            repartition_source_topics=tuple(sorted((info(t) for t in s.repartition_source_topics), key=lambda t: t.name)),
            copartition_groups=tuple(sorted(groups, key=sorted)),
        ))  # fmt: skip
    return StreamsTopology(topology.epoch, tuple(sorted(subs, key=lambda s: s.subtopology_id)))


def _owned(request: sgh.StreamsGroupHeartbeatRequest) -> TasksTuple | None:
    """TasksTuple.fromHeartbeatRequest: None when the member did not report its tasks."""
    if request.active_tasks is None:
        return None
    return TasksTuple(
        tasks_from_wire((t.subtopology_id, t.partitions) for t in request.active_tasks),
        tasks_from_wire((t.subtopology_id, t.partitions) for t in request.standby_tasks or ()),
        tasks_from_wire((t.subtopology_id, t.partitions) for t in request.warmup_tasks or ()),
    )


def _response_tasks(tasks: Iterable[TaskId]) -> list[sgh.StreamsGroupHeartbeatResponseTaskIds]:
    return [sgh.StreamsGroupHeartbeatResponseTaskIds(sub, parts) for sub, parts in by_subtopology(tasks).items()]


class StreamsGroupCoordinator(GroupAdmin[StreamsGroup]):
    """Owns every KIP-1071 streams group (``groups``). Shares the timers, the event log
    (``services``), the offsets (``offsets``) and the group-id namespace with the other kinds
    (``other_groups``, wired in by the router)."""

    GROUP_TYPE = GROUP_TYPE_STREAMS

    def __init__(self, services: CoordinatorServices, offsets: OffsetMetadataManager, topics: Mapping[str, TopicView]) -> None:
        self.services = services
        self.config: GroupConfig = services.config
        self.timers = services.timers
        self.offsets = offsets
        self.topics = topics
        self.groups: dict[str, StreamsGroup] = {}
        self.other_groups: OtherGroups = _NoOtherGroups()

    # -- the doors -----------------------------------------------------------------------------------

    def record(self, type: str, group: StreamsGroup | str, now_ms: int, *, member_id: str | None = None,
               reason: str | None = None, **details: Any) -> None:
        """One event of a streams group (docs/events.md): its ``generation_id`` is the group epoch."""
        if isinstance(group, str):
            self.services.record(type, group, None, now_ms, member_id=member_id, reason=reason, **details)
        else:
            self.services.record(type, group.group_id, group.group_epoch, now_ms, member_id=member_id, reason=reason, **details)

    def update_state(self, group: StreamsGroup, now_ms: int, reason: str) -> None:
        """The only place a streams group's state changes (StreamsGroup.maybeUpdateGroupState);
        an Empty group forgets a shutdown request."""
        new_state = group.compute_state()
        if new_state is StreamsGroupState.EMPTY:
            group.shutdown_request_member_id = None
        if new_state is group.state:
            return
        previous = group.state
        group.state, group.state_timestamp_ms = new_state, now_ms
        self.record(
            "streams_group.transition", group, now_ms, reason=reason, from_state=previous.value, to_state=new_state.value,
            group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
        )  # fmt: skip

    def _bump_group_epoch(self, group: StreamsGroup, now_ms: int, reason: str) -> None:
        group.group_epoch += 1
        self.record("streams_group.epoch_bumped", group, now_ms, reason=reason, group_epoch=group.group_epoch)

    def _set_member_assignment(self, group: StreamsGroup, member: StreamsGroupMember, state: MemberState, epoch: int,
                               assigned: TasksTuple, pending: TasksTuple, now_ms: int, reason: str) -> None:  # fmt: skip
        """The only place a member's epoch, state or tasks change. An active task remembers the
        epoch it was given at (TasksTupleWithEpochs), for OffsetCommit's checks."""
        previous_epoch, previous_state = member.member_epoch, member.state
        member.active_epochs = {t: member.active_epochs.get(t, epoch) for t in assigned.active}
        member.assigned, member.pending_revocation, member.state = assigned, pending, state
        if epoch != member.member_epoch:
            member.previous_member_epoch, member.member_epoch = member.member_epoch, epoch
        self.record(
            "streams_group.member_reconciled", group, now_ms, member_id=member.member_id, reason=reason,
            from_member_epoch=previous_epoch, member_epoch=member.member_epoch, from_state=previous_state.value,
            state=state.value, active=by_subtopology(assigned.active), standby=by_subtopology(assigned.standby),
            pending_revocation=by_subtopology(pending.active | pending.standby | pending.warmup),
        )  # fmt: skip

    # -- StreamsGroupHeartbeat: the request checks ---------------------------------------------------

    def check_heartbeat_request(self, request: sgh.StreamsGroupHeartbeatRequest) -> sgh.StreamsGroupHeartbeatResponse | None:
        """The checks GroupCoordinatorService makes before the group is looked up (and before
        NOT_COORDINATOR): the error answer, or None."""
        try:
            self._throw_if_using_unsupported_features(request)
            self._throw_if_request_is_invalid(request)
        except GroupError as exc:
            return sgh.StreamsGroupHeartbeatResponse(error_code=exc.code, error_message=exc.message)
        return None

    @staticmethod
    def _throw_if_using_unsupported_features(request: sgh.StreamsGroupHeartbeatRequest) -> None:
        """throwIfStreamsGroupHeartbeatRequestIsUsingUnsupportedFeatures (Kafka 4.3.1)."""
        def invalid(message: str) -> GroupError:
            return GroupError(ErrorCode.INVALID_REQUEST, message)

        if request.instance_id is not None:
            raise invalid("Static membership is not yet supported.")
        if request.task_offsets is not None:
            raise invalid("TaskOffsets are not supported yet.")
        if request.task_end_offsets is not None:
            raise invalid("TaskEndOffsets are not supported yet.")
        if request.warmup_tasks:
            raise invalid("WarmupTasks are not supported yet.")
        if request.topology is not None and any(s.source_topic_regex for s in request.topology.subtopologies):
            raise invalid("Regular expressions for source topics are not supported yet.")

    @staticmethod
    def _throw_if_request_is_invalid(request: sgh.StreamsGroupHeartbeatRequest) -> None:
        """throwIfStreamsGroupHeartbeatRequestIsInvalid, in Kafka's order."""
        def invalid(message: str) -> GroupError:
            return GroupError(ErrorCode.INVALID_REQUEST, message)

        if _blank(request.member_id):
            raise invalid("MemberId can't be empty.")
        if _blank(request.group_id):
            raise invalid("GroupId can't be empty.")
        if _blank(request.instance_id):
            raise invalid("InstanceId can't be empty.")
        if _blank(request.rack_id):
            raise invalid("RackId can't be empty.")
        epoch = request.member_epoch
        if epoch == JOIN_GROUP_MEMBER_EPOCH:
            if request.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            # Utils.throwIfNotEmptyCollection refuses a null list too
            if request.active_tasks is None or request.active_tasks:
                raise invalid("ActiveTasks must be empty when (re-)joining.")
            if request.standby_tasks is None or request.standby_tasks:
                raise invalid("StandbyTasks must be empty when (re-)joining.")
            if request.warmup_tasks is None or request.warmup_tasks:
                raise invalid("WarmupTasks must be empty when (re-)joining.")
            if request.topology is None:
                raise invalid("Topology must be non-null when (re-)joining.")
            for sub in request.topology.subtopologies:
                for topic in sub.state_changelog_topics:
                    if topic.partitions != 0:
                        raise GroupError(
                            ErrorCode.STREAMS_INVALID_TOPOLOGY,
                            f"Changelog topic {topic.name} must have an undefined partition count, but it is set to "
                            f"{topic.partitions}.",
                        )
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if request.instance_id is None:
                raise invalid("InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
        lists = (request.active_tasks, request.standby_tasks, request.warmup_tasks)
        if any(t is not None for t in lists) and any(t is None for t in lists):
            raise invalid("If one task-type is non-null, all must be non-null.")
        if epoch != JOIN_GROUP_MEMBER_EPOCH and request.topology is not None:
            raise invalid("Topology can only be provided when (re-)joining.")

    # -- StreamsGroupHeartbeat -----------------------------------------------------------------------

    def streams_group_heartbeat(
        self, now_ms: int, request: sgh.StreamsGroupHeartbeatRequest, *, client_id: str, client_host: str
    ) -> StreamsGroupHeartbeatResult:
        """GroupMetadataManager.streamsGroupHeartbeat, or streamsGroupLeave for epoch -1."""
        refused = self.check_heartbeat_request(request)
        if refused is not None:
            return StreamsGroupHeartbeatResult(refused)
        try:
            if request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
                return StreamsGroupHeartbeatResult(self._streams_group_leave(now_ms, request))
            return self._streams_group_heartbeat(now_ms, request, client_id, client_host)
        except GroupError as exc:
            return StreamsGroupHeartbeatResult(sgh.StreamsGroupHeartbeatResponse(error_code=exc.code, error_message=exc.message))

    def _get_streams_group_or_throw(self, group_id: str) -> StreamsGroup:
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if self.other_groups.other_kind(group_id) is not None:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")

    def _get_or_create_streams_group(self, group_id: str, now_ms: int) -> StreamsGroup:
        """getOrCreateStreamsGroup: an empty classic group with the id is replaced."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        kind = self.other_groups.other_kind(group_id)
        if kind is not None and not (kind == "classic" and self.other_groups.replace_empty_classic_group(group_id, now_ms)):
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        group = StreamsGroup(group_id, now_ms)
        # Kafka 4.3.1 answers a new group's first member with group epoch 2, one more than its one
        # bump of the heartbeat; so a new group starts at epoch 1 here (differential-tested).
        group.group_epoch = 1
        self.groups[group_id] = group
        self.record("streams_group.created", group, now_ms, reason="epoch-0 StreamsGroupHeartbeat", state=group.state.value)
        return group

    def _member_or_throw(self, group: StreamsGroup, member_id: str) -> StreamsGroupMember:
        member = group.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
        return member

    @staticmethod
    def _throw_if_member_epoch_is_invalid(member: StreamsGroupMember, received: int, owned: TasksTuple | None) -> None:
        """throwIfStreamsGroupMemberEpochIsInvalid: epoch 0 is a rejoin; the previous epoch is
        accepted while the owned tasks are a subset of the assignment (a lost response)."""
        if received == JOIN_GROUP_MEMBER_EPOCH:
            return
        if received > member.member_epoch:
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The streams group member has a greater member epoch ({received}) than the one known by the group "
                f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )
        if received < member.member_epoch:
            contained = owned is not None and (
                owned.active <= member.assigned.active and owned.standby <= member.assigned.standby
                and owned.warmup <= member.assigned.warmup
            )  # fmt: skip
            if received != member.previous_member_epoch or not contained:
                raise GroupError(
                    ErrorCode.FENCED_MEMBER_EPOCH,
                    f"The streams group member has a smaller member epoch ({received}) than the one known by the group "
                    f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
                )

    def _streams_group_heartbeat(
        self, now_ms: int, request: sgh.StreamsGroupHeartbeatRequest, client_id: str, client_host: str
    ) -> StreamsGroupHeartbeatResult:
        """streamsGroupHeartbeat: the member, the topology and its validation, the target
        assignment, reconciliation, then the answer."""
        group_id, member_id = request.group_id, request.member_id
        joining = request.member_epoch == JOIN_GROUP_MEMBER_EPOCH
        group = self._heartbeat_group(group_id, member_id, joining, now_ms)
        owned = _owned(request)
        was_empty = group.is_empty()
        member, new_member = self._heartbeat_member(group, request, joining, owned)
        topology = None if request.topology is None else _topology_from_request(request.topology)
        updated = self._topology_for(group, topology, member_id)  # may refuse before any change

        # 1. The member's metadata; a new or changed member bumps the group epoch.
        bump_reasons = self._update_member(group, member, new_member, request, client_id, client_host, now_ms)
        # 2. The group's topology.
        statuses = self._maybe_initialize_topology(group, member, updated, now_ms)
        # 3. The topology against the cluster's topics.
        configured = self._configure_topology(group, updated, request, now_ms, bump_reasons)
        if bump_reasons:
            self._bump_for(group, member_id, bump_reasons, was_empty, now_ms)

        # 4. A new target assignment when the group epoch is ahead of it.
        if group.group_epoch > group.assignment_epoch and self.timers.deadline(initial_rebalance_key(group_id)) is None:
            self._update_target_assignment(group, now_ms)

        # 5. Reconcile the member.
        assigned_before = member.assigned
        self.maybe_reconcile(group, member, owned, now_ms)
        self.schedule_streams_group_session_timeout(group_id, member, now_ms)
        if request.shutdown_application:
            group.shutdown_request_member_id = member_id
            self.record("streams_group.shutdown_requested", group, now_ms, member_id=member_id,
                        reason="the member asked the whole application to shut down")  # fmt: skip
        self.update_state(group, now_ms, f"member {member_id} heartbeat")
        response = self._heartbeat_response(group, member, request, joining or member.assigned != assigned_before)
        to_create: list[InternalTopic] = []
        if configured.error is not None:
            to_create = list(configured.internal_topics_to_create)
            statuses.append(sgh.Status(configured.error.status, configured.error.message))
        if group.shutdown_request_member_id is not None:
            statuses.append(sgh.Status(Status.SHUTDOWN_APPLICATION, SHUTDOWN_DETAIL.format(group.shutdown_request_member_id)))
        response.status = statuses
        return StreamsGroupHeartbeatResult(response, to_create)

    def _heartbeat_group(self, group_id: str, member_id: str, joining: bool, now_ms: int) -> StreamsGroup:
        """The group of a heartbeat: created by a join (within group.streams.max.size)."""
        if not joining:
            return self._get_streams_group_or_throw(group_id)
        group = self._get_or_create_streams_group(group_id, now_ms)
        max_size = self.config.streams_group_max_size
        if len(group.members) >= max_size and member_id not in group.members:
            raise GroupError(
                ErrorCode.GROUP_MAX_SIZE_REACHED, f"The streams group has reached its maximum capacity of {max_size} members."
            )
        return group

    def _heartbeat_member(
        self, group: StreamsGroup, request: sgh.StreamsGroupHeartbeatRequest, joining: bool, owned: TasksTuple | None
    ) -> tuple[StreamsGroupMember, bool]:
        """The member of a heartbeat (a new one on a join) with its epoch checked; True if new."""
        member = group.members.get(request.member_id)
        if member is None:
            if not joining:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Member {request.member_id} is not a member of group {group.group_id}."
                )
            return StreamsGroupMember(request.member_id), True
        self._throw_if_member_epoch_is_invalid(member, request.member_epoch, owned)
        return member, False

    def _update_member(
        self, group: StreamsGroup, member: StreamsGroupMember, new_member: bool, request: sgh.StreamsGroupHeartbeatRequest,
        client_id: str, client_host: str, now_ms: int,
    ) -> list[str]:  # fmt: skip
        """The member's metadata from the request; the reasons to bump the group epoch."""
        before = None if new_member else member.metadata()
        if request.rack_id is not None:
            member.rack_id = request.rack_id
        if request.rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
        if request.topology is not None:
            member.topology_epoch = request.topology.epoch
        member.client_id, member.client_host = client_id, client_host
        if request.process_id is not None:
            member.process_id = request.process_id
        if request.client_tags is not None:
            member.client_tags = tuple(sorted((kv.key, kv.value) for kv in request.client_tags))
        if request.user_endpoint is not None:
            member.user_endpoint = Endpoint(request.user_endpoint.host, request.user_endpoint.port)
        if new_member:
            group.members[member.member_id] = member
            self.record(
                "streams_group.member_joined", group, now_ms, member_id=member.member_id,
                reason=f"member {member.member_id} joins the streams group", client_id=client_id,
                client_host=client_host, process_id=member.process_id, rebalance_timeout_ms=member.rebalance_timeout_ms,
                topology_epoch=member.topology_epoch,
            )  # fmt: skip
            return ["member joined"]
        return ["member metadata"] if before != member.metadata() else []

    def _maybe_initialize_topology(
        self, group: StreamsGroup, member: StreamsGroupMember, updated: StreamsTopology, now_ms: int
    ) -> list[sgh.Status]:
        """The first member's topology becomes the group's; STALE_TOPOLOGY for a member behind it."""
        if group.topology is None:
            group.topology = updated
            self.record("streams_group.topology_initialized", group, now_ms, member_id=member.member_id,
                        reason="the first member's topology", topology_epoch=updated.topology_epoch,
                        subtopologies=[s.subtopology_id for s in updated.subtopologies])  # fmt: skip
        if member.topology_epoch < updated.topology_epoch:
            return [sgh.Status(
                Status.STALE_TOPOLOGY,
                f"The member's topology epoch {member.topology_epoch} is behind the group's topology epoch "
                f"{updated.topology_epoch}.",
            )]  # fmt: skip
        return []

    def _configure_topology(
        self, group: StreamsGroup, updated: StreamsTopology, request: sgh.StreamsGroupHeartbeatRequest, now_ms: int,
        bump_reasons: list[str],
    ) -> ConfiguredTopology:  # fmt: skip
        """The topology configured against the cluster's topics (again when they changed), the
        request's tasks checked against it; adds to ``bump_reasons``."""
        counts = {name: len(t.partitions) for name, t in self.topics.items()}
        metadata = topology_partition_counts(updated, counts)
        configured = group.configured_topology
        if configured is None or metadata != group.metadata_hash:
            if group.metadata_hash is not None and metadata != group.metadata_hash:
                bump_reasons.append("the topology's topics changed")
            elif group.metadata_hash is None:
                bump_reasons.append("the topology's topics")
            group.metadata_hash = metadata
            configured = configure_topics(updated, counts.get)
            group.configured_topology = configured
            self.record(
                "streams_group.topology_configured", group, now_ms, member_id=request.member_id,
                reason="the topology or its topics changed", ready=configured.is_ready,
                status=None if configured.error is None else configured.error.status.name,
                detail=None if configured.error is None else configured.error.message,
                internal_topics_to_create=sorted(t.name for t in configured.internal_topics_to_create),
            )  # fmt: skip
        validated = -1
        if configured.is_ready and configured.subtopologies is not None:
            validated = updated.topology_epoch
            for lst in (request.active_tasks, request.standby_tasks, request.warmup_tasks):
                self._throw_if_request_contains_invalid_tasks(configured, lst)
        if validated != group.validated_topology_epoch:
            bump_reasons.append(f"topology epoch {validated} validated")
        # The group's streams.num.standby.replicas (else the broker's): a change bumps the group epoch.
        standbys = self.services.group_config(group.group_id).streams_num_standby_replicas
        assignment_configs = {"num.standby.replicas": str(standbys)}
        if not bump_reasons and assignment_configs != group.last_assignment_configs:
            bump_reasons.append("assignment configurations")
        if bump_reasons:
            group.validated_topology_epoch = validated
            group.last_assignment_configs = assignment_configs
        return configured

    def _bump_for(self, group: StreamsGroup, member_id: str, reasons: list[str], was_empty: bool, now_ms: int) -> None:
        """A new group epoch; the first member of an empty group starts the initial rebalance delay."""
        self._bump_group_epoch(group, now_ms, f"member {member_id}: {', '.join(reasons)}")
        group_id = group.group_id
        delay = self.services.group_config(group_id).streams_initial_rebalance_delay_ms
        if was_empty and delay > 0 and self.timers.deadline(initial_rebalance_key(group_id)) is None:
            self.services.schedule(
                initial_rebalance_key(group_id), now_ms + delay,
                lambda t: self._initial_rebalance_fired(group_id, t),
            )  # fmt: skip

    def _heartbeat_response(
        self, group: StreamsGroup, member: StreamsGroupMember, request: sgh.StreamsGroupHeartbeatRequest, with_tasks: bool
    ) -> sgh.StreamsGroupHeartbeatResponse:
        """The answer: the member's epoch, its tasks when new or changed, the endpoints when the
        member's endpoint information epoch is behind."""
        response = sgh.StreamsGroupHeartbeatResponse(
            member_id=member.member_id, member_epoch=member.member_epoch,
            heartbeat_interval_ms=self.services.group_config(group.group_id).streams_heartbeat_interval_ms,
        )  # fmt: skip
        if with_tasks:
            response.active_tasks = _response_tasks(member.assigned.active)
            response.standby_tasks = _response_tasks(member.assigned.standby)
            response.warmup_tasks = _response_tasks(member.assigned.warmup)
            if member.user_endpoint is not None:
                group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != request.endpoint_information_epoch:
            response.partitions_by_user_endpoint = self._endpoint_to_partitions(group, member)
        response.endpoint_information_epoch = group.endpoint_information_epoch
        return response

    def _topology_for(self, group: StreamsGroup, topology: StreamsTopology | None, member_id: str) -> StreamsTopology:
        """maybeUpdateTopology: the group's topology (the request's when the group has none)."""
        if topology is None:
            if group.topology is None:
                raise AssertionError(f"streams group {group.group_id} has no topology and member {member_id} sent none")
            return group.topology
        if group.topology is None:
            return topology
        if group.topology.topology_epoch > topology.topology_epoch:
            return group.topology  # a member with a stale topology: STALE_TOPOLOGY
        if group.topology != topology:
            raise GroupError(ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")
        return group.topology

    @staticmethod
    def _throw_if_request_contains_invalid_tasks(
        configured: ConfiguredTopology, tasks: list[sgh.StreamsGroupHeartbeatRequestTaskIds] | None
    ) -> None:
        """throwIfRequestContainsInvalidTasks."""
        subtopologies = configured.subtopologies or {}
        for entry in tasks or ():
            sub = subtopologies.get(entry.subtopology_id)
            if sub is None:
                raise GroupError(ErrorCode.INVALID_REQUEST, f"Subtopology {entry.subtopology_id} does not exist in the topology.")
            for p in entry.partitions:
                if not 0 <= p < sub.number_of_tasks:
                    raise GroupError(
                        ErrorCode.INVALID_REQUEST,
                        f"Task {p} for subtopology {entry.subtopology_id} is invalid. Number of tasks for this "
                        f"subtopology: {sub.number_of_tasks}",
                    )

    def _initial_rebalance_fired(self, group_id: str, now_ms: int) -> None:
        """The initial rebalance delay passed: the target assignment for the members so far."""
        group = self.groups.get(group_id)
        if group is None or group.group_epoch <= group.assignment_epoch:
            return
        self._update_target_assignment(group, now_ms)
        self.update_state(group, now_ms, "the initial rebalance delay passed")

    def _update_target_assignment(self, group: StreamsGroup, now_ms: int) -> None:
        """updateStreamsTargetAssignment: the sticky assignor over every member; a topology not
        (yet) valid has no tasks."""
        configured = group.configured_topology
        tasks: dict[str, tuple[int, bool]] = {}
        if configured is not None and configured.is_ready and configured.subtopologies is not None:
            tasks = {sid: (c.number_of_tasks, c.subtopology.is_stateful) for sid, c in configured.subtopologies.items()}
        members = [
            AssignmentMember(m.member_id, m.process_id, group.target_assignment.get(m.member_id, EMPTY_TASKS))
            for m in group.members.values()
        ]
        target = assign(members, tasks, self.services.group_config(group.group_id).streams_num_standby_replicas)
        group.target_assignment = target
        group.assignment_epoch = group.group_epoch
        self.record(
            "streams_group.target_assignment", group, now_ms,
            reason=f"group epoch {group.group_epoch} is ahead of the target assignment",
            assignment_epoch=group.assignment_epoch,
            target={mid: {"active": by_subtopology(t.active), "standby": by_subtopology(t.standby)} for mid, t in target.items()},
        )  # fmt: skip

    def maybe_reconcile(self, group: StreamsGroup, member: StreamsGroupMember, owned: TasksTuple | None, now_ms: int) -> None:
        """maybeReconcile: one CurrentAssignmentBuilder step; the rebalance timeout runs while the
        member must revoke tasks."""
        if member.is_reconciled_to(group.assignment_epoch):
            return
        target = group.target_assignment.get(member.member_id, EMPTY_TASKS)
        others = [m for m in group.members.values() if m is not member]

        def active_owner(task: TaskId) -> str | None:
            for m in others:
                if task in m.assigned.active or task in m.pending_revocation.active:
                    return m.process_id
            return None

        def standby_processes(task: TaskId) -> set[str]:
            return {m.process_id for m in others if task in m.assigned.standby or task in m.pending_revocation.standby}

        def warmup_processes(task: TaskId) -> set[str]:
            return {m.process_id for m in others if task in m.assigned.warmup or task in m.pending_revocation.warmup}

        step = build_current_assignment(member, group.assignment_epoch, target, owned, active_owner, standby_processes, warmup_processes)
        if step is None or (step.state, step.member_epoch, step.assigned, step.pending_revocation) == (
            member.state, member.member_epoch, member.assigned, member.pending_revocation
        ):
            return
        reason = {
            MemberState.UNREVOKED_TASKS: "tasks must be revoked before the member moves on",
            MemberState.UNRELEASED_TASKS: "some target tasks are still held by other members",
            MemberState.STABLE: "reconciled to the target assignment",
        }[step.state]
        self._set_member_assignment(group, member, step.state, step.member_epoch, step.assigned, step.pending_revocation, now_ms, reason)
        if member.state is MemberState.UNREVOKED_TASKS:
            self._schedule_rebalance_timeout(group.group_id, member.member_id, member.member_epoch, member.rebalance_timeout_ms, now_ms)
        else:
            self.timers.cancel(rebalance_key(group.group_id, member.member_id))

    def _endpoint_to_partitions(self, group: StreamsGroup, updated: StreamsGroupMember) -> list[sgh.EndpointToPartitions]:
        """StreamsGroup.buildEndpointToPartitions: for every member with an endpoint (the heartbeating
        one last), the partitions of the source topics its active and standby tasks read."""
        configured = group.configured_topology
        subs = {} if configured is None or configured.subtopologies is None else configured.subtopologies

        def partitions(tasks: frozenset[TaskId]) -> list[sgh.TopicPartition]:
            by_topic: dict[str, set[int]] = {}
            for sub_id, p in tasks:
                conf = subs.get(sub_id)
                if conf is None:
                    continue
                for topic in (*conf.subtopology.source_topics, *(t.name for t in conf.subtopology.repartition_source_topics)):
                    known = self.topics.get(topic)
                    if known is not None and p < len(known.partitions):
                        by_topic.setdefault(topic, set()).add(p)
            return [sgh.TopicPartition(t, sorted(ps)) for t, ps in sorted(by_topic.items())]

        result = []
        for m in [*(m for m in group.members.values() if m is not updated), updated]:
            if m.user_endpoint is None:
                continue
            result.append(sgh.EndpointToPartitions(
                user_endpoint=sgh.StreamsGroupHeartbeatResponseEndpoint(m.user_endpoint.host, m.user_endpoint.port),
                active_partitions=partitions(m.assigned.active), standby_partitions=partitions(m.assigned.standby),
            ))  # fmt: skip
        return result

    # -- leaving and fencing -------------------------------------------------------------------------

    def _streams_group_leave(self, now_ms: int, request: sgh.StreamsGroupHeartbeatRequest) -> sgh.StreamsGroupHeartbeatResponse:
        """streamsGroupLeave (epoch -1): the member goes with its tasks, the group epoch is bumped."""
        group = self._get_streams_group_or_throw(request.group_id)
        member = self._member_or_throw(group, request.member_id)
        self.streams_group_fence_member(group, member, now_ms, f"member {member.member_id} left the streams group", "left")
        return sgh.StreamsGroupHeartbeatResponse(member_id=member.member_id, member_epoch=LEAVE_GROUP_MEMBER_EPOCH)

    def streams_group_fence_member(self, group: StreamsGroup, member: StreamsGroupMember, now_ms: int, reason: str, cause: str) -> None:
        """streamsGroupFenceMember: the member, its tasks and target go; the group epoch is bumped
        so that the others are given its tasks at their next heartbeat."""
        self._cancel_timers(group.group_id, member.member_id)
        self.record(
            "streams_group.member_left" if cause == "left" else "streams_group.member_fenced", group, now_ms,
            member_id=member.member_id, reason=reason, cause=cause, member_epoch=member.member_epoch,
            active=by_subtopology(member.assigned.active), standby=by_subtopology(member.assigned.standby),
        )  # fmt: skip
        del group.members[member.member_id]
        group.target_assignment.pop(member.member_id, None)
        self._bump_group_epoch(group, now_ms, reason)
        self.update_state(group, now_ms, reason)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        self.timers.cancel(session_key(group_id, member_id))
        self.timers.cancel(rebalance_key(group_id, member_id))

    def schedule_streams_group_session_timeout(self, group_id: str, member: StreamsGroupMember, now_ms: int) -> None:
        """The group's streams.session.timeout.ms (else the broker's group.streams.session.timeout.ms),
        re-armed by every heartbeat (the armed timer is moved when it can be: Timers.postpone)."""
        timeout = self.services.group_config(group_id).streams_session_timeout_ms
        timer = member.session_timer
        if timer is not None and self.timers.postpone(timer, now_ms + timeout, now_ms):
            return
        member_id = member.member_id
        member.session_timer = self.services.schedule(
            session_key(group_id, member_id), now_ms + timeout,
            lambda t: self.streams_group_fence_member_operation(
                group_id, member_id, t, f"the member session expired ({timeout} ms without a heartbeat)", "session_timeout"
            ),
        )  # fmt: skip

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, member_epoch: int, timeout_ms: int, now_ms: int) -> None:
        """scheduleStreamsGroupRebalanceTimeout: fenced if still at this epoch when it fires."""
        def fire(t: int) -> None:
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            if group is None or member is None or member.member_epoch != member_epoch:
                return
            self.streams_group_fence_member(
                group, member, t,
                f"member {member_id} failed to revoke its tasks from epoch {member_epoch} within {timeout_ms}ms",
                "rebalance_timeout",
            )  # fmt: skip

        self.services.schedule(rebalance_key(group_id, member_id), now_ms + timeout_ms, fire)

    def streams_group_fence_member_operation(self, group_id: str, member_id: str, now_ms: int, reason: str, cause: str) -> None:
        """A timer's fencing: the member goes if it is still there when the timer fires."""
        group = self.groups.get(group_id)
        member = None if group is None else group.members.get(member_id)
        if group is None or member is None:
            return
        self.streams_group_fence_member(group, member, now_ms, f"member {member_id} fenced: {reason}", cause)

    def remove_group(self, group: StreamsGroup, now_ms: int, reason: str, **details: Any) -> None:
        """A streams group goes (DeleteGroups, the cleanup cycle)."""
        previous = group.state
        group.state = StreamsGroupState.DEAD
        del self.groups[group.group_id]
        for member_id in list(group.members):
            self._cancel_timers(group.group_id, member_id)
        self.timers.cancel(initial_rebalance_key(group.group_id))
        self.record("streams_group.transition", group, now_ms, reason=reason, from_state=previous.value,
                    to_state=StreamsGroupState.DEAD.value, group_epoch=group.group_epoch,
                    assignment_epoch=group.assignment_epoch)  # fmt: skip
        self.record("streams_group.deleted", group, now_ms, reason=reason, **details)

    # -- StreamsGroupDescribe ------------------------------------------------------------------------

    def streams_group_describe(self, group_id: str) -> sgd.DescribedGroup:
        """GroupMetadataManager.streamsGroupDescribe for one group id."""
        group = self.groups.get(group_id)
        if group is None:
            message = (f"Group {group_id} is not a streams group." if self.other_groups.other_kind(group_id) is not None
                       else f"Group {group_id} not found.")  # fmt: skip
            return sgd.DescribedGroup(error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=message, group_id=group_id)
        return sgd.DescribedGroup(
            group_id=group_id, group_state=group.state.value, group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch, topology=self._describe_topology(group),
            members=[self._describe_member(group, m) for m in group.members.values()],
        )  # fmt: skip

    @staticmethod
    def _describe_topology(group: StreamsGroup) -> sgd.Topology | None:
        """The configured topology's subtopologies once ready (internal topics with their decided
        partition counts), else the topology as the members gave it."""
        if group.topology is None:
            return None
        configured = group.configured_topology
        decided: dict[str, int] = {}
        if configured is not None and configured.is_ready and configured.subtopologies is not None:
            for conf in configured.subtopologies.values():
                decided.update(conf.internal_partitions)

        def info(t: TopicInfo) -> sgd.TopicInfo:
            return sgd.TopicInfo(t.name, decided.get(t.name, t.partitions), t.replication_factor,
                                 [sgd.KeyValue(k, v) for k, v in t.topic_configs])  # fmt: skip

        return sgd.Topology(
            epoch=group.topology.topology_epoch,
            subtopologies=[
                sgd.Subtopology(
                    subtopology_id=s.subtopology_id, source_topics=list(s.source_topics),
                    repartition_sink_topics=list(s.repartition_sink_topics),
                    state_changelog_topics=[info(t) for t in s.state_changelog_topics],
                    repartition_source_topics=[info(t) for t in s.repartition_source_topics],
                )
                for s in group.topology.subtopologies
            ],
        )

    @staticmethod
    def _describe_member(group: StreamsGroup, member: StreamsGroupMember) -> sgd.Member:
        def assignment(tasks: TasksTuple) -> sgd.Assignment:
            def ids(ts: Iterable[TaskId]) -> list[sgd.TaskIds]:
                return [sgd.TaskIds(sub, parts) for sub, parts in by_subtopology(ts).items()]

            return sgd.Assignment(ids(tasks.active), ids(tasks.standby), ids(tasks.warmup))

        return sgd.Member(
            member_id=member.member_id, member_epoch=member.member_epoch, instance_id=None, rack_id=member.rack_id,
            client_id=member.client_id, client_host=member.client_host, topology_epoch=member.topology_epoch,
            process_id=member.process_id,
            user_endpoint=None if member.user_endpoint is None else sgd.Endpoint(member.user_endpoint.host, member.user_endpoint.port),
            client_tags=[sgd.KeyValue(k, v) for k, v in member.client_tags],
            assignment=assignment(member.assigned),
            target_assignment=assignment(group.target_assignment.get(member.member_id, EMPTY_TASKS)),
        )  # fmt: skip

    # -- offsets and admin APIs ----------------------------------------------------------------------

    def _task_of(self, group: StreamsGroup, topic: str, partition: int) -> TaskId | None:
        configured = group.configured_topology
        for sub_id, conf in (configured.subtopologies or {}).items() if configured is not None else ():
            if topic in conf.subtopology.source_topics or topic in {t.name for t in conf.subtopology.repartition_source_topics}:
                return (sub_id, partition)
        return None

    def _validate_offset_commit(
        self, group: StreamsGroup, member_id: str, member_epoch: int, api_version: int, partitions: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], ErrorCode]:
        """StreamsGroup.validateOffsetCommit: GroupError for a group-level refusal, else the
        per-partition errors of a commit at an older epoch (each task must have been given at or
        before it, and still be held)."""
        if member_epoch < 0 and not group.members:
            return {}  # an admin commit to an empty group
        member = self._member_or_throw(group, member_id)
        if api_version < OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION:
            raise GroupError(
                ErrorCode.UNSUPPORTED_VERSION,
                "OffsetCommit version 9 or above must be used by members using the streams group protocol",
            )
        if member_epoch > member.member_epoch:
            raise GroupError(
                ErrorCode.STALE_MEMBER_EPOCH,
                f"Received member epoch {member_epoch} is newer than current member epoch {member.member_epoch}.",
            )
        if member_epoch == member.member_epoch:
            return {}
        errors: dict[tuple[str, int], ErrorCode] = {}
        for topic, partition in partitions:
            task = self._task_of(group, topic, partition)
            given_at = None if task is None else member.active_epochs.get(task)
            if task is not None and given_at is None and task in member.pending_revocation.active:
                given_at = member.previous_member_epoch
            if given_at is None or given_at > member_epoch:
                errors[(topic, partition)] = ErrorCode.STALE_MEMBER_EPOCH
        return errors

    def commit_offsets(self, now_ms: int, group: StreamsGroup, request: OffsetCommitRequest, *, api_version: int) -> list[OffsetCommitResponseTopic]:
        """OffsetCommit to a streams group: validated against member epochs, then stored."""
        epoch = request.generation_id_or_member_epoch
        requested = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
        try:
            partition_errors = self._validate_offset_commit(group, request.member_id, epoch, api_version, requested)
        except GroupError as exc:
            self.record(
                "offset.commit_rejected", group, now_ms, member_id=request.member_id or None, reason=exc.message,
                error=exc.code.name, request_generation_id=epoch, partitions=partition_list(request.topics),
            )  # fmt: skip
            return rejected_commit(request, exc.code)
        return self.offsets.store_offsets(
            now_ms, group, request, partition_errors,
            reason="admin commit (epoch -1)" if epoch < 0 else "member commit", request_generation_id=epoch,
        )  # fmt: skip

    def commit_transactional_offsets(
        self, now_ms: int, group: StreamsGroup, producer_id: int, topics: TransactionalTopics, *,
        generation_id: int, member_id: str, group_instance_id: str | None,
    ) -> ErrorCode | dict[tuple[str, int], ErrorCode]:  # fmt: skip
        """TxnOffsetCommit to a streams group (exactly_once_v2): a commit naming a member must be that
        member at its current epoch; the offsets wait for the transaction's end."""
        anonymous = generation_id == -1 and member_id == "" and group_instance_id is None
        if not (anonymous or (generation_id < 0 and not group.members)):
            member = group.members.get(member_id)
            if member is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if generation_id != member.member_epoch:
                return ErrorCode.STALE_MEMBER_EPOCH
        return self.offsets.store_pending_offsets(now_ms, group.group_id, producer_id, topics)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        """StreamsGroup.validateOffsetFetch (v9+): None for a group of another kind."""
        group = self.groups.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return None
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            return ErrorCode.STALE_MEMBER_EPOCH
        return None

    # ListGroups and DeleteGroups: mockbroker.coordinators.group_admin.GroupAdmin.

    def is_deletable(self, group: StreamsGroup) -> bool:
        return group.state is StreamsGroupState.EMPTY

    def delete_empty_group(self, group: StreamsGroup, now_ms: int) -> None:
        """The group goes with its offsets."""
        deleted = self.offsets.delete_group(group.group_id)
        self.remove_group(group, now_ms, "DeleteGroups", offsets_deleted=deleted)

    # -- control entry points (mockbroker.control) -----------------------------------------------------

    def expire_member_session(self, group_id: str, member_id: str, now_ms: int, accepted: Callable[[], None] | None = None) -> None:
        """Expire a member's session now, as if group.streams.session.timeout.ms had passed
        without a heartbeat: the session-timeout fencing path itself (``streams_group.member_fenced``,
        cause ``session_timeout``). ValueError for an unknown member; ``accepted`` runs once the
        checks passed, before any effect."""
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            raise ValueError(f"streams group {group_id!r} has no member {member_id!r}")
        if accepted is not None:
            accepted()
        self.streams_group_fence_member_operation(
            group_id, member_id, now_ms,
            f"the member session expired ({self.services.group_config(group_id).streams_session_timeout_ms} ms "
            "without a heartbeat; "
            "expired now by the control API)",
            "session_timeout",
        )  # fmt: skip

    def force_rebalance(self, group_id: str, now_ms: int, reason: str, accepted: Callable[[], None] | None = None) -> None:
        """Bump the group epoch and compute a new target assignment now, as a change of the
        topology's topics would; every member reconciles to the new epoch at its next heartbeat.
        ValueError for an unknown or empty group."""
        group = self.groups.get(group_id)
        if group is None:
            raise ValueError(f"no streams group {group_id!r}")
        if not group.members:
            raise ValueError(f"streams group {group_id} is Empty; there is nothing to rebalance")
        if accepted is not None:
            accepted()
        self._bump_group_epoch(group, now_ms, reason)
        self._update_target_assignment(group, now_ms)
        self.update_state(group, now_ms, reason)

    # -- introspection -------------------------------------------------------------------------------

    def snapshot(self, group_id: str) -> dict[str, Any] | None:
        """A streams group as plain data, for the control API and tests: state, epochs, topology,
        and each member's epoch, state, current, pending and target tasks."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        configured = group.configured_topology

        def tasks(t: TasksTuple) -> dict[str, dict[str, list[int]]]:
            return {"active": by_subtopology(t.active), "standby": by_subtopology(t.standby), "warmup": by_subtopology(t.warmup)}

        return {
            "group_id": group.group_id,
            "group_type": GROUP_TYPE_STREAMS,
            "protocol_type": group.protocol_type,
            "state": group.state.value,
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "topology_epoch": None if group.topology is None else group.topology.topology_epoch,
            "validated_topology_epoch": group.validated_topology_epoch,
            "subtopologies": {} if configured is None or configured.subtopologies is None else {
                sid: c.number_of_tasks for sid, c in configured.subtopologies.items()
            },
            "topology_status": None if configured is None or configured.error is None else {
                "status": configured.error.status.name, "detail": configured.error.message,
            },
            "shutdown_requested_by": group.shutdown_request_member_id,
            "members": [
                {
                    "member_id": m.member_id,
                    "process_id": m.process_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_epoch": m.member_epoch,
                    "previous_member_epoch": m.previous_member_epoch,
                    "state": m.state.value,
                    "topology_epoch": m.topology_epoch,
                    "user_endpoint": None if m.user_endpoint is None else f"{m.user_endpoint.host}:{m.user_endpoint.port}",
                    "assigned": tasks(m.assigned),
                    "pending_revocation": tasks(m.pending_revocation),
                    "target": tasks(group.target_assignment.get(m.member_id, EMPTY_TASKS)),
                }
                for m in group.members.values()
            ],
        }  # fmt: skip
