"""ApiVersions (key 18), v0-4: which APIs and versions this broker serves.

v0: the list. v1: throttle time. v3 (KIP-511): flexible; the client names its software, which
must match Kafka's pattern or the answer is INVALID_REQUEST. An ApiVersions request at a version
we do not know is answered by dispatch in the v0 layout with UNSUPPORTED_VERSION (KIP-511).
v5 (KIP-1242, rebootstrap checks) is not served: the codec's specs stop at v4.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mockbroker.dispatch.table import HANDLERS, advertised_versions
from mockbroker.state import MemoKey
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.api_versions import ApiVersion, ApiVersionsRequest, ApiVersionsResponse
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
            body = advertised.bodies[(version, valid)] = _response(advertised.keys, valid).encode(version)
        # The answer follows from the request's bytes and the caps alone: the request path may
        # answer the same bytes again while the caps are unchanged (registry.Encoded).
        return Encoded(body, advertised.unchanged)
    return _response(advertised.keys, valid)


def _response(keys: list[ApiVersion], valid: bool) -> ApiVersionsResponse:
    if not valid:
        return ApiVersionsResponse(error_code=ErrorCode.INVALID_REQUEST, api_keys=keys)
    return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=keys, finalized_features_epoch=-1)


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
