"""IncrementalAlterConfigs (key 44), v0-1: change some of a resource's configs (KIP-339).

v1: flexible.
Each config carries an operation: SET (0) a value, DELETE (1) the override (back to the
default; deleting one that is not set is not an error), APPEND (2) or SUBTRACT (3) comma-separated
items to or from a LIST config (starting from the default when unset; INVALID_CONFIG "Can't
APPEND to key ... because its type is not LIST." for any other type or an unknown name).

Checks as Kafka makes them: the receiving broker's (ConfigAdminManager.preprocess: a resource
named twice, a config named twice, a null value for anything but DELETE, an unknown resource
type, all INVALID_REQUEST), then the controller's for topics
(ConfigurationControlManager.incrementalAlterConfigResource: apply the operations, then a legal
name, valid configs, and last the topic's existence). validate_only checks without applying.
Dynamic broker configs are not modelled: BROKER resources get INVALID_REQUEST saying so.
GROUP resources (KIP-848 GroupConfig): the operations applied to the group's overrides, then
GroupConfig.validate (mockbroker/config/group_configs.py); an empty name is INVALID_REQUEST.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.config.topics import AlterConfigOp, ApiError, ConfigResourceType, apply_incremental
from mockbroker.handlers import _topic_admin as topic_admin
from mockbroker.handlers._config_alter import alter_group_configs, preprocess
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.incremental_alter_configs import (
    AlterConfigsResource,
    AlterConfigsResourceResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
VERSIONS = (0, 1)


def _alter_group(ctx: RequestContext, resource: AlterConfigsResource, validate_only: bool) -> ApiError | None:
    current = ctx.cluster.groups.services.group_configs.get(resource.resource_name, {})
    ops = [(config.name, config.config_operation, config.value) for config in resource.configs]
    for name, op, _ in ops:  # no group config is a LIST
        if op in (AlterConfigOp.APPEND, AlterConfigOp.SUBTRACT):
            message = f"Can't {AlterConfigOp(op).name} to key {name} because its type is not LIST."
            return ApiError(ErrorCode.INVALID_CONFIG, message)
    new_configs, error = apply_incremental(current, ops)
    if error is not None:
        return error
    return alter_group_configs(ctx, resource.resource_name, new_configs, validate_only)


def _alter(ctx: RequestContext, resource: AlterConfigsResource, validate_only: bool) -> ApiError | None:
    if resource.resource_type == ConfigResourceType.GROUP:
        return _alter_group(ctx, resource, validate_only)
    return _alter_topic(ctx, resource, validate_only)


def _alter_topic(ctx: RequestContext, resource: AlterConfigsResource, validate_only: bool) -> ApiError | None:
    topic = ctx.cluster.topics.get(resource.resource_name)
    current = {} if topic is None else topic.configs
    ops = [(config.name, config.config_operation, config.value) for config in resource.configs]
    new_configs, error = apply_incremental(current, ops)
    if error is not None:
        return error
    return topic_admin.alter_topic_configs(ctx.cluster, resource.resource_name, new_configs, validate_only=validate_only)


async def handle(ctx: RequestContext, req: IncrementalAlterConfigsRequest) -> IncrementalAlterConfigsResponse:
    responses = []
    for resource, refused in zip(req.resources, preprocess(ctx, req.resources, incremental=True), strict=True):
        error = refused if refused is not None else _alter(ctx, resource, req.validate_only)
        responses.append(
            AlterConfigsResourceResponse(
                error_code=ErrorCode.NONE if error is None else error.code,
                error_message=None if error is None else error.message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return IncrementalAlterConfigsResponse(throttle_time_ms=0, responses=responses)
