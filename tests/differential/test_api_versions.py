"""Differential: ApiVersions at every version, and KIP-511's answer to a version the broker does not know."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.differential.harness import Context, Raw, Step, Target, differential

API_VERSIONS = 18
# APIs Kafka 4.3 serves and mockbroker does not (D1): WriteTxnMarkers, quotas, KRaft internals
# and the rest of the admin surface it leaves out (SaslHandshake 17, SaslAuthenticate 36, the ACL
# APIs 29-31 and the SCRAM credentials 50-51 are served: docs/security.md).
NOT_SERVED = (27, 34, 35, 38, 39, 40, 41, 43, 45, 46, 48, 49,
              55, 57, 64, 74, 75, 76, 77, 78, 79, 80, 81, 83, 84, 85, 86, 87, 90, 91, 92)  # fmt: skip
D1 = {"D1": [f"api_keys.{k}" for k in NOT_SERVED]}
# Features Kafka 4.3 lists and mockbroker does not (D2; below v4 mockbroker lists no supported
# feature at all, an empty map); transaction.version is compared.
OTHER_FEATURES = ("group.version", "kraft.version", "metadata.version", "share.version", "streams.version",
                  "eligible.leader.replicas.version")  # fmt: skip
D2 = {"D2": [f"{kind}.{name}" for kind in ("supported_features", "finalized_features") for name in OTHER_FEATURES]
      + ["finalized_features_epoch", "supported_features"]}  # fmt: skip


def by_api(tree: Any, ctx: Context | None = None) -> Any:
    """api_keys as {key: "min-max"}, so that one missing API does not shift every later entry."""
    tree["api_keys"] = {str(a["api_key"]): f"{a['min_version']}-{a['max_version']}" for a in tree["api_keys"]}
    if "supported_features" in tree:  # v3+; features by name too, in no particular order
        tree["supported_features"] = {
            f["name"]: f"{f['min_version']}-{f['max_version']}" for f in tree["supported_features"]
        }
        tree["finalized_features"] = {
            f["name"]: f"{f['min_version_level']}-{f['max_version_level']}"
            for f in tree["finalized_features"]
        }
    return tree


@pytest.mark.parametrize("version", range(5))
def test_api_versions(targets: tuple[Target, Target], version: int) -> None:
    request = ApiVersionsRequest(client_software_name="differential", client_software_version="1.0")
    divergences = {**D1, **(D2 if version >= 3 else {})}
    differential(*targets, [Step(API_VERSIONS, version, request, normalise=by_api, divergences=divergences)])


def unknown_version_frame(version: int, flexible_header: bool) -> Any:
    """An ApiVersions request at ``version`` (which our codec would not encode): header v1 or v2, no body."""

    def build(ctx: Context) -> bytes:
        client = b"differential"
        payload = struct.pack(">hhih", API_VERSIONS, version, 7, len(client)) + client
        if flexible_header:
            payload += b"\x00"  # the header's empty tagged fields
        payload += b"\x00\x00\x00"  # a v3-shaped body: two empty compact strings, no tags
        return struct.pack(">i", len(payload)) + payload

    return build


@pytest.mark.parametrize("version", [5, 9, 127, 32767])
def test_unsupported_version_gets_kip_511_v0_answer(targets: tuple[Target, Target], version: int) -> None:
    """KIP-511: the broker answers an ApiVersions version it does not know in v0, with
    UNSUPPORTED_VERSION and its own ApiVersions range, so the client can retry with one it knows."""
    step = Raw(
        unknown_version_frame(version, True), label="unknown", decode=(API_VERSIONS, 0), normalise=by_api
    )
    differential(*targets, [step, Step(API_VERSIONS, 3, ApiVersionsRequest(), normalise=by_api)])


@pytest.mark.parametrize(
    ("name", "version"), [("", ""), ("bad name!", "1.0"), ("-lead", "1"), ("lib", "trail-"), ("ok", "")]
)
def test_client_software_must_match_kafkas_pattern(
    targets: tuple[Target, Target], name: str, version: str
) -> None:
    """KIP-511: v3+ names the client's software; a name or version off ``[a-zA-Z0-9](?:[a-zA-Z0-9-.]*[a-zA-Z0-9])?``
    gets INVALID_REQUEST and no API list."""
    differential(*targets, [Step(API_VERSIONS, 3, ApiVersionsRequest(name, version), normalise=by_api)])
