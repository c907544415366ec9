"""CreateAcls (key 30), v1-3 (Kafka 4.x dropped v0): add ACL bindings (AclApis.handleCreateAcls,
then AclControlManager.createAcls).

ALTER on the cluster is checked first (every result CLUSTER_AUTHORIZATION_FAILED); with no
authorizer every result is SECURITY_DISABLED "No Authorizer is configured.". Each binding is
checked alone (mockbroker.security.acls.check_new_acl: INVALID_REQUEST with Kafka's message); a
binding that exists already succeeds without a second copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.dispatch.context import CloseConnection
from mockbroker.handlers._authz import AclOperation, cluster_authorized
from mockbroker.security.acls import (
    AclBinding,
    AclPermissionType,
    InvalidAcl,
    PatternType,
    ResourceType,
    check_new_acl,
)
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.create_acls import (
    AclCreation,
    AclCreationResult,
    CreateAclsRequest,
    CreateAclsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.CREATE_ACLS
VERSIONS = (1, 3)


def _binding(c: AclCreation) -> AclBinding:
    return AclBinding(c.resource_type, c.resource_name, c.resource_pattern_type, c.principal, c.host, c.operation, c.permission_type)


def _unparseable(c: AclCreation) -> bool:
    """A resource type ANY, a pattern type MATCH or ANY, an operation or permission type ANY."""
    return (
        c.resource_type == ResourceType.ANY
        or c.resource_pattern_type in (PatternType.MATCH, PatternType.ANY)
        or c.operation == AclOperation.ANY
        or c.permission_type == AclPermissionType.ANY
    )


def _all(req: CreateAclsRequest, code: int, message: str | None) -> CreateAclsResponse:
    return CreateAclsResponse(results=[AclCreationResult(error_code=code, error_message=message) for _ in req.creations])


async def handle(ctx: RequestContext, req: CreateAclsRequest) -> CreateAclsResponse:
    if any(_binding(c).is_unknown() for c in req.creations):  # CreateAclsRequest.validate: does not parse
        raise CloseConnection("CreateAclsRequest contains UNKNOWN elements")
    if not cluster_authorized(ctx, AclOperation.ALTER):
        return _all(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    authorizer = ctx.cluster.authorizer
    if authorizer is None:
        return _all(req, ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    if any(_unparseable(c) for c in req.creations):
        # Kafka's ResourcePattern / AccessControlEntry constructors throw on these (IllegalArgumentException
        # in CreateAclsRequest.aclBinding): the whole request is UNKNOWN_SERVER_ERROR, without a message.
        return _all(req, ErrorCode.UNKNOWN_SERVER_ERROR, None)
    results: list[AclCreationResult] = []
    for c in req.creations:
        acl = _binding(c)
        try:
            check_new_acl(acl)
        except InvalidAcl as exc:
            results.append(AclCreationResult(error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc)))
            continue
        if authorizer.add(acl):
            ctx.cluster.events.record("acl.created", broker_id=ctx.broker.node_id, by=ctx.principal, acl=acl.describe())
        results.append(AclCreationResult(error_code=ErrorCode.NONE, error_message=""))  # Kafka's default, not null
    return CreateAclsResponse(results=results)
