"""ApiVersions (key 18), v0-4: which APIs and versions this broker serves.

v0: the list. v1: throttle time. v3 (KIP-511): flexible; the client names its software, which
must match Kafka's pattern or the answer is INVALID_REQUEST. An ApiVersions request at a version
we do not know is answered by dispatch in the v0 layout with UNSUPPORTED_VERSION (KIP-511).
v3+ also list the features (KIP-584): transaction.version, supported 0-2 (listed from v4 only:
KIP-1022, older clients refuse a min version 0) and finalized at the ``transaction_version``
setting, 2 as on a new Kafka 4 cluster (KIP-890). v5 (KIP-1242, rebootstrap checks) is not served: the
codec's specs stop at v4.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mockbroker.dispatch.table import HANDLERS, advertised_versions
from mockbroker.state import MemoKey
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.api_versions import (
    ApiVersion,
    ApiVersionsRequest,
    ApiVersionsResponse,
    FinalizedFeatureKey,
    SupportedFeatureKey,
)
from mockbroker_protocol.registry import Encoded

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.state import ClusterState

API_KEY = ApiKey.API_VERSIONS
VERSIONS = (0, 4)

# ApiVersionsRequest.isValid: client software name and version, when given (v3+).
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


async def handle(ctx: RequestContext, req: ApiVersionsRequest) -> ApiVersionsResponse | Encoded:
    cluster = ctx.cluster
    advertised = _advertised(cluster)
    version = ctx.api_version
    valid = version < 3 or bool(
        _SOFTWARE.match(req.client_software_name) and _SOFTWARE.match(req.client_software_version)
    )
    if not ctx.inspected:  # interceptors and the request log see (and edit) real objects
        body = advertised.bodies.get((version, valid))
        if body is None:
            body = advertised.bodies[(version, valid)] = _response(
                advertised.keys, valid, cluster, version
            ).encode(version)
        # The answer follows from the request's bytes and the caps alone: the request path may
        # answer the same bytes again while the caps are unchanged (registry.Encoded).
        return Encoded(body, advertised.unchanged)
    return _response(advertised.keys, valid, cluster, version)


# transaction.version levels a Kafka 4 broker supports (TransactionVersion: TV_0 to TV_2).
TRANSACTION_VERSION_SUPPORTED = (0, 2)
# KIP-1022: ApiVersions v4 is the first whose clients accept a supported feature with min version
# 0; below, Kafka leaves those out (ApiVersionsResponse.createApiVersionsResponse, alterV0Features).
ZERO_MIN_FEATURES_MIN_VERSION = 4
# The epoch of the finalized features (Kafka: the metadata offset they were read at); they never
# change under a cluster.
FINALIZED_FEATURES_EPOCH = 1


def _response(
    keys: list[ApiVersion], valid: bool, cluster: ClusterState, version: int
) -> ApiVersionsResponse:
    """v3+ (KIP-584) also carry the features: only transaction.version, which producers read
    (KIP-890: level 2 switches Java 4.x producers to transactions version 2)."""
    if not valid:
        # ApiVersionsRequest.getErrorResponse: only UNSUPPORTED_VERSION carries the ApiVersions
        # range (KIP-511); any other error, INVALID_REQUEST here, an empty list.
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST, api_keys=[])
    level = cluster.config.transaction_version
    supported = [SupportedFeatureKey("transaction.version", *TRANSACTION_VERSION_SUPPORTED)]
    if version < ZERO_MIN_FEATURES_MIN_VERSION:
        supported = [f for f in supported if f.min_version > 0]
    return ApiVersionsResponse(
        error_code=ErrorCode.NONE,
        api_keys=keys,
        supported_features=supported,
        finalized_features_epoch=FINALIZED_FEATURES_EPOCH,
        finalized_features=[FinalizedFeatureKey("transaction.version", level, level)],
    )


class _Advertised:
    """What a cluster advertises under its current version caps, and the answers encoded
    (per version and request validity): every client connection starts with ApiVersions."""

    __slots__ = ("bodies", "caps", "keys")

    def __init__(self, caps: dict[int, int], keys: list[ApiVersion]) -> None:
        self.caps = caps
        self.keys = keys
        self.bodies: dict[tuple[int, bool], bytes] = {}

    def unchanged(self, cluster: ClusterState) -> bool:
        """True while ``cluster`` advertises what this was built from."""
        return cluster.version_caps == self.caps


# What a cluster advertises follows from the handler table and its version caps: built once per
# cluster and caps (kept in the cluster's memos), rebuilt if the caps change.
_ADVERTISED: MemoKey[_Advertised] = MemoKey("api_versions.advertised")


def _advertised(cluster: ClusterState) -> _Advertised:
    cached = cluster.memos.get(_ADVERTISED)
    if cached is not None and cached.caps == cluster.version_caps:
        return cached
    keys = []
    for key, handler in sorted(HANDLERS.items()):
        adv = advertised_versions(cluster, handler)
        if adv is not None:
            keys.append(ApiVersion(int(key), adv[0], adv[1]))
    return cluster.memos.set(_ADVERTISED, _Advertised(dict(cluster.version_caps), keys))
