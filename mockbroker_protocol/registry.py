"""The API registry: api key -> generated request/response classes, and whole-frame decode/encode.

The broker's request path is ``decode_request(frame)`` -> handler -> ``encode_response(...)``;
test clients use the mirror pair ``encode_request`` / ``decode_response``. Header versions
follow from the body's: a flexible request uses request header v2 and its response header v1,
except that an ApiVersions response always uses header v0 (KIP-511), so that a client can read
the reply to a version the broker did not understand.

Loading is lazy: ``APIS`` is built from the generated static table ``mockbroker_protocol.messages.API_VERSIONS``
(names, versions, flexible versions), and an API's generated module is imported on the first use of
its classes (the first request of that API), through one replaceable loader (``set_module_loader``).
Importing every codec module at start-up cost about half of a cold broker process's start.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from struct import Struct
from types import ModuleType
from typing import Any, ClassVar, Protocol

from mockbroker_protocol.errors import ErrorCode, UnknownApiError, UnsupportedVersionError
from mockbroker_protocol.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    peek_api_key_version,
    response_header_version,
)
from mockbroker_protocol.messages import API_MODULES, API_VERSIONS
from mockbroker_protocol.primitives import INT32, Buffer, read_nullable_string, skip_tagged_fields
from mockbroker_protocol.schema import MessageSpec

API_VERSIONS_KEY = 18
PRODUCE_KEY = 0  # decoded from a caller-owned bytearray frame as it is (decode_request)
_HEADER_FIXED = Struct(">hhi")  # request header: api key, api version, correlation id
_HEADER_V1 = Struct(">hhih")  # the same and the client id's length (header v1 and v2)
_CORRELATION = Struct(">i")  # a response's header v0


class Message(Protocol):
    """What every generated top-level message class provides."""

    SPEC: ClassVar[MessageSpec]

    def encode(self, version: int) -> bytes: ...

    def encode_chunks(self, version: int, head: bytes = b"") -> list[Buffer]: ...


def import_message_module(module_name: str) -> ModuleType:
    """The default module loader: the pure-Python generated module ``mockbroker_protocol.messages.<name>``."""
    return importlib.import_module(f"mockbroker_protocol.messages.{module_name}")


# The one place an API's generated module is imported; set_module_loader swaps it (for example for
# a resolver that prefers a compiled variant of the module and falls back to the pure one).
_module_loader: Callable[[str], ModuleType] = import_message_module


class Api:
    """One API: its name and versions from the generated static table (mockbroker_protocol.messages.API_VERSIONS),
    its request and response classes imported from its module on first use.

    Start-up imports none of the 34 codec modules: routing a request, framing a response and
    advertising versions need only the table; the first request of an API imports its module.
    """

    __slots__ = ("_request", "_response", "flexible_versions", "key", "module_name", "name", "versions")

    def __init__(
        self, key: int, name: str, module_name: str, versions: tuple[int, int], flexible_versions: tuple[int, int] | None
    ) -> None:
        self.key = key
        self.name = name  # e.g. "JoinGroup"
        self.module_name = module_name  # under mockbroker_protocol.messages
        self.versions = versions  # what the codec decodes (Kafka 4.3's, plus old ones clients still send)
        self.flexible_versions = flexible_versions
        self._request: Any = None
        self._response: Any = None

    def __repr__(self) -> str:
        return f"Api({self.key}, {self.name!r}, v{self.versions[0]}-{self.versions[1]})"

    @property
    def loaded(self) -> bool:
        return self._request is not None

    @property
    def request(self) -> Any:
        """The generated request class (imports the module on first use)."""
        return self._request if self._request is not None else self._load()[0]

    @property
    def response(self) -> Any:
        """The generated response class (imports the module on first use)."""
        return self._response if self._response is not None else self._load()[1]

    def flexible(self, version: int) -> bool:
        fv = self.flexible_versions
        return fv is not None and fv[0] <= version <= fv[1]

    def _load(self) -> tuple[Any, Any]:
        mod = _module_loader(self.module_name)
        request = response = None
        for n in mod.__all__:
            cls = getattr(mod, n)
            spec = getattr(cls, "SPEC", None)
            if not isinstance(spec, MessageSpec) or spec.api_key != self.key:
                continue
            if n.endswith("Request"):
                request = cls
            elif n.endswith("Response"):
                response = cls
        if request is None or response is None:
            raise ImportError(f"{mod.__name__} lacks the request or response class of api key {self.key}")
        # The static table is generated from the same specs; a module that disagrees is stale.
        if (tuple(request.SPEC.valid_versions), request.SPEC.flexible_versions) != (
            self.versions,
            self.flexible_versions,
        ):
            raise ImportError(f"{mod.__name__} disagrees with mockbroker_protocol.messages.API_VERSIONS: run `make regen`")
        self._request, self._response = request, response
        return request, response


APIS: dict[int, Api] = {
    key: Api(key, name, API_MODULES[key], versions, flexible)
    for key, (name, versions, flexible) in API_VERSIONS.items()
}


def set_module_loader(loader: Callable[[str], ModuleType] | None) -> None:
    """Import generated modules with ``loader(module_name)`` from now on (None: the default, pure
    modules). APIs already loaded are forgotten, so that their next use goes through ``loader``."""
    global _module_loader
    _module_loader = loader or import_message_module
    for api in APIS.values():
        api._request = api._response = None


def decode_request(frame: bytes | bytearray) -> tuple[RequestHeader, Any]:
    """Decode one request frame (without its size prefix) into (header, request).

    Raises UnknownApiError or UnsupportedVersionError (carrying what a reply needs) for APIs
    and versions this codec does not know, and DecodeError for malformed bytes.

    ``frame`` is ``bytes``, or a bytearray the caller owns (large frames, mockbroker_protocol.framing.OwnedFrame):
    Produce is decoded from that buffer itself, so its record batches are slices of it that the
    broker's log can keep without a copy; every other API's decoder takes bytes, and gets a copy.
    """
    # The broker's hot path: the header is read here in one pass (decode_request_header's work).
    # Fixed fields and the client id's length in one unpack; anything unusual (a short frame, a
    # null, overlong or non-UTF-8 client id) is read by the general code, which raises the error.
    if len(frame) >= 10:
        api_key, api_version, correlation_id, n = _HEADER_V1.unpack_from(frame)
    else:
        if len(frame) < 8:
            peek_api_key_version(frame)  # raises TruncatedError naming what is missing
        api_key, api_version, correlation_id = _HEADER_FIXED.unpack_from(frame)
        n = -2
    api = APIS.get(api_key)
    if api is None:
        raise UnknownApiError(api_key, api_version, correlation_id)
    lo, hi = api.versions
    if not lo <= api_version <= hi:
        # Header v1 is a prefix of v2, so the client id can be read without knowing flexibility.
        header, _ = decode_request_header(frame, False)
        raise UnsupportedVersionError(api_key, api_version, correlation_id, header.client_id)
    pos = 10 + n
    client_id: str | None
    if n >= 0 and pos <= len(frame):
        try:
            client_id = frame[10:pos].decode()
        except UnicodeDecodeError:
            client_id, pos = read_nullable_string(frame, 8)  # raises InvalidValueError
    else:
        client_id, pos = read_nullable_string(frame, 8)
    fv = api.flexible_versions
    if fv is not None and fv[0] <= api_version <= fv[1]:
        # Header v2: a tagged-fields section (KIP-482), nearly always empty (one zero byte).
        if pos < len(frame) and frame[pos] == 0:
            pos += 1
        else:
            pos = skip_tagged_fields(frame, pos)
    if type(frame) is not bytes and api_key != PRODUCE_KEY:
        frame = bytes(frame)  # the decoders slice bytes (compiled ones accept nothing else)
    request = api._request if api._request is not None else api._load()[0]
    body, _ = request.decode_from(frame, api_version, pos)
    return RequestHeader(api_key, api_version, correlation_id, client_id), body


def encode_response(api_key: int, api_version: int, correlation_id: int, response: Message) -> list[Buffer]:
    """Frame a response for ``writelines``: size prefix and header in front, record buffers
    passed through as chunks of their own."""
    fv = APIS[api_key].flexible_versions
    # Response header v1 (a tagged-fields byte) for flexible versions, except ApiVersions (KIP-511).
    if fv is not None and fv[0] <= api_version <= fv[1] and api_key != API_VERSIONS_KEY:
        head = _CORRELATION.pack(correlation_id) + b"\x00"
    else:
        head = _CORRELATION.pack(correlation_id)
    # The body is encoded after ``head`` into the first chunk; the size prefix, known only then, is
    # a chunk of its own (``writelines`` sends them together), so the encoding is not copied again.
    chunks = response.encode_chunks(api_version, head)
    size = 0
    for chunk in chunks:
        size += len(chunk)
    chunks.insert(0, INT32.pack(size))
    return chunks


class Encoded:
    """A response body encoded already (a cached answer), framed by ``encode_response`` like a
    generated message: ``encode_chunks`` puts it after the frame head.

    ``valid``, when given, is the answer's promise to the broker's request path: the same request
    bytes (all but the correlation id) get this very body for as long as ``valid(cluster)`` is true
    (called with the broker's cluster: an entry must not hold the cluster itself), so the path may
    answer them again without decoding or calling the handler (mockbroker.dispatch). Only an answer
    that depends on nothing else (not the broker, the client or the time) and whose handler has no
    side effects may carry it."""

    __slots__ = ("body", "valid")

    def __init__(self, body: bytes, valid: Callable[[Any], bool] | None = None) -> None:
        self.body = body
        self.valid = valid

    def encode(self, version: int) -> bytes:
        return self.body

    def encode_chunks(self, version: int, head: bytes = b"") -> list[Buffer]:
        return [head, self.body] if head else [self.body]


def unsupported_api_versions_response(correlation_id: int, min_version: int, max_version: int) -> list[Buffer]:
    """The KIP-511 reply to ApiVersions at a version the broker does not know: v0 layout,
    UNSUPPORTED_VERSION, and the ApiVersions range the broker does support, from which the
    client picks the version to retry with (kafka-python and librdkafka both do)."""
    from mockbroker_protocol.messages.api_versions import ApiVersion, ApiVersionsResponse

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
