"""AlterUserScramCredentials (key 51), v0: SCRAM credentials upserted from the client's salted
password, or deleted (KIP-554); the salted password becomes a stored key and a server key, as
Kafka keeps them (ScramControlManager.finishUpsertion), never kept itself.

Kafka's rules (ScramControlManager.alterCredentials), one result per user: a user altered twice in
one request (deletions and upsertions together, whatever the mechanisms) is DUPLICATE_RESOURCE; an
empty name UNACCEPTABLE_CREDENTIAL; a mechanism other than 1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512)
UNSUPPORTED_SASL_MECHANISM; fewer iterations than the mechanism's minimum (4096) or more than
16384 UNACCEPTABLE_CREDENTIAL; deleting a credential that does not exist RESOURCE_NOT_FOUND.

Under an authorizer the request needs ALTER on the cluster (ControllerApis): refused, every user
named gets CLUSTER_AUTHORIZATION_FAILED, once each, sorted by name
(AlterUserScramCredentialsRequest.getErrorResponse); Kafka's message names the request (D22).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, cluster_authorized
from mockbroker.security.scram import MAX_ITERATIONS, MECHANISM_TYPES, MIN_ITERATIONS
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.alter_user_scram_credentials import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    AlterUserScramCredentialsResult,
    ScramCredentialDeletion,
    ScramCredentialUpsertion,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.security.sasl import Credentials

API_KEY = ApiKey.ALTER_USER_SCRAM_CREDENTIALS
VERSIONS = (0, 0)

MECHANISM_NAMES = {number: name for name, number in MECHANISM_TYPES.items()}
TWICE = "A user credential cannot be altered twice in the same request"
Error = tuple[ErrorCode, str]


async def handle(ctx: RequestContext, req: AlterUserScramCredentialsRequest) -> AlterUserScramCredentialsResponse:
    if not cluster_authorized(ctx, AclOperation.ALTER):
        names = sorted({d.name for d in req.deletions} | {u.name for u in req.upsertions})
        code, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."
        return AlterUserScramCredentialsResponse(
            throttle_time_ms=0, results=[AlterUserScramCredentialsResult(user=n, error_code=code, error_message=message) for n in names]
        )
    credentials = ctx.cluster.credentials
    deletions: dict[str, ScramCredentialDeletion] = {}
    upsertions: dict[str, ScramCredentialUpsertion] = {}
    errors: dict[str, Error] = {}
    ops: list[ScramCredentialDeletion | ScramCredentialUpsertion] = [*req.deletions, *req.upsertions]
    for op in ops:
        if op.name in errors:
            continue
        if deletions.pop(op.name, None) is not None or upsertions.pop(op.name, None) is not None:
            errors[op.name] = (ErrorCode.DUPLICATE_RESOURCE, TWICE)
            continue
        error: Error | None
        if isinstance(op, ScramCredentialDeletion):
            error = _check_deletion(credentials, op)
            if error is None:
                deletions[op.name] = op
        else:
            error = _check_upsertion(op)
            if error is None:
                upsertions[op.name] = op
        if error is not None:
            errors[op.name] = error
    results: list[AlterUserScramCredentialsResult] = []
    for d in deletions.values():
        credentials.delete_scram(d.name, MECHANISM_NAMES[d.mechanism])
        results.append(AlterUserScramCredentialsResult(user=d.name, error_code=ErrorCode.NONE, error_message=None))
    for u in upsertions.values():
        credentials.upsert_scram(u.name, MECHANISM_NAMES[u.mechanism], u.salt, u.salted_password, u.iterations)
        results.append(AlterUserScramCredentialsResult(user=u.name, error_code=ErrorCode.NONE, error_message=None))
    for name, (code, message) in errors.items():
        results.append(AlterUserScramCredentialsResult(user=name, error_code=code, error_message=message))
    return AlterUserScramCredentialsResponse(throttle_time_ms=0, results=results)


def _check_name_and_mechanism(name: str, mechanism: int) -> Error | None:
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"
    if mechanism not in MECHANISM_NAMES:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"
    return None


def _check_upsertion(op: ScramCredentialUpsertion) -> Error | None:
    error = _check_name_and_mechanism(op.name, op.mechanism)
    if error is not None:
        return error
    if op.iterations < MIN_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"
    if op.iterations > MAX_ITERATIONS:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"
    return None


def _check_deletion(credentials: Credentials, op: ScramCredentialDeletion) -> Error | None:
    error = _check_name_and_mechanism(op.name, op.mechanism)
    if error is not None:
        return error
    if (op.name, MECHANISM_NAMES[op.mechanism]) not in credentials.scram:
        return ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
    return None
