"""Request and response headers: decode/encode, and which header version an API version uses.

Request header (RequestHeader.json):
- v1: request_api_key int16, request_api_version int16, correlation_id int32,
  client_id NULLABLE_STRING (int16 length, -1 for null).
- v2 (the API version is flexible, KIP-482): v1 + a tagged-fields section. The client id stays a
  plain int16-length string, never compact, so that a broker can read it before it knows whether
  the API version is flexible (and a client can send ApiVersions at any version, KIP-511).
- v0 (no client id) is used only by ControlledShutdown v0, which mockbroker does not serve.

Response header (ResponseHeader.json): v0 = correlation_id int32; v1 = v0 + tagged fields.
The response of a flexible version uses v1, except ApiVersions, whose response always uses v0
(KIP-511): a client that sent a version the broker does not know can still read the reply.

Which versions are flexible is the registry's knowledge, not this module's: the registry reads
``peek_api_key_version`` first, looks the API version up, then calls ``decode_request_header``
with ``flexible``.
"""

from __future__ import annotations

from dataclasses import dataclass
from struct import Struct
from struct import error as StructError

from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import EncodeError, TruncatedError
from mockbroker_protocol.primitives import (
    Buffer,
    read_nullable_string,
    skip_tagged_fields,
    write_nullable_string,
)

__all__ = [
    "RequestHeader",
    "decode_request_header",
    "decode_response_header",
    "encode_request_header",
    "encode_response_header",
    "peek_api_key_version",
    "request_header_version",
    "response_header_version",
]

# The fixed first 8 bytes of every request header v1/v2: api key, api version, correlation id.
_FIXED = Struct(">hhi")
_CORRELATION_ID = Struct(">i")


@dataclass(slots=True)
class RequestHeader:
    request_api_key: int
    request_api_version: int
    correlation_id: int
    client_id: str | None


def request_header_version(flexible: bool) -> int:
    """Request header version for an API version: 2 if flexible, else 1 (v0 is not served)."""
    return 2 if flexible else 1


def response_header_version(api_key: int, flexible: bool) -> int:
    """Response header version for an API version: 1 if flexible, else 0, and always 0 for
    ApiVersions (KIP-511: the client parses the reply before it knows which versions we speak)."""
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if flexible else 0


def peek_api_key_version(data: Buffer, pos: int = 0) -> tuple[int, int, int]:
    """(api_key, api_version, correlation_id) from the fixed first 8 bytes of a request header.

    Enough to pick the schema, and to answer or log an unsupported request with its correlation id.
    """
    if len(data) - pos < _FIXED.size:
        raise TruncatedError(f"request header needs {_FIXED.size} bytes, frame has {max(len(data) - pos, 0)}")
    api_key, api_version, correlation_id = _FIXED.unpack_from(data, pos)
    return api_key, api_version, correlation_id


def decode_request_header(data: Buffer, flexible: bool, pos: int = 0) -> tuple[RequestHeader, int]:
    """Decode a request header v1 (``flexible=False``) or v2 (``flexible=True``) at ``pos``.

    Returns the header and the offset of the request body. Raises only DecodeError subclasses.
    """
    api_key, api_version, correlation_id = peek_api_key_version(data, pos)
    client_id, pos = read_nullable_string(data, pos + _FIXED.size)
    if flexible:
        # Header v2 defines no tagged fields; skip whatever a newer client sends (KIP-482: a reader
        # ignores tags it does not know).
        pos = skip_tagged_fields(data, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id), pos


def encode_request_header(header: RequestHeader, flexible: bool) -> bytes:
    """Encode a request header v1 or v2 (for test clients). Raises EncodeError on bad values."""
    out = bytearray()
    try:
        out += _FIXED.pack(header.request_api_key, header.request_api_version, header.correlation_id)
        write_nullable_string(out, header.client_id)
    except (StructError, ValueError) as exc:
        raise EncodeError(f"cannot encode request header {header!r}: {exc}") from None
    if flexible:
        out.append(0)  # empty tagged-fields section
    return bytes(out)


def encode_response_header(correlation_id: int, version: int) -> bytes:
    """Encode a response header v0 (correlation id) or v1 (plus an empty tagged-fields section)."""
    try:
        packed = _CORRELATION_ID.pack(correlation_id)
    except StructError as exc:
        raise EncodeError(f"cannot encode correlation id {correlation_id!r}: {exc}") from None
    if version == 0:
        return packed
    if version == 1:
        return packed + b"\x00"
    raise ValueError(f"response header version must be 0 or 1, not {version}")


def decode_response_header(data: Buffer, version: int, pos: int = 0) -> tuple[int, int]:
    """Decode a response header v0 or v1 at ``pos``: (correlation_id, offset of the body)."""
    if version not in (0, 1):
        raise ValueError(f"response header version must be 0 or 1, not {version}")
    if len(data) - pos < _CORRELATION_ID.size:
        raise TruncatedError(f"response header needs 4 bytes, frame has {max(len(data) - pos, 0)}")
    (correlation_id,) = _CORRELATION_ID.unpack_from(data, pos)
    pos += _CORRELATION_ID.size
    if version == 1:
        pos = skip_tagged_fields(data, pos)
    return correlation_id, pos
