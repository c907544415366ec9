"""The API registry: api key -> generated request/response classes, and whole-frame decode/encode.

The broker's request path is ``decode_request(frame)`` -> handler -> ``encode_response(...)``;
test clients use the mirror pair ``encode_request`` / ``decode_response``. Header versions
follow from the body's: a flexible request uses request header v2 and its response header v1,
except that an ApiVersions response always uses header v0 (KIP-511), so that a client can read
the reply to a version the broker did not understand.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from protocol.errors import ErrorCode, UnknownApiError, UnsupportedVersionError
from protocol.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    peek_api_key_version,
    response_header_version,
)
from protocol.messages import API_MODULES
from protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from protocol.primitives import INT32, Buffer
from protocol.schema import MessageSpec

API_VERSIONS_KEY = 18


class Message(Protocol):
    """What every generated top-level message class provides."""

    SPEC: ClassVar[MessageSpec]

    def encode(self, version: int) -> bytes: ...

    def encode_chunks(self, version: int, head: bytes = b"") -> list[Buffer]: ...


@dataclass(frozen=True, slots=True)
class Api:
    key: int
    name: str  # e.g. "JoinGroup"
    request: Any  # the generated request class
    response: Any  # the generated response class

    @property
    def versions(self) -> tuple[int, int]:
        """The versions this codec decodes (Kafka 4.3's, plus old ones clients still send)."""
        lo, hi = self.request.SPEC.valid_versions
        return int(lo), int(hi)

    def flexible(self, version: int) -> bool:
        return bool(self.request.SPEC.flexible(version))


def _load() -> dict[int, Api]:
    apis: dict[int, Api] = {}
    for key, module_name in API_MODULES.items():
        mod = importlib.import_module(f"protocol.messages.{module_name}")
        request = next(getattr(mod, n) for n in mod.__all__ if n.endswith("Request") and hasattr(getattr(mod, n), "SPEC"))
        response = next(getattr(mod, n) for n in mod.__all__ if n.endswith("Response") and hasattr(getattr(mod, n), "SPEC"))
        apis[key] = Api(key, request.SPEC.name[: -len("Request")], request, response)
    return apis


APIS: dict[int, Api] = _load()


def decode_request(frame: bytes) -> tuple[RequestHeader, Any]:
    """Decode one request frame (without its size prefix) into (header, request).

    Raises UnknownApiError or UnsupportedVersionError (carrying what a reply needs) for APIs
    and versions this codec does not know, and DecodeError for malformed bytes.
    """
    api_key, api_version, correlation_id = peek_api_key_version(frame)
    api = APIS.get(api_key)
    if api is None:
        raise UnknownApiError(api_key, api_version, correlation_id)
    lo, hi = api.versions
    if not lo <= api_version <= hi:
        # Header v1 is a prefix of v2, so the client id can be read without knowing flexibility.
        header, _ = decode_request_header(frame, False)
        raise UnsupportedVersionError(api_key, api_version, correlation_id, header.client_id)
    header, pos = decode_request_header(frame, api.flexible(api_version))
    body, _ = api.request.decode_from(frame, api_version, pos)
    return header, body


def encode_response(api_key: int, api_version: int, correlation_id: int, response: Message) -> list[Buffer]:
    """Frame a response for ``writelines``: size prefix and header in front, record buffers
    passed through as chunks of their own."""
    flexible = APIS[api_key].flexible(api_version)
    header = encode_response_header(correlation_id, response_header_version(api_key, flexible))
    chunks = response.encode_chunks(api_version)
    size = len(header) + sum(len(c) for c in chunks)
    return [INT32.pack(size) + header, *chunks]


def unsupported_api_versions_response(correlation_id: int, min_version: int, max_version: int) -> list[Buffer]:
    """The KIP-511 reply to ApiVersions at a version the broker does not know: v0 layout,
    UNSUPPORTED_VERSION, and the ApiVersions range the broker does support, from which the
    client picks the version to retry with (kafka-python and librdkafka both do)."""
    body = ApiVersionsResponse(
        error_code=ErrorCode.UNSUPPORTED_VERSION,
        api_keys=[ApiVersion(API_VERSIONS_KEY, min_version, max_version)],
    )
    return encode_response(API_VERSIONS_KEY, 0, correlation_id, body)


def encode_request(header: RequestHeader, request: Message) -> bytes:
    """A whole request frame, size prefix included (for test clients and tools)."""
    flexible = APIS[header.request_api_key].flexible(header.request_api_version)
    payload = encode_request_header(header, flexible) + request.encode(header.request_api_version)
    return INT32.pack(len(payload)) + payload


def decode_response(api_key: int, api_version: int, frame: bytes) -> tuple[int, Any]:
    """Decode a response frame (without its size prefix) into (correlation id, response)."""
    api = APIS[api_key]
    correlation_id, pos = decode_response_header(frame, response_header_version(api_key, api.flexible(api_version)))
    body, _ = api.response.decode_from(frame, api_version, pos)
    return correlation_id, body
