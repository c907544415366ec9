"""Authorization as KafkaApis' AuthHelper asks it, for the handlers (not a handler module): one
action (operation, resource type, name) for the connection's principal and host, decided by the
cluster's Authorizer (mockbroker/security/acls.py); a denial is recorded as an
``authorization.denied`` event. Every caller checks ``ctx.cluster.authorizer is None`` first (or
calls ``authorized``, which does): with no authorizer configured everything is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from mockbroker.security.acls import CLUSTER_NAME, AclOperation, ResourceType
from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

__all__ = [
    "CLUSTER_NAME",
    "GROUP_OPERATIONS",
    "AclOperation",
    "ResourceType",
    "authorized",
    "authorized_operations",
    "cluster_authorized",
    "describable_topics",
    "describe_authorized_groups",
    "refuse_groups_with_undescribable_topics",
    "topics_authorized",
]

# AclEntry.supportedOperations(GROUP) as an AclOperation bitfield, everything allowed (no ACLs):
# READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11.
GROUP_OPERATIONS = sum(1 << op for op in (3, 6, 8, 10, 11))


def authorized(ctx: RequestContext, operation: int, resource_type: int, name: str, *, log_denial: bool = True) -> bool:
    authorizer = ctx.cluster.authorizer
    if authorizer is None:
        return True
    if authorizer.authorize(ctx.principal, ctx.client_host, operation, resource_type, name):
        return True
    if log_denial:  # Kafka logs a denial unless the check is a filter (logIfDenied=false)
        ctx.cluster.events.record(
            "authorization.denied",
            broker_id=ctx.broker.node_id,
            principal=ctx.principal,
            client=f"{ctx.client_host}:{ctx.client_port}",
            api_key=ctx.header.request_api_key,
            operation=AclOperation(operation).name,
            resource_type=ResourceType(resource_type).name,
            resource_name=name,
        )
    return False


def cluster_authorized(ctx: RequestContext, operation: int, *, log_denial: bool = True) -> bool:
    return authorized(ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME, log_denial=log_denial)


def topics_authorized(ctx: RequestContext, operation: int, names: list[str] | None) -> bool:
    """AuthHelper.filterByAuthorized over a list of topic names (each denial logged): True when
    every one is allowed (or there is no authorizer, or no names)."""
    if ctx.cluster.authorizer is None or not names:
        return True
    return all([authorized(ctx, operation, ResourceType.TOPIC, name) for name in dict.fromkeys(names)])


def describable_topics(ctx: RequestContext) -> Callable[[Sequence[str]], list[str]] | None:
    """TopicRegexResolver.filterTopicDescribeAuthorizedTopics for the connection's principal: of
    some topic names, those it may DESCRIBE, denials not logged (its Actions have
    logIfDenied=false). None without an authorizer."""
    if ctx.cluster.authorizer is None:
        return None

    def allowed(names: Sequence[str]) -> list[str]:
        return [name for name in names if authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name, log_denial=False)]

    return allowed


def authorized_operations(ctx: RequestContext, resource_type: int, name: str, supported: int) -> int:
    """The KIP-430 bitfield: each supported operation the principal is allowed on the resource
    (AuthHelper.authorizedOperations; every supported one without an authorizer)."""
    if ctx.cluster.authorizer is None:
        return supported
    bits = 0
    for op in range(3, 16):
        if supported & (1 << op) and authorized(ctx, op, resource_type, name, log_denial=False):
            bits |= 1 << op
    return bits


class _DescribedGroup(Protocol):
    error_code: int
    authorized_operations: int


DescribedT = TypeVar("DescribedT", bound=_DescribedGroup)


def describe_authorized_groups(
    ctx: RequestContext,
    group_ids: list[str],
    include_operations: bool,
    describe: Callable[[str], DescribedT],
    refused: Callable[[str], DescribedT],
) -> list[DescribedT]:
    """KafkaApis.handle{Consumer,Share,Streams}GroupDescribe: DESCRIBE on each group; the refused
    groups (``refused``: GROUP_AUTHORIZATION_FAILED) answered first, then the coordinator's answers,
    each described one with its KIP-430 operations when asked."""
    refusals: list[DescribedT] = []
    described: list[DescribedT] = []
    for group_id in group_ids:
        if not authorized(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            refusals.append(refused(group_id))
            continue
        group = describe(group_id)
        if include_operations and group.error_code == ErrorCode.NONE:
            group.authorized_operations = authorized_operations(ctx, ResourceType.GROUP, group_id, GROUP_OPERATIONS)
        described.append(group)
    return refusals + described


def refuse_groups_with_undescribable_topics(
    ctx: RequestContext, groups: list[DescribedT], topics_of: Callable[[DescribedT], Iterable[str]],
    refused: Callable[[DescribedT], DescribedT],
) -> list[DescribedT]:  # fmt: skip
    """KafkaApis.handle{Consumer,Share,Streams}GroupDescribe under an authorizer: DESCRIBE on every
    topic the answer names (``topics_of``: the assignments, a streams group's topology), asked
    once per topic (AuthHelper.filterByAuthorized, denials logged); a group naming one the client
    may not describe is replaced by ``refused`` (TOPIC_AUTHORIZATION_FAILED, nothing else)."""
    if ctx.cluster.authorizer is None:
        return groups
    named = [set(topics_of(group)) for group in groups]
    asked = sorted(set().union(*named))
    allowed = {name for name in asked if authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name)}
    return [group if topics <= allowed else refused(group) for group, topics in zip(groups, named, strict=True)]


# Errors.java's default messages, which the config APIs answer with a refusal.
REFUSAL_MESSAGES = {
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
}


def config_resource_refusal(ctx: RequestContext, operation: int, config_type: int, name: str) -> ErrorCode | None:
    """DESCRIBE_CONFIGS / ALTER_CONFIGS on a config resource (ConfigResource.Type codes), as
    KafkaApis and ControllerApis check it: a topic's on the topic, a group's on the group, the
    brokers' and loggers' on the cluster; the refusal's code, or None when allowed. Client
    metrics (16) are the cluster's too."""
    if ctx.cluster.authorizer is None:
        return None
    if config_type == 2:  # TOPIC
        return None if authorized(ctx, operation, ResourceType.TOPIC, name) else ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if config_type == 32:  # GROUP
        return None if authorized(ctx, operation, ResourceType.GROUP, name) else ErrorCode.GROUP_AUTHORIZATION_FAILED
    if config_type in (4, 8, 16):  # BROKER, BROKER_LOGGER, CLIENT_METRICS
        return None if cluster_authorized(ctx, operation) else ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None
