"""AlterConfigs (key 33), v0-2: replace all of a resource's dynamic configs (the legacy API).

v1: the same as v0 (responses sent before throttling). v2: flexible.
Every config the request leaves out is removed: the topic's overrides become exactly the ones
given (KIP-339 added IncrementalAlterConfigs because of this). The 4.x Java Admin no longer
calls it, but older clients (kafka-python against old brokers, sarama, librdkafka) do.

Checks as Kafka makes them: the receiving broker's (ConfigAdminManager.preprocess: a resource
named twice, a config named twice, a null value, an unknown resource type, all INVALID_REQUEST),
then the controller's for topics (ConfigurationControlManager.legacyAlterConfigs: a legal
name, valid configs as LogConfig.validate sees them, INVALID_CONFIG otherwise, and last the
topic's existence, UNKNOWN_TOPIC_OR_PARTITION). validate_only checks without applying.
Dynamic broker configs are not modelled: BROKER resources get INVALID_REQUEST saying so.
GROUP resources: the group's overrides become the ones given, checked by GroupConfig.validate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.config.topics import ConfigResourceType
from mockbroker.handlers import _topic_admin as topic_admin
from mockbroker.handlers._config_alter import alter_group_configs, preprocess
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.alter_configs import (
    AlterConfigsRequest,
    AlterConfigsResourceResponse,
    AlterConfigsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.ALTER_CONFIGS
VERSIONS = (0, 2)


async def handle(ctx: RequestContext, req: AlterConfigsRequest) -> AlterConfigsResponse:
    responses = []
    for resource, refused in zip(req.resources, preprocess(ctx, req.resources, incremental=False), strict=True):
        error = refused
        if error is None:
            new_configs = {config.name: config.value for config in resource.configs if config.value is not None}
            if resource.resource_type == ConfigResourceType.GROUP:
                error = alter_group_configs(ctx, resource.resource_name, new_configs, req.validate_only)
            else:
                error = topic_admin.alter_topic_configs(
                    ctx.cluster, resource.resource_name, new_configs, validate_only=req.validate_only
                )
        responses.append(
            AlterConfigsResourceResponse(
                error_code=ErrorCode.NONE if error is None else error.code,
                error_message=None if error is None else error.message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
            )
        )
    return AlterConfigsResponse(throttle_time_ms=0, responses=responses)
