"""A classic group's side of the offset and admin APIs (kafka-group-semantics §8): OffsetCommit and
TxnOffsetCommit validation (ClassicGroup.validateOffsetCommit, simple groups), OffsetDelete's
group check, DescribeGroups, ListGroups and DeleteGroups. Storing offsets is the offsets package's.
"""

from __future__ import annotations

from collections.abc import Callable

from mockbroker.coordinators.classic.base import (
    ClassicCoordinatorBase,
    raise_if,
)
from mockbroker.coordinators.classic.group import (
    COMPLETING_REBALANCE,
    DEAD,
    EMPTY,
    GROUP_TYPE_CLASSIC,
    PREPARING_REBALANCE,
    STABLE,
    ClassicGroup,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.offsets.manager import (
    TransactionalTopics,
    partition_list,
    rejected_commit,
)
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_groups import DescribedGroup, DescribedGroupMember
from mockbroker_protocol.messages.list_groups import ListedGroup
from mockbroker_protocol.messages.offset_commit import OffsetCommitRequest, OffsetCommitResponseTopic

OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION = 9  # OffsetMetadataManager.validateOffsetCommit


class OffsetAndAdminRules(ClassicCoordinatorBase):
    """OffsetCommit, TxnOffsetCommit, OffsetDelete, DescribeGroups, ListGroups, DeleteGroups."""

    # -- OffsetCommit and TxnOffsetCommit to a classic group (§8.1) -----------------------------------

    def commit_offsets(
        self, now_ms: int, request: OffsetCommitRequest, *, api_version: int
    ) -> list[OffsetCommitResponseTopic]:
        """OffsetMetadataManager.commitOffset for a classic group (or none yet: a simple group),
        for the partitions that passed the broker-level checks (request.topics, by name); a
        group-level error goes on every partition."""
        generation = request.generation_id_or_member_epoch
        try:
            group = self._get_or_maybe_create_group_for_commit(now_ms, request.group_id, generation, api_version)
            self._validate_offset_commit(group, request.member_id, request.group_instance_id, generation, transactional=False)
        except GroupError as exc:
            self.offsets.record_rejected_commit(
                self.groups.get(request.group_id) or request.group_id, now_ms, request.member_id, exc.code, generation,
                partition_list(request.topics),
            )  # fmt: skip
            return rejected_commit(request, exc.code)
        if group.state in (STABLE, PREPARING_REBALANCE):
            # A commit keeps a classic member's session alive (§5).
            self._reschedule_classic_group_member_heartbeat(group, group.members[request.member_id], now_ms)
        return self.offsets.store_offsets(
            now_ms, group, request, {},
            reason="simple commit (generation -1)" if generation < 0 else "member commit", request_generation_id=generation,
        )  # fmt: skip

    def _get_or_maybe_create_group_for_commit(
        self, now_ms: int, group_id: str, generation: int, api_version: int
    ) -> ClassicGroup:
        """An unknown group is created by a commit with generation -1: a "simple group" of admin
        clients and manual-assignment consumers (§2, §8.1); other commits to it are refused."""
        group = self.groups.get(group_id)
        if group is not None:
            return group
        if generation < 0:
            return self._create_group(group_id, now_ms, "OffsetCommit with generation -1 (simple group)")
        if api_version >= OFFSET_COMMIT_GROUP_ID_NOT_FOUND_MIN_VERSION:
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Group {group_id} not found (generation {generation}).")

    def _validate_offset_commit(
        self,
        group: ClassicGroup,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        *,
        transactional: bool,
    ) -> None:
        """ClassicGroup.validateOffsetCommit (§8.1 "Classic group exists"): raises GroupError."""
        if group.state is DEAD:
            raise GroupError(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"Group {group.group_id} is Dead.")
        if generation_id < 0 and group.state is EMPTY:
            return  # a simple or admin commit to an empty group
        if generation_id >= 0 or member_id or group_instance_id is not None:
            raise_if(group.validate_member(member_id, group_instance_id), f"member {member_id} is refused")
            if generation_id != group.generation_id:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Generation {generation_id} is not {group.generation_id}.")
        elif not transactional and group.state is not EMPTY:
            # Manual-assignment clients sharing a group id with an active group (§8.1 rule 4).
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Group {group.group_id} is not empty.")
        if not transactional and group.state is COMPLETING_REBALANCE:
            raise GroupError(ErrorCode.REBALANCE_IN_PROGRESS, f"Group {group.group_id} is rebalancing.")

    def commit_transactional_offsets(
        self,
        now_ms: int,
        group_id: str,
        producer_id: int,
        topics: TransactionalTopics,
        *,
        generation_id: int = -1,
        member_id: str = "",
        group_instance_id: str | None = None,
    ) -> ErrorCode | dict[tuple[str, int], ErrorCode]:
        """OffsetMetadataManager.commitTransactionalOffset: pending until the transaction
        completes. A group-level error, or the error of each partition. (TxnOffsetCommit is not
        served yet: transactions are not.)"""
        group = self.groups.get(group_id)
        try:
            if group is None:
                if generation_id >= 0:
                    raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Group {group_id} not found.")
                group = self._create_group(group_id, now_ms, "TxnOffsetCommit with generation -1 (simple group)")
            self._validate_offset_commit(group, member_id, group_instance_id, generation_id, transactional=True)
        except GroupError as exc:
            return exc.code
        return self.offsets.store_pending_offsets(now_ms, group_id, producer_id, topics)

    # -- OffsetDelete, DescribeGroups, ListGroups, DeleteGroups (§8.4-§8.7) ---------------------------

    def check_offset_delete(self, group: ClassicGroup) -> ErrorCode | None:
        """ClassicGroup.validateDeleteGroup's OffsetDelete side: a group using its own embedded
        protocol (not ``consumer``) that has members cannot have offsets deleted (§8.4)."""
        if group.state in (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE) and not group.uses_consumer_protocol():
            return ErrorCode.NON_EMPTY_GROUP
        return None

    def describe_group(self, group_id: str) -> DescribedGroup | None:
        """GroupMetadataManager.describeGroups for one group; None when it does not exist (the
        handler shapes Kafka's "Dead" placeholder or GROUP_ID_NOT_FOUND by version)."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        stable = group.state is STABLE
        return DescribedGroup(
            error_code=ErrorCode.NONE,
            group_id=group_id,
            group_state=group.state.value,
            protocol_type=group.protocol_type or "",
            protocol_data=(group.protocol_name or "") if stable else "",
            members=[
                DescribedGroupMember(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    member_metadata=m.metadata(group.protocol_name) if stable else b"",
                    member_assignment=m.assignment,
                )
                for m in group.members.values()
            ],
        )

    def list_groups(self, states: set[str], types: set[str], include: Callable[[str], bool] | None) -> list[ListedGroup]:
        """ListGroups entries of the classic groups (type "classic", §8.6); ``states`` and
        ``types`` are lower-cased already (the router's)."""
        if types and GROUP_TYPE_CLASSIC not in types:
            return []
        return [
            ListedGroup(group.group_id, group.protocol_type or "", group.state.value, GROUP_TYPE_CLASSIC)
            for group in self.groups.values()
            if (include is None or include(group.group_id)) and (not states or group.state.value.lower() in states)
        ]

    def delete_group(self, now_ms: int, group_id: str) -> ErrorCode:
        """GroupCoordinatorShard.deleteGroups for one classic group: only an Empty group goes,
        with every committed and pending offset (§8.7)."""
        group = self.groups.get(group_id)
        if group is None or group.state is DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.state is not EMPTY:
            return ErrorCode.NON_EMPTY_GROUP
        deleted = self.offsets.delete_group(group_id)
        self._delete(group, now_ms, "DeleteGroups", offsets_deleted=deleted)
        return ErrorCode.NONE

    def remove_group(self, group: ClassicGroup, now_ms: int, reason: str) -> None:
        """A classic group goes (the cleanup cycle found it Empty with no offsets left)."""
        self._delete(group, now_ms, reason)

