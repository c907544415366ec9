"""The OpenAPI 3 document of the HTTP control API (``GET /openapi.json``), built from the same
operations table that routes and checks the requests (mockbroker/http/operations.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mockbroker import __version__
from mockbroker.http.calls import Op
from mockbroker.http.components import COMPONENTS
from mockbroker.http.schema import ref

UNPROTECTED = frozenset({"/healthz", "/readyz"})  # answered without the bearer token

_REASONS = {
    400: "bad input; `field` names it",
    401: "missing or wrong bearer token",
    404: "no such broker, topic, partition, group, member or fault",
    408: "the wait timed out",
    409: "the cluster's state refuses this",
    413: "request body too large",
    422: "well-formed, but Kafka's rules refuse it (a topic config out of range, a record too large, ...); "
    "for a read: a record that cannot be shown in this encoding",
}


def document(ops: Sequence[Op], token: str | None) -> dict[str, Any]:
    """The document of ``ops``; with a ``token``, every operation but the health checks needs it."""
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation_doc(op, token)
    doc: dict[str, Any] = {
        "openapi": "3.0.3",
        "info": {
            "title": "mockbroker control API",
            "version": __version__,
            "description": "Drive a running mockbroker cluster over HTTP: the same calls as the Python "
            "control API (mockbroker.control). Errors are {error, field?, kafka_error?}.",
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {"schemas": COMPONENTS},
    }
    if token is not None:
        doc["components"] = {**doc["components"], "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}}
        doc["security"] = [{"bearer": []}]
    return doc


def _operation_doc(op: Op, token: str | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "operationId": op.operation_id, "summary": op.summary, "tags": [op.tag], "responses": _responses(op, token),
    }  # fmt: skip
    if op.params:
        doc["parameters"] = [
            {"name": p.name, "in": p.where, "required": p.required, "schema": p.schema,
             **({"description": p.description} if p.description else {})}
            for p in op.params
        ]  # fmt: skip
    if op.body is not None:
        doc["requestBody"] = {"required": op.body_required, "content": {"application/json": {"schema": op.body}}}
    if op.path in UNPROTECTED:
        doc["security"] = []
    return doc


def _responses(op: Op, token: str | None) -> dict[str, Any]:
    error = {"application/json": {"schema": ref("Error")}}
    responses: dict[str, Any] = {}
    ok: dict[str, Any] = {"description": op.summary}
    if op.response is not None:
        ok["content"] = {op.content_type: {"schema": op.response}}
    responses[str(op.status)] = ok
    if op.path == "/readyz":
        responses["503"] = {"description": "not ready", "content": {"application/json": {"schema": op.response}}}
    codes = set(op.errors) - {503}
    if op.params or op.body is not None:
        codes.add(400)
    if op.body is not None:
        codes.add(413)
    if token is not None and op.path not in UNPROTECTED:
        codes.add(401)
    for code in sorted(codes):
        responses[str(code)] = {"description": _REASONS.get(code, "error"), "content": error}
    return responses
