"""What AlterConfigs and IncrementalAlterConfigs share: the receiving broker's checks on each
resource before the controller sees it (ConfigAdminManager.preprocess).

Not a handler module (the leading underscore keeps it out of the handler table).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from mockbroker.config.group_configs import validate_group_configs
from mockbroker.config.topics import AlterConfigOp, ApiError, ConfigResourceType
from mockbroker.handlers._authz import REFUSAL_MESSAGES, AclOperation, config_resource_refusal
from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext


class Config(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def value(self) -> str | None: ...


class Resource(Protocol):
    @property
    def resource_type(self) -> int: ...

    @property
    def resource_name(self) -> str: ...

    @property
    def configs(self) -> Sequence[Config]: ...


DYNAMIC_BROKER_CONFIGS_UNSUPPORTED = (
    "mockbroker does not model dynamic broker configs: set broker settings in ClusterConfig before start"
)


def preprocess(ctx: RequestContext, resources: Sequence[Resource], *, incremental: bool) -> list[ApiError | None]:
    """One entry per resource: the broker's refusal, or None to pass it on to the controller's
    checks (only TOPIC and GROUP resources get that far here)."""
    seen = Counter((r.resource_type, r.resource_name) for r in resources)
    out: list[ApiError | None] = []
    for resource in resources:
        out.append(_preprocess_one(ctx, resource, seen[(resource.resource_type, resource.resource_name)] > 1, incremental))
    return out


def _preprocess_one(ctx: RequestContext, resource: Resource, duplicate: bool, incremental: bool) -> ApiError | None:
    if duplicate:
        return ApiError(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
    refused = config_resource_refusal(ctx, AclOperation.ALTER_CONFIGS, resource.resource_type, resource.resource_name)
    if refused is not None:
        return ApiError(refused, REFUSAL_MESSAGES[refused])
    names = [config.name for config in resource.configs]
    if len(set(names)) != len(names):
        return ApiError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [
        config.name
        for config in resource.configs
        if config.value is None and not (incremental and getattr(config, "config_operation", None) == AlterConfigOp.DELETE)
    ]
    if nulls:
        return ApiError(ErrorCode.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls))
    kind = resource.resource_type
    if kind == ConfigResourceType.TOPIC:
        return None
    if kind == ConfigResourceType.GROUP:
        if not resource.resource_name:
            return ApiError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
        return None
    if kind == ConfigResourceType.BROKER:
        name = resource.resource_name
        if name:
            try:
                node_id = int(name)
            except ValueError:
                return ApiError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}")
            if node_id != ctx.broker.node_id:
                return ApiError(
                    ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {ctx.broker.node_id}, but received {name}"
                )
        return ApiError(ErrorCode.INVALID_REQUEST, DYNAMIC_BROKER_CONFIGS_UNSUPPORTED)
    modelled_elsewhere = {ConfigResourceType.CLIENT_METRICS}
    if incremental:
        modelled_elsewhere.add(ConfigResourceType.BROKER_LOGGER)
    if kind in modelled_elsewhere:
        return ApiError(ErrorCode.INVALID_REQUEST, f"mockbroker does not model {ConfigResourceType(kind).name} configs")
    return ApiError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {kind}")


def alter_group_configs(ctx: RequestContext, group_id: str, overrides: dict[str, str], validate_only: bool) -> ApiError | None:
    """The controller's checks of a GROUP resource's new overrides (ControllerConfigurationValidator:
    GroupConfig.validate against the broker's group.* bounds), then, unless validate_only, the
    change: stored per group id whether or not the group exists."""
    services = ctx.cluster.groups.services
    error = validate_group_configs(overrides, services.config)
    if error is None and not validate_only:
        services.set_group_configs(group_id, overrides)
    return error
