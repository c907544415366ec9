"""DescribeConfigs (key 32), v0-4: the configs of topics and brokers, with where each value comes from.

v0: is_default per entry. v1 (KIP-226): config_source replaces is_default; include_synonyms.
v2: the same as v1. v3 (KIP-569): config_type, include_documentation. v4: flexible.
Kafka 4.x serves v1-4 (KIP-896); v0 is served too because sarama's ClusterAdmin sends it.

As ConfigHelper.describeConfigs: a null or empty configuration_keys means every config, else
only the named ones (unknown names are left out silently). A topic resource is checked for a
legal name (INVALID_TOPIC_EXCEPTION), then existence (UNKNOWN_TOPIC_OR_PARTITION). A broker
resource named "" describes the cluster-wide dynamic defaults (none here); named with the id
of the broker that received the request, it describes that broker; any other id is
INVALID_REQUEST, since clients send broker resources to the broker itself. A group resource
(KIP-848 GroupConfig) describes every group config of that id, whether or not the group exists:
its overrides (GROUP_CONFIG) over the broker's group.* settings; an empty name is INVALID_REQUEST.
Client metrics and broker logger resources are not modelled: INVALID_REQUEST says so.
Documentation (v3+) is a line of mockbroker's own; values of sensitive configs would be null.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.config.group_configs import group_config_entries
from mockbroker.config.topics import (
    ApiError,
    ConfigEntry,
    ConfigResourceType,
    ConfigSource,
    broker_config_entries,
    topic_config_entries,
)
from mockbroker.handlers._authz import REFUSAL_MESSAGES, AclOperation, config_resource_refusal
from mockbroker.handlers._topic_admin import validate_topic_name
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_configs import (
    DescribeConfigsRequest,
    DescribeConfigsResource,
    DescribeConfigsResourceResult,
    DescribeConfigsResponse,
    DescribeConfigsResult,
    DescribeConfigsSynonym,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CONFIGS
VERSIONS = (0, 4)
# Kafka 4.x advertises 1-4 (KIP-896); dispatch advertises the served minimum today.
ADVERTISED_MIN = 1


def _entry(entry: ConfigEntry, include_synonyms: bool, include_documentation: bool) -> DescribeConfigsResourceResult:
    return DescribeConfigsResourceResult(
        name=entry.name,
        value=None if entry.is_sensitive else entry.value,
        read_only=entry.read_only,
        config_source=entry.source,
        is_default=entry.source == ConfigSource.DEFAULT_CONFIG,  # v0's view of the source
        is_sensitive=entry.is_sensitive,
        synonyms=[
            DescribeConfigsSynonym(s.name, None if entry.is_sensitive else s.value, s.source) for s in entry.synonyms
        ]
        if include_synonyms
        else [],
        config_type=entry.type,
        documentation=entry.documentation if include_documentation else None,
    )


def _entries(ctx: RequestContext, resource: DescribeConfigsResource) -> list[ConfigEntry] | ApiError:
    cluster = ctx.cluster
    refused = config_resource_refusal(ctx, AclOperation.DESCRIBE_CONFIGS, resource.resource_type, resource.resource_name)
    if refused is not None:
        return ApiError(refused, REFUSAL_MESSAGES[refused])
    if resource.resource_type == ConfigResourceType.TOPIC:
        error = validate_topic_name(resource.resource_name)
        if error is not None:
            return error
        topic = cluster.topics.get(resource.resource_name)
        if topic is None:
            return ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return topic_config_entries(topic.configs, cluster.config)
    if resource.resource_type == ConfigResourceType.BROKER:
        if not resource.resource_name:
            return []  # no dynamic cluster-wide defaults
        try:
            broker_id = int(resource.resource_name)
        except ValueError:
            return ApiError(
                ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {resource.resource_name}"
            )
        if broker_id != ctx.broker.node_id:
            return ApiError(
                ErrorCode.INVALID_REQUEST,
                f"Unexpected broker id, expected {ctx.broker.node_id} or empty string, but received {resource.resource_name}",
            )
        return broker_config_entries(cluster, ctx.broker)
    if resource.resource_type == ConfigResourceType.GROUP:
        if not resource.resource_name:
            return ApiError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
        services = cluster.groups.services
        return group_config_entries(services.group_configs.get(resource.resource_name, {}), services.config)
    try:
        kind = ConfigResourceType(resource.resource_type).name
    except ValueError:
        return ApiError(ErrorCode.INVALID_REQUEST, f"Unsupported resource type: {resource.resource_type}")
    return ApiError(ErrorCode.INVALID_REQUEST, f"mockbroker does not model {kind} configs")


async def handle(ctx: RequestContext, req: DescribeConfigsRequest) -> DescribeConfigsResponse:
    include_synonyms = ctx.api_version >= 1 and req.include_synonyms
    include_documentation = ctx.api_version >= 3 and req.include_documentation
    results = []
    for resource in req.resources:
        entries = _entries(ctx, resource)
        if isinstance(entries, ApiError):
            results.append(
                DescribeConfigsResult(
                    error_code=entries.code,
                    # Kafka leaves the message at its default, "", when it sets only a code.
                    error_message="" if entries.message is None else entries.message,
                    resource_type=resource.resource_type,
                    resource_name=resource.resource_name,
                    configs=[],
                )
            )
            continue
        keys = resource.configuration_keys
        if keys:
            entries = [entry for entry in entries if entry.name in keys]
        results.append(
            DescribeConfigsResult(
                error_code=ErrorCode.NONE,
                error_message="",
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
                configs=[_entry(entry, include_synonyms, include_documentation) for entry in entries],
            )
        )
    return DescribeConfigsResponse(throttle_time_ms=0, results=results)
