"""A consumer group's side of the describe, offset and admin APIs, the control API's entries, and
its snapshot (kafka-group-semantics §10.5-§10.7, §8): ConsumerGroupDescribe, OffsetCommit and
OffsetFetch member checks (ConsumerGroup.validateOffsetCommit / validateOffsetFetch), ListGroups,
DeleteGroups, session expiry and forced rebalances.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mockbroker.coordinators.consumer.base import (
    OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION,
    ConsumerCoordinatorBase,
)
from mockbroker.coordinators.consumer.group import (
    GROUP_TYPE_CONSUMER,
    MEMBER_TYPE_CLASSIC,
    MEMBER_TYPE_CONSUMER,
    ConsumerGroup,
    ConsumerGroupMember,
    ConsumerGroupState,
    TopicIdPartition,
    group_by_topic,
)
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.group_admin import GroupAdmin
from mockbroker.coordinators.offsets.manager import TransactionalTopics, partition_list, rejected_commit
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_describe import Assignment as DescribedAssignment
from mockbroker_protocol.messages.consumer_group_describe import DescribedGroup, Member, TopicPartitions
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitResponseTopic,
)

if TYPE_CHECKING:
    pass


log = logging.getLogger("mockbroker.groups")


class AdminRules(ConsumerCoordinatorBase, GroupAdmin[ConsumerGroup]):
    """ConsumerGroupDescribe, offsets, ListGroups, DeleteGroups, snapshot and control entries."""

    GROUP_TYPE = GROUP_TYPE_CONSUMER

    # -- ConsumerGroupDescribe (§10.5) ----------------------------------------------------------------

    def consumer_group_describe(self, group_id: str) -> DescribedGroup:
        """GroupMetadataManager.consumerGroupDescribe for one group id."""
        if not group_id:
            return DescribedGroup(error_code=ErrorCode.INVALID_GROUP_ID, error_message="Group id can not be empty.", group_id=group_id)
        group = self.groups.get(group_id)
        if group is None:
            message = (
                f"Group {group_id} is not a consumer group." if self.migration.is_classic_group(group_id)
                else f"Group {group_id} not found."
            )  # fmt: skip
            # Kafka 4.3 leaves the state empty for a group it does not know (not "Dead").
            return DescribedGroup(error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=message, group_id=group_id)
        return DescribedGroup(
            error_code=ErrorCode.NONE,
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=group.preferred_server_assignor() or self.default_assignor_name,
            members=[self._describe_member(group, m) for m in group.members.values()],
        )

    def _describe_member(self, group: ConsumerGroup, member: ConsumerGroupMember) -> Member:
        return Member(
            member_id=member.member_id,
            instance_id=member.instance_id,
            rack_id=member.rack_id,
            member_epoch=member.member_epoch,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=list(member.subscribed_topic_names),
            subscribed_topic_regex=member.subscribed_topic_regex or "",  # Kafka 4.3: "" without a regex
            assignment=self._described_assignment(member.assigned),
            target_assignment=self._described_assignment(group.target_assignment.get(member.member_id, frozenset())),
            member_type=MEMBER_TYPE_CLASSIC if member.uses_classic_protocol else MEMBER_TYPE_CONSUMER,
        )

    def _described_assignment(self, partitions: Iterable[TopicIdPartition]) -> DescribedAssignment:
        return DescribedAssignment(
            topic_partitions=[
                TopicPartitions(topic_id, self._topic_name(topic_id), parts)
                for topic_id, parts in group_by_topic(partitions).items()
            ]
        )

    # -- introspection -------------------------------------------------------------------------------

    def snapshot(self, group_id: str) -> dict[str, Any] | None:
        """A consumer group as plain data, for the control API and tests: type, state, epochs,
        assignor, and each member's epoch, state, current and target partitions (by topic name)."""
        group = self.groups.get(group_id)
        if group is None:
            return None
        return {
            "group_id": group.group_id,
            "group_type": GROUP_TYPE_CONSUMER,
            "protocol_type": group.protocol_type,
            "state": group.state.value,
            "group_epoch": group.group_epoch,
            "assignment_epoch": group.assignment_epoch,
            "assignor": group.assignor_name or group.preferred_server_assignor() or self.default_assignor_name,
            "subscribed_topics": {name: count for name, (_, count) in group.subscription_metadata.items()},
            # The group's regexes as last resolved (maybeUpdateRegularExpressions): {regex: topics}.
            "resolved_regexes": {pattern: sorted(names) for pattern, names in sorted(group.resolved_regexes.items())},
            "members": [
                {
                    "member_id": m.member_id,
                    "instance_id": m.instance_id,
                    "rack_id": m.rack_id,
                    "client_id": m.client_id,
                    "client_host": m.client_host,
                    "member_epoch": m.member_epoch,
                    "previous_member_epoch": m.previous_member_epoch,
                    "state": m.state.value,
                    "subscribed_topic_names": list(m.subscribed_topic_names),
                    "subscribed_topic_regex": m.subscribed_topic_regex,
                    "server_assignor": m.server_assignor_name,
                    "rebalance_timeout_ms": m.rebalance_timeout_ms,
                    "protocol": "classic" if m.uses_classic_protocol else "consumer",
                    "session_timeout_ms": None if m.classic is None else m.classic.session_timeout_ms,
                    "assigned": self.names(m.assigned),
                    "pending_revocation": self.names(m.pending_revocation),
                    "target": self.names(group.target_assignment.get(m.member_id, frozenset())),
                }
                for m in group.members.values()
            ],
        }

    # -- control entry points (mockbroker.control) -----------------------------------------------------

    def expire_member_session(
        self, group_id: str, member_id: str, now_ms: int, accepted: Callable[[], None] | None = None
    ) -> None:
        """Expire a member's session now, as if group.consumer.session.timeout.ms had passed
        without a heartbeat (§10.4): the session-timeout fencing path itself, so the member goes
        with its partitions (``consumer_group.member_fenced``, cause ``session_timeout``), the
        group epoch is bumped and the others are given its partitions. The client learns of it at
        its next heartbeat (UNKNOWN_MEMBER_ID) and rejoins with epoch 0. A static member at epoch
        -2 is removed for good, as its real expiry would. ValueError for an unknown member;
        ``accepted`` runs once the checks passed, before any effect."""
        group = self.groups.get(group_id)
        if group is None or member_id not in group.members:
            raise ValueError(f"consumer group {group_id!r} has no member {member_id!r}")
        if accepted is not None:
            accepted()
        self.consumer_group_fence_member_operation(
            group_id, member_id, now_ms,
            f"the member session expired ({self.services.group_config(group_id).consumer_session_timeout_ms} ms "
            "without a heartbeat; "
            "expired now by the control API)",
            "session_timeout",
        )  # fmt: skip

    def force_rebalance(
        self, group_id: str, now_ms: int, reason: str, accepted: Callable[[], None] | None = None
    ) -> str | None:
        """Make the group recompute its target assignment now, as Kafka does when something the
        assignment depends on changes (§10.2): the subscribed topics' metadata is refreshed, the
        group epoch is bumped, and the chosen assignor computes the target for the new epoch.
        Every member is then behind the assignment epoch (the group is Reconciling) and
        reconciles at its next heartbeat: it revokes what it lost before anyone else is given it
        (§10.3), and even a member whose partitions stay the same moves to the new member epoch.
        A deterministic assignor over unchanged members and topics computes the same target, so
        the visible effect is then the epoch bump alone.

        Returns None, or why the target could not be computed (a plugin assignor failed: the
        group stays Assigning and the next heartbeat tries again, answering UNKNOWN_SERVER_ERROR
        while it fails). ValueError for an unknown or empty group; ``accepted`` runs once the
        checks passed, before any effect."""
        group = self.groups.get(group_id)
        if group is None:
            raise ValueError(f"no consumer group {group_id!r}")
        if not group.members:
            raise ValueError(f"consumer group {group_id} is Empty; there is nothing to rebalance")
        if accepted is not None:
            accepted()
        self._maybe_update_subscription_metadata(group, now_ms)
        self._bump_group_epoch(group, now_ms, reason)
        failed: str | None = None
        try:
            self._update_target_assignment(group, now_ms)
        except GroupError as exc:
            failed = exc.message
        self.update_state(group, now_ms, reason)
        return failed

    # -- offsets and admin APIs (§8, §10.6, §10.7) -----------------------------------------------------

    def _validate_offset_commit(
        self, group: ConsumerGroup, member_id: str, member_epoch: int, api_version: int, partitions: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], ErrorCode]:
        """ConsumerGroup.validateOffsetCommit: GroupError for a group-level refusal; otherwise
        the per-partition errors of a commit with an older epoch (KIP-1251: each partition must
        have been given to the member at or before that epoch, and still be assigned or pending
        revocation)."""
        if member_epoch < 0 and not group.members:
            return {}  # an admin or manual-assignment commit to an empty group
        member = group.members.get(member_id)
        if member is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group.group_id}.")
        if member.uses_classic_protocol:
            # A classic member commits with its generation (= member epoch), at any version (§10.8).
            if member_epoch != member.member_epoch:
                raise GroupError(ErrorCode.ILLEGAL_GENERATION, f"Generation {member_epoch} is not {member.member_epoch}.")
            return {}
        if api_version < OFFSET_COMMIT_MEMBER_EPOCH_MIN_VERSION:
            raise GroupError(ErrorCode.UNSUPPORTED_VERSION, "A consumer-protocol member commits with OffsetCommit v9+.")
        if member_epoch > member.member_epoch:
            raise GroupError(ErrorCode.STALE_MEMBER_EPOCH, f"Member epoch {member_epoch} is ahead of {member.member_epoch}.")
        if member_epoch == member.member_epoch:
            return {}
        errors: dict[tuple[str, int], ErrorCode] = {}
        held = {**member.pending_revocation, **member.assigned}
        for topic, partition in partitions:
            known = self.topics.get(topic)
            given_at = None if known is None else held.get((known.topic_id, partition))
            if given_at is None or given_at > member_epoch:
                errors[(topic, partition)] = ErrorCode.STALE_MEMBER_EPOCH
        return errors

    def commit_offsets(self, now_ms: int, group: ConsumerGroup, request: OffsetCommitRequest, *, api_version: int) -> list[OffsetCommitResponseTopic]:
        """OffsetCommit to a consumer group: validated against member epochs, then stored."""
        epoch = request.generation_id_or_member_epoch
        requested = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
        try:
            partition_errors = self._validate_offset_commit(group, request.member_id, epoch, api_version, requested)
        except GroupError as exc:
            self.record(
                "offset.commit_rejected", group, now_ms, member_id=request.member_id or None, reason=exc.code.name,
                error=exc.code.name, request_generation_id=epoch, partitions=partition_list(request.topics),
            )  # fmt: skip
            return rejected_commit(request, exc.code)
        if partition_errors:
            self.record(
                "offset.commit_rejected", group, now_ms, member_id=request.member_id or None,
                reason=f"{ErrorCode.STALE_MEMBER_EPOCH.name} for partitions not held at epoch {epoch}",
                error=ErrorCode.STALE_MEMBER_EPOCH.name, request_generation_id=epoch,
                partitions=[f"{t}-{p}" for t, p in partition_errors],
            )  # fmt: skip
        return self.offsets.store_offsets(
            now_ms, group, request, partition_errors,
            reason="admin commit (epoch -1)" if epoch < 0 else "member commit", request_generation_id=epoch,
        )  # fmt: skip

    def commit_transactional_offsets(
        self, now_ms: int, group: ConsumerGroup, producer_id: int, topics: TransactionalTopics, *,
        generation_id: int, member_id: str, group_instance_id: str | None,
    ) -> ErrorCode | dict[tuple[str, int], ErrorCode]:  # fmt: skip
        """TxnOffsetCommit to a consumer group: ConsumerGroup.validateOffsetCommit with
        isTransactional (KIP-447: a commit naming no member, generation or instance is not
        checked; one naming a member must be that member at its current epoch), then the
        offsets are pending until the transaction completes. A group-level error, or the error of
        each partition."""
        unchecked = generation_id < 0 and not group.members
        anonymous = generation_id == -1 and member_id == "" and group_instance_id is None
        if not (unchecked or anonymous):
            member = group.members.get(member_id)
            if member is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if generation_id != member.member_epoch:
                # ConsumerGroup.validateMemberEpoch: classic members get the classic error.
                return ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol else ErrorCode.STALE_MEMBER_EPOCH
        return self.offsets.store_pending_offsets(now_ms, group.group_id, producer_id, topics)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode | None:
        """ConsumerGroup.validateOffsetFetch (v9+): None for a classic or unknown group."""
        group = self.groups.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return None
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member_epoch != member.member_epoch:
            # ConsumerGroup.validateMemberEpoch: classic members get the classic error.
            return ErrorCode.ILLEGAL_GENERATION if member.uses_classic_protocol else ErrorCode.STALE_MEMBER_EPOCH
        return None

    # ListGroups and DeleteGroups: mockbroker.coordinators.group_admin.GroupAdmin (§8.6, §10.7).

    def is_deletable(self, group: ConsumerGroup) -> bool:
        return group.state is ConsumerGroupState.EMPTY

    def delete_empty_group(self, group: ConsumerGroup, now_ms: int) -> None:
        """The group goes with its offsets."""
        deleted = self.offsets.delete_group(group.group_id)
        self.remove_group(group, now_ms, "DeleteGroups", offsets_deleted=deleted)

