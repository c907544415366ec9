"""DeleteAcls (key 31), v1-3 (Kafka 4.x dropped v0): remove the ACLs each filter matches
(AclApis.handleDeleteAcls, then AclControlManager.deleteAcls).

ALTER on the cluster is checked first (every filter CLUSTER_AUTHORIZATION_FAILED); with no
authorizer every filter answers SECURITY_DISABLED "No Authorizer is configured.". A filter with an
UNKNOWN part (or a code Kafka does not know) closes the connection, as Kafka's request does not
parse (DeleteAclsRequest.validate); each filter lists the bindings it removed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.dispatch.context import CloseConnection
from mockbroker.handlers._authz import AclOperation, cluster_authorized
from mockbroker.security.acls import AclBindingFilter
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.delete_acls import (
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsRequest,
    DeleteAclsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DELETE_ACLS
VERSIONS = (1, 3)


def _all(req: DeleteAclsRequest, code: int, message: str) -> DeleteAclsResponse:
    return DeleteAclsResponse(
        filter_results=[DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[]) for _ in req.filters]
    )


async def handle(ctx: RequestContext, req: DeleteAclsRequest) -> DeleteAclsResponse:
    filters = [
        AclBindingFilter(
            f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter, f.principal_filter, f.host_filter,
            f.operation, f.permission_type,
        )
        for f in req.filters
    ]
    if any(flt.is_unknown() for flt in filters):  # DeleteAclsRequest.validate: the request does not parse
        raise CloseConnection("DeleteAclsRequest filters contain UNKNOWN elements")
    if not cluster_authorized(ctx, AclOperation.ALTER):
        return _all(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.")
    authorizer = ctx.cluster.authorizer
    if authorizer is None:
        return _all(req, ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")
    results: list[DeleteAclsFilterResult] = []
    for flt in filters:
        removed = authorizer.remove_matching(flt)
        for acl in removed:
            ctx.cluster.events.record("acl.deleted", broker_id=ctx.broker.node_id, by=ctx.principal, acl=acl.describe())
        matching = [
            DeleteAclsMatchingAcl(
                error_code=ErrorCode.NONE, error_message=None, resource_type=acl.resource_type, resource_name=acl.resource_name,
                pattern_type=acl.pattern_type, principal=acl.principal, host=acl.host, operation=acl.operation,
                permission_type=acl.permission_type,
            )
            for acl in removed
        ]
        results.append(DeleteAclsFilterResult(error_code=ErrorCode.NONE, error_message=None, matching_acls=matching))
    return DeleteAclsResponse(filter_results=results)
