"""DescribeUserScramCredentials (key 50), v0: the SCRAM mechanisms and iteration counts of users
(KIP-554), never a salt nor a key.

Kafka's rules (ScramImage.describe): no users (null or empty) describes every user with a SCRAM
credential; a user named twice is DUPLICATE_RESOURCE, a user without one RESOURCE_NOT_FOUND, each
with the user's name after Kafka's message. The top-level error is NONE.

Under an authorizer the request needs DESCRIBE on the cluster (KafkaApis): refused, the top-level
error is CLUSTER_AUTHORIZATION_FAILED and each user asked for gets it too, with no user name
(DescribeUserScramCredentialsRequest.getErrorResponse leaves it unset). Asking for every user (null)
is answered with no results; Kafka 4.3.1 fails building that answer and never sends one (D25).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, cluster_authorized
from mockbroker.security.scram import MECHANISM_TYPES
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.hashing import java_hash_map_order
from mockbroker_protocol.messages.describe_user_scram_credentials import (
    CredentialInfo,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    DescribeUserScramCredentialsResult,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS
VERSIONS = (0, 0)

DESCRIBE_DUPLICATE_USER = "Cannot describe SCRAM credentials for the same user twice in a single request: "
DESCRIBE_USER_THAT_DOES_NOT_EXIST = "Attempt to describe a user credential that does not exist: "


async def handle(ctx: RequestContext, req: DescribeUserScramCredentialsRequest) -> DescribeUserScramCredentialsResponse:
    if not cluster_authorized(ctx, AclOperation.DESCRIBE):
        # Errors.CLUSTER_AUTHORIZATION_FAILED.exception(): ApiError gives its default message as null
        code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        refused = [DescribeUserScramCredentialsResult(user="", error_code=code, error_message=None) for _ in req.users or []]
        return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=code, error_message=None, results=refused)
    known = ctx.cluster.credentials.scram_users()
    names = [u.name for u in req.users or []] or sorted(known)
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    results: list[DescribeUserScramCredentialsResult] = []
    # ScramImage.describe answers from a HashMap of the names: its iteration order, not the request's.
    for name in java_hash_map_order(names):
        if counts[name] > 1:
            results.append(_error(name, ErrorCode.DUPLICATE_RESOURCE, DESCRIBE_DUPLICATE_USER + name))
        elif name not in known:
            results.append(_error(name, ErrorCode.RESOURCE_NOT_FOUND, DESCRIBE_USER_THAT_DOES_NOT_EXIST + name))
        else:
            infos = [
                CredentialInfo(mechanism=MECHANISM_TYPES[mechanism], iterations=iterations)
                for mechanism, iterations in sorted(known[name].items())
            ]
            results.append(DescribeUserScramCredentialsResult(user=name, error_code=ErrorCode.NONE, error_message="", credential_infos=infos))
    return DescribeUserScramCredentialsResponse(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message="", results=results)


def _error(name: str, code: ErrorCode, message: str) -> DescribeUserScramCredentialsResult:
    return DescribeUserScramCredentialsResult(user=name, error_code=code, error_message=message, credential_infos=[])
