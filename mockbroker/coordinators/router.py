"""The group coordinator's one entry: ``GroupCoordinator`` routes every group request by group type.

Kafka's GroupCoordinatorService (the entry the request handlers call) and GroupCoordinatorShard
(the periodic cleanup) over GroupMetadataManager and OffsetMetadataManager. ``MockCluster.groups``
is this object; the handlers (mockbroker/handlers/*group*.py, offset_*.py) and the control API
talk to it only. A group id names a classic group (``classic.groups``) or a KIP-848 consumer
group (``consumer.groups``), never both, so each request goes to one kind:

- JoinGroup, SyncGroup, Heartbeat, LeaveGroup: the classic coordinator, or the migration package
  when the id is a non-empty consumer group (classic members inside a consumer group, §10.8).
  Heartbeat is the hot path: handlers/heartbeat.py calls ``classic.heartbeat`` itself (no extra
  call, and a method CPython specializes; a bound method stored on this object costs a heartbeat
  ~300 instructions more, bench/heartbeat_cost.py), and the classic coordinator hands an id it
  does not know to the hook wired here (``_heartbeat_other_kind``). ``heartbeat`` below is the
  same entry for everyone else.
- ConsumerGroupHeartbeat, ConsumerGroupDescribe: the consumer coordinator (``consumer``).
- ShareGroupHeartbeat, ShareGroupDescribe: the share coordinator (``share``, KIP-932). A share
  group's id is refused to the other kinds' requests (GROUP_ID_NOT_FOUND, as Kafka: no conversion
  between share groups and the others).
- OffsetCommit: the kind's own validation, then the shared offsets manager; OffsetFetch,
  OffsetDelete, DescribeGroups, ListGroups, DeleteGroups and the cleanup cycle span kinds here.

How the parts are wired (no part imports one that imports it back): ``CoordinatorServices``
(settings, timers on the cluster clock, events) is shared; ``OffsetMetadataManager`` is given to
both kinds; ``MixedGroups`` (migration/) is given the classic and consumer coordinators and is
handed to the consumer coordinator as its ``OnlineMigration`` (a Protocol the consumer package
declares). The error style is the package's (mockbroker/coordinators/__init__.py): nothing
here raises ``GroupError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mockbroker.config.groups import GroupConfig
from mockbroker.coordinators.classic.coordinator import ClassicGroupCoordinator, join_rebalance_timeout_ms
from mockbroker.coordinators.classic.group import DEAD, EMPTY, ClassicGroup
from mockbroker.coordinators.consumer.coordinator import ConsumerGroupCoordinator, TopicFilter, TopicView
from mockbroker.coordinators.consumer.group import ConsumerGroup
from mockbroker.coordinators.migration.mixed import MixedGroups
from mockbroker.coordinators.offsets.manager import (
    OffsetMetadataManager,
    TransactionalTopics,
    rejected_commit,
)
from mockbroker.coordinators.offsets.store import OffsetStore
from mockbroker.coordinators.parked import Parked
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.coordinators.share.coordinator import ShareGroupCoordinator
from mockbroker.coordinators.share.group import ShareGroup
from mockbroker.coordinators.share.manager import SharePartitionManager
from mockbroker.coordinators.share.offsets import ShareGroupOffsets
from mockbroker.coordinators.streams.coordinator import StreamsGroupCoordinator, StreamsGroupHeartbeatResult
from mockbroker.coordinators.streams.group import StreamsGroup
from mockbroker.events import EventLog
from mockbroker.timers import Timers
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_describe import DescribedGroup as ConsumerDescribedGroup
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from mockbroker_protocol.messages.describe_groups import DescribedGroup
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupResponse
from mockbroker_protocol.messages.leave_group import MemberIdentity, MemberResponse
from mockbroker_protocol.messages.list_groups import ListedGroup
from mockbroker_protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponseTopic
from mockbroker_protocol.messages.offset_delete import OffsetDeleteResponseTopic
from mockbroker_protocol.messages.offset_fetch import OffsetFetchResponseGroup
from mockbroker_protocol.messages.share_group_describe import DescribedGroup as ShareDescribedGroup
from mockbroker_protocol.messages.share_group_heartbeat import (
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from mockbroker_protocol.messages.streams_group_describe import DescribedGroup as StreamsDescribedGroup
from mockbroker_protocol.messages.streams_group_heartbeat import (
    StreamsGroupHeartbeatRequest,
    StreamsGroupHeartbeatResponse,
)
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupResponse

if TYPE_CHECKING:
    from mockbroker.coordinators.classic.assignment_checks import AssignmentChecks

KNOWN_GROUP_TYPES = frozenset({"classic", "consumer", "share", "streams"})  # Group.GroupType.parse
GROUP_EXPIRATION_KEY = ("group-metadata-expiration",)  # GroupCoordinatorShard.GROUP_EXPIRATION_KEY
CLEANUP_REASON = "empty group with no offsets left, removed by the cleanup cycle"


class GroupCoordinator:
    """Every group of the cluster, of every kind, and their committed offsets."""

    def __init__(
        self,
        config: GroupConfig,
        timers: Timers,
        events: EventLog,
        *,
        broker_of: Callable[[str], int] | None = None,
        new_uuid: Callable[[], str] | None = None,
        on_internal_error: Callable[[BaseException], None] | None = None,
        assignment_checks: AssignmentChecks | None = None,
        topics: Mapping[str, TopicView] | None = None,
    ) -> None:
        self.services = CoordinatorServices(
            config, timers, events, broker_of=broker_of, on_internal_error=on_internal_error
        )
        self.offset_manager = OffsetMetadataManager(self.services)
        self.classic = ClassicGroupCoordinator(
            self.services, self.offset_manager, new_uuid=new_uuid, assignment_checks=assignment_checks
        )
        # KIP-848 consumer groups (§10); ``topics`` is the cluster's topic map, which they read
        # for subscriptions, regexes and topic ids.
        self.consumer = ConsumerGroupCoordinator(self.services, self.offset_manager, topics if topics is not None else {})
        self.migration = MixedGroups(self.classic, self.consumer)
        # KIP-932 share groups: their own id space within the one the kinds share.
        self.share = ShareGroupCoordinator(self.services, topics if topics is not None else {})
        self.share.other_kind = lambda group_id: group_id in self.classic.groups or group_id in self.consumer.groups
        # Share partitions and share sessions (ShareFetch, ShareAcknowledge).
        self.share_partitions = SharePartitionManager(self.services)
        self.share.on_member_removed = self.share_partitions.on_member_left
        self.share.on_group_deleted = self.share_partitions.on_group_deleted
        # Describe/Alter/DeleteShareGroupOffsets.
        self.share_offsets = ShareGroupOffsets(self.share, self.share_partitions, topics if topics is not None else {})
        self.consumer.migration = self.migration
        self.classic.heartbeat_other_kind = self._heartbeat_other_kind
        # KIP-1071 streams groups; they ask the router about ids of the other kinds.
        self.streams = StreamsGroupCoordinator(self.services, self.offset_manager, topics if topics is not None else {})
        self.streams.other_groups = self

    # -- what the handlers, the control API and tests read -------------------------------------------

    @property
    def config(self) -> GroupConfig:
        return self.services.config

    @property
    def timers(self) -> Timers:
        return self.services.timers

    @property
    def events(self) -> EventLog:
        return self.services.events

    @property
    def groups(self) -> dict[str, ClassicGroup]:
        """The classic groups by id (the consumer groups are ``consumer.groups``)."""
        return self.classic.groups

    @property
    def offsets(self) -> OffsetStore:
        """The committed offsets of every group."""
        return self.offset_manager.store

    @property
    def assignment_checks(self) -> AssignmentChecks | None:
        return self.classic.assignment_checks

    def find_group(self, group_id: str) -> ClassicGroup | ConsumerGroup | StreamsGroup | None:
        """The group named ``group_id``, classic, consumer (KIP-848) or streams (KIP-1071), or None
        (share groups: ``share.groups``)."""
        return self.classic.groups.get(group_id) or self.consumer.groups.get(group_id) or self.streams.groups.get(group_id)

    def snapshot(self, group_id: str) -> dict[str, Any] | None:
        """A consumer or streams group as plain data (ConsumerGroupCoordinator.snapshot,
        StreamsGroupCoordinator.snapshot); None for a classic, share or unknown group (a share
        group's: ``share.snapshot``)."""
        return self.consumer.snapshot(group_id) or self.streams.snapshot(group_id)

    # -- what the streams coordinator asks of the other kinds (streams.coordinator.OtherGroups) ------

    def other_kind(self, group_id: str) -> str | None:
        """The kind of the non-streams group ``group_id`` names, or None."""
        classic = self.classic.groups.get(group_id)
        if classic is not None and classic.state is not DEAD:
            return "classic"
        if group_id in self.consumer.groups:
            return "consumer"
        if group_id in self.share.groups:
            return "share"
        return None

    def replace_empty_classic_group(self, group_id: str, now_ms: int) -> bool:
        """maybeDeleteEmptyClassicGroup: an empty classic group makes way for a streams group."""
        classic = self.classic.groups.get(group_id)
        if classic is None or classic.state is not EMPTY:
            return False
        self.classic.remove_group(classic, now_ms, "replaced by a streams group (StreamsGroupHeartbeat)")
        return True

    def _share_group(self, group_id: str) -> ShareGroup | None:
        return self.share.groups.get(group_id)

    # -- JoinGroup, SyncGroup, Heartbeat, LeaveGroup (§3-§6, §10.8) ----------------------------------

    def check_join_request(self, request: JoinGroupRequest) -> ErrorCode | None:
        """Checks made before the group is looked up (and before NOT_COORDINATOR), §3.2."""
        return self.classic.check_join_request(request)

    def join_group(
        self, now_ms: int, request: JoinGroupRequest, *, api_version: int, client_id: str, client_host: str
    ) -> JoinGroupResponse | Parked[JoinGroupResponse]:
        """GroupCoordinatorService.joinGroup: a non-empty consumer group takes the classic member
        (§10.8); an empty one is replaced by a classic group, as in Kafka."""
        error = self.classic.check_join_request(request)
        if error is not None:
            return JoinGroupResponse(error_code=error, member_id=request.member_id)
        if self._share_group(request.group_id) is not None:  # getOrMaybeCreateClassicGroup
            return JoinGroupResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND, member_id=request.member_id)
        streams_group = self.streams.groups.get(request.group_id)
        if streams_group is not None:
            # GroupMetadataManager.getOrMaybeCreateClassicGroup: an empty streams group makes way
            # (maybeDeleteEmptyStreamsGroup); a live one is not a classic group.
            if not streams_group.is_empty():
                return JoinGroupResponse(error_code=ErrorCode.GROUP_ID_NOT_FOUND, member_id=request.member_id)
            self.streams.remove_group(streams_group, now_ms, "replaced by a classic group (JoinGroup)")
        consumer_group = self.consumer.groups.get(request.group_id)
        if consumer_group is not None:
            if not consumer_group.is_empty():
                return self.migration.classic_group_join_to_consumer_group(
                    now_ms, consumer_group, request, api_version=api_version,
                    rebalance_timeout_ms=join_rebalance_timeout_ms(request, api_version),
                    client_id=client_id, client_host=client_host,
                )  # fmt: skip
            self.consumer.remove_group(consumer_group, now_ms, "replaced by a classic group (JoinGroup)")
        return self.classic.join_group(now_ms, request, api_version=api_version, client_id=client_id, client_host=client_host)

    def check_sync_request(self, request: SyncGroupRequest, api_version: int) -> ErrorCode | None:
        """Checks made before the group is looked up (and before NOT_COORDINATOR), §4.1."""
        return self.classic.check_sync_request(request, api_version)

    def sync_group(
        self, now_ms: int, request: SyncGroupRequest, *, api_version: int
    ) -> SyncGroupResponse | Parked[SyncGroupResponse]:
        """GroupCoordinatorService.syncGroup, by group type."""
        error = self.classic.check_sync_request(request, api_version)
        if error is not None:
            return SyncGroupResponse(error_code=error)
        consumer_group = self.consumer.groups.get(request.group_id)
        if consumer_group is not None and not consumer_group.is_empty():  # §10.8
            return self.migration.classic_group_sync_to_consumer_group(now_ms, consumer_group, request)
        return self.classic.sync_group(now_ms, request, api_version=api_version)

    def heartbeat(
        self, now_ms: int, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None = None
    ) -> ErrorCode:
        """GroupCoordinatorService.heartbeat: ClassicGroupCoordinator.heartbeat, which hands an id
        that is no classic group back to ``_heartbeat_other_kind`` (the handler calls it directly)."""
        return self.classic.heartbeat(now_ms, group_id, member_id, generation_id, group_instance_id)

    def _heartbeat_other_kind(
        self, now_ms: int, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None
    ) -> ErrorCode:
        """A classic Heartbeat for an id that is no classic group (ClassicGroupCoordinator.heartbeat)."""
        consumer_group = self.consumer.groups.get(group_id)
        if consumer_group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return self.migration.classic_group_heartbeat_to_consumer_group(
            now_ms, consumer_group, member_id, generation_id, group_instance_id
        )

    def leave_group(
        self, now_ms: int, group_id: str, members: Iterable[MemberIdentity]
    ) -> tuple[ErrorCode, list[MemberResponse]]:
        """GroupCoordinatorService.leaveGroup: (top-level error, one answer per identity)."""
        if group_id:
            consumer_group = self.consumer.groups.get(group_id)
            if consumer_group is not None:  # classic members inside a consumer group (§10.8)
                return ErrorCode.NONE, self.migration.classic_group_leave_to_consumer_group(now_ms, consumer_group, members)
        return self.classic.leave_group(now_ms, group_id, members)

    # -- ConsumerGroupHeartbeat, ConsumerGroupDescribe (§10) ------------------------------------------

    def check_consumer_group_heartbeat_request(
        self, request: ConsumerGroupHeartbeatRequest, api_version: int
    ) -> ConsumerGroupHeartbeatResponse | None:
        """The checks made before NOT_COORDINATOR (§10.1): the error answer, or None."""
        return self.consumer.check_heartbeat_request(request, api_version)

    def consumer_group_heartbeat(
        self, now_ms: int, request: ConsumerGroupHeartbeatRequest, *, api_version: int, client_id: str, client_host: str,
        describable: TopicFilter | None = None,
    ) -> ConsumerGroupHeartbeatResponse:  # fmt: skip
        """GroupCoordinatorService.consumerGroupHeartbeat (an epoch-0 join may upgrade a classic
        group, a leave downgrade the group: the consumer coordinator asks ``migration``)."""
        if request.group_id in self.streams.groups or self._share_group(request.group_id) is not None:
            # getOrMaybeCreateConsumerGroup: another kind's group id is not a consumer group.
            refused = self.consumer.check_heartbeat_request(request, api_version)
            if refused is not None:
                return refused
            return ConsumerGroupHeartbeatResponse(
                error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=f"Group {request.group_id} is not a consumer group."
            )
        return self.consumer.consumer_group_heartbeat(
            now_ms, request, api_version=api_version, client_id=client_id, client_host=client_host, describable=describable
        )

    def consumer_group_describe(self, group_id: str) -> ConsumerDescribedGroup:
        """GroupCoordinatorService.consumerGroupDescribe for one group id."""
        return self.consumer.consumer_group_describe(group_id)

    # -- StreamsGroupHeartbeat, StreamsGroupDescribe (KIP-1071) --------------------------------------

    def check_streams_group_heartbeat_request(self, request: StreamsGroupHeartbeatRequest) -> StreamsGroupHeartbeatResponse | None:
        """The checks made before NOT_COORDINATOR: the error answer, or None."""
        return self.streams.check_heartbeat_request(request)

    def streams_group_heartbeat(
        self, now_ms: int, request: StreamsGroupHeartbeatRequest, *, client_id: str, client_host: str
    ) -> StreamsGroupHeartbeatResult:
        """GroupCoordinatorService.streamsGroupHeartbeat: the answer and the internal topics to create."""
        return self.streams.streams_group_heartbeat(now_ms, request, client_id=client_id, client_host=client_host)

    def streams_group_describe(self, group_id: str) -> StreamsDescribedGroup:
        """GroupCoordinatorService.streamsGroupDescribe for one group id."""
        return self.streams.streams_group_describe(group_id)
    # -- ShareGroupHeartbeat, ShareGroupDescribe (KIP-932) --------------------------------------------

    def check_share_group_heartbeat_request(self, request: ShareGroupHeartbeatRequest) -> ShareGroupHeartbeatResponse | None:
        """The checks made before NOT_COORDINATOR: the INVALID_REQUEST answer, or None."""
        return self.share.check_heartbeat_request(request)

    def share_group_heartbeat(
        self, now_ms: int, request: ShareGroupHeartbeatRequest, *, client_id: str, client_host: str
    ) -> ShareGroupHeartbeatResponse:
        """GroupCoordinatorService.shareGroupHeartbeat."""
        return self.share.share_group_heartbeat(now_ms, request, client_id=client_id, client_host=client_host)

    def share_group_describe(self, group_id: str) -> ShareDescribedGroup:
        """GroupCoordinatorService.shareGroupDescribe for one group id."""
        return self.share.share_group_describe(group_id)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        """OffsetFetch v9+ member checks: a consumer or streams group's (validateOffsetFetch);
        None for a classic or unknown group, which check nothing."""
        if group_id in self.streams.groups:
            return self.streams.validate_offset_fetch(group_id, member_id, member_epoch)
        return self.consumer.validate_offset_fetch(group_id, member_id, member_epoch)

    def expire_member_session(
        self, group_id: str, member_id: str, now_ms: int, accepted: Callable[[], None] | None = None
    ) -> None:
        """A classic member's session expires now (ClassicGroupCoordinator.expire_member_session)."""
        self.classic.expire_member_session(group_id, member_id, now_ms, accepted)

    def force_rebalance(self, group_id: str, now_ms: int, reason: str, accepted: Callable[[], None] | None = None) -> None:
        """A classic group rebalances now (ClassicGroupCoordinator.force_rebalance)."""
        self.classic.force_rebalance(group_id, now_ms, reason, accepted)

    # -- offsets (§8.1-§8.4) --------------------------------------------------------------------------

    def commit_offsets(
        self, now_ms: int, request: OffsetCommitRequest, *, api_version: int
    ) -> list[OffsetCommitResponseTopic]:
        """GroupCoordinatorService.commitOffsets: validated by the group's kind, stored by the
        offsets manager. A share group commits nothing (ShareGroup.validateOffsetCommit:
        GROUP_ID_NOT_FOUND on every partition)."""
        if self._share_group(request.group_id) is not None:
            return rejected_commit(request, ErrorCode.GROUP_ID_NOT_FOUND)
        consumer_group = self.consumer.groups.get(request.group_id)
        if consumer_group is not None:
            return self.consumer.commit_offsets(now_ms, consumer_group, request, api_version=api_version)
        streams_group = self.streams.groups.get(request.group_id)
        if streams_group is not None:
            return self.streams.commit_offsets(now_ms, streams_group, request, api_version=api_version)
        return self.classic.commit_offsets(now_ms, request, api_version=api_version)

    def commit_transactional_offsets(
        self, now_ms: int, group_id: str, producer_id: int, topics: TransactionalTopics, *, generation_id: int = -1,
        member_id: str = "", group_instance_id: str | None = None,
    ) -> ErrorCode | dict[tuple[str, int], ErrorCode]:  # fmt: skip
        """TxnOffsetCommit, by the kind of the group (a consumer group's, or a classic group's
        ClassicGroupCoordinator.commit_transactional_offsets)."""
        consumer_group = self.consumer.groups.get(group_id)
        if consumer_group is not None:
            return self.consumer.commit_transactional_offsets(
                now_ms, consumer_group, producer_id, topics, generation_id=generation_id, member_id=member_id,
                group_instance_id=group_instance_id,
            )  # fmt: skip
        streams_group = self.streams.groups.get(group_id)
        if streams_group is not None:
            return self.streams.commit_transactional_offsets(
                now_ms, streams_group, producer_id, topics, generation_id=generation_id, member_id=member_id,
                group_instance_id=group_instance_id,
            )  # fmt: skip
        return self.classic.commit_transactional_offsets(
            now_ms, group_id, producer_id, topics, generation_id=generation_id, member_id=member_id,
            group_instance_id=group_instance_id,
        )  # fmt: skip

    def complete_transaction(self, now_ms: int, producer_id: int, commit: bool) -> None:
        """The transaction marker for ``producer_id`` reached the offsets partitions."""
        self.offset_manager.complete_transaction(now_ms, producer_id, commit)

    def fetch_offsets(
        self, group_id: str, topics: list[tuple[str, list[int]]] | None, *, require_stable: bool = False
    ) -> OffsetFetchResponseGroup:
        """OffsetMetadataManager.fetchOffsets / fetchAllOffsets: an unknown or Dead group answers
        -1 everywhere with no error; classic groups check no member or generation."""
        group = self.classic.groups.get(group_id)
        known = (group is not None and group.state is not DEAD) or group_id in self.consumer.groups or group_id in self.streams.groups
        return self.offset_manager.fetch_offsets(group_id, topics, known=known, require_stable=require_stable)

    def delete_offsets(
        self, now_ms: int, group_id: str, topics: list[tuple[str, list[int]]]
    ) -> tuple[ErrorCode, list[OffsetDeleteResponseTopic]]:
        """OffsetMetadataManager.deleteOffsets for the partitions that passed the broker-level checks."""
        if not group_id:
            return ErrorCode.INVALID_GROUP_ID, []
        group: ClassicGroup | ConsumerGroup | StreamsGroup | None = self.classic.groups.get(group_id)
        if group is None:
            # KIP-848 and KIP-1071 groups: no group-level restriction (§8.4)
            group = self.consumer.groups.get(group_id) or self.streams.groups.get(group_id)
        elif group.state is DEAD:
            group = None
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        if isinstance(group, ClassicGroup):
            error = self.classic.check_offset_delete(group)
            if error is not None:
                return error, []
        return ErrorCode.NONE, self.offset_manager.delete_offsets(now_ms, group, topics)

    # -- DescribeGroups, ListGroups, DeleteGroups (§8.5-§8.7) -----------------------------------------

    def describe_group(self, group_id: str) -> DescribedGroup | None:
        """DescribeGroups for one classic group; None when there is none (the handler shapes
        Kafka's "Dead" placeholder or GROUP_ID_NOT_FOUND by version)."""
        return self.classic.describe_group(group_id)

    def list_groups(
        self, states_filter: Iterable[str] = (), types_filter: Iterable[str] = (), *, include: Callable[[str], bool] | None = None
    ) -> list[ListedGroup]:
        """GroupMetadataManager.listGroups: states match case-insensitively after trimming; types
        case-insensitively, an unknown type matching nothing. ``include`` picks the groups of one
        broker's partitions."""
        states = {s.strip().lower() for s in states_filter}
        types = {t.lower() if t.lower() in KNOWN_GROUP_TYPES else "unknown" for t in types_filter}
        return (
            self.classic.list_groups(states, types, include)
            + self.consumer.list_groups(states, types, include)
            + self.streams.list_groups(states, types, include)
            + self.share.list_groups(states, types, include)
        )

    def delete_group(self, now_ms: int, group_id: str) -> ErrorCode:
        """GroupCoordinatorShard.deleteGroups for one group: only an Empty group goes, with every
        committed and pending offset (§8.7, §10.7)."""
        if group_id in self.consumer.groups:
            return self.consumer.delete_group(now_ms, group_id)
        if group_id in self.streams.groups:
            return self.streams.delete_group(now_ms, group_id)
        if group_id in self.share.groups:
            return self.share.delete_group(now_ms, group_id)
        return self.classic.delete_group(now_ms, group_id)

    # -- the cleanup cycle (§8.2) ---------------------------------------------------------------------

    def start(self, now_ms: int) -> None:
        """Arm the periodic offset expiry and empty-group cleanup (§8.2)."""
        self.services.schedule(
            GROUP_EXPIRATION_KEY, now_ms + self.config.offsets_retention_check_interval_ms, self.cleanup_group_metadata
        )

    def cleanup_group_metadata(self, now_ms: int) -> None:
        """GroupCoordinatorShard.cleanupGroupMetadata, every offsets.retention.check.interval.ms:
        expired offsets go, then every Empty group left without offsets."""
        for classic in list(self.classic.groups.values()):
            if self.offset_manager.cleanup_expired_offsets(classic, now_ms) and classic.state is EMPTY:
                self.classic.remove_group(classic, now_ms, CLEANUP_REASON)
        for consumer in list(self.consumer.groups.values()):
            if self.offset_manager.cleanup_expired_offsets(consumer, now_ms) and consumer.is_empty():
                self.consumer.remove_group(consumer, now_ms, CLEANUP_REASON)
        for streams in list(self.streams.groups.values()):
            if self.offset_manager.cleanup_expired_offsets(streams, now_ms) and streams.is_empty():
                self.streams.remove_group(streams, now_ms, CLEANUP_REASON)
        self.start(now_ms)

    def on_topic_deleted(self, topic: str, now_ms: int) -> None:
        """OffsetMetadataManager.onPartitionsDeleted: a deleted topic's offsets go with it."""
        self.offset_manager.on_partitions_deleted(topic, now_ms, self.find_group)
