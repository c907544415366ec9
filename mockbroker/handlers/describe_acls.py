"""DescribeAcls (key 29), v1-3 (Kafka 4.x dropped v0): the ACLs matching one filter, grouped by
resource pattern (AclApis.handleDescribeAcls, DescribeAclsResponse.aclsResources).

DESCRIBE on the cluster is checked first (CLUSTER_AUTHORIZATION_FAILED); with no authorizer the
answer is SECURITY_DISABLED "No Authorizer is configured on the broker". A filter with an UNKNOWN
part does not parse in Kafka (DescribeAclsRequest.validate): the connection closes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.dispatch.context import CloseConnection
from mockbroker.handlers._authz import AclOperation, cluster_authorized
from mockbroker.security.acls import AclBindingFilter
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_acls import (
    AclDescription,
    DescribeAclsRequest,
    DescribeAclsResource,
    DescribeAclsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_ACLS
VERSIONS = (1, 3)


async def handle(ctx: RequestContext, req: DescribeAclsRequest) -> DescribeAclsResponse:
    flt = AclBindingFilter(
        req.resource_type_filter,
        req.resource_name_filter,
        req.pattern_type_filter,
        req.principal_filter,
        req.host_filter,
        req.operation,
        req.permission_type,
    )
    if flt.is_unknown():  # DescribeAclsRequest.validate: the request does not parse
        raise CloseConnection("DescribeAclsRequest contains UNKNOWN elements")
    if not cluster_authorized(ctx, AclOperation.DESCRIBE):
        return DescribeAclsResponse(
            error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, error_message="Cluster authorization failed.", resources=[]
        )
    authorizer = ctx.cluster.authorizer
    if authorizer is None:
        return DescribeAclsResponse(
            error_code=ErrorCode.SECURITY_DISABLED, error_message="No Authorizer is configured on the broker", resources=[]
        )
    resources: dict[tuple[int, str, int], DescribeAclsResource] = {}
    for acl in authorizer.matching(flt):
        key = (acl.resource_type, acl.resource_name, acl.pattern_type)
        resource = resources.get(key)
        if resource is None:
            resource = resources[key] = DescribeAclsResource(
                resource_type=acl.resource_type, resource_name=acl.resource_name, pattern_type=acl.pattern_type, acls=[]
            )
        resource.acls.append(
            AclDescription(principal=acl.principal, host=acl.host, operation=acl.operation, permission_type=acl.permission_type)
        )
    return DescribeAclsResponse(error_code=ErrorCode.NONE, error_message="", resources=list(resources.values()))
