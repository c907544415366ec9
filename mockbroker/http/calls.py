"""What one operation of the HTTP control API is (``Op``: method, path, parameters, body and answer
schemas, handler) and what its handler gets (``Call``) and may return (``Reply``); the parsing of
a path or query parameter from its text."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from mockbroker.http.components import COMPONENTS, check
from mockbroker.http.schema import BadInput, Schema, resolve


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    where: str  # "path" or "query" ("header" for Last-Event-ID, parsed by its handler)
    schema: Schema
    description: str = ""
    required: bool = False


@dataclass(slots=True)
class Call:
    """One request, its parameters and body already checked and converted."""

    request: web.Request
    path: dict[str, Any]
    query: dict[str, Any]
    body: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer with a status other than the operation's own (a 503 from /readyz, a 204)."""

    status: int
    body: Any = None


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Op:
    method: str
    path: str
    handler: Handler
    summary: str
    tag: str
    response: Schema | None  # JSON schema of the success body (None: no body)
    params: tuple[Param, ...] = ()
    body: Schema | None = None
    body_required: bool = False
    status: int = 200
    errors: tuple[int, ...] = ()
    content_type: str = "application/json"
    description: str = ""

    @property
    def operation_id(self) -> str:
        return self.handler.__name__.strip("_")


def path_param(name: str, schema: Schema, description: str = "") -> Param:
    return Param(name, "path", schema, description, required=True)


def query(name: str, schema: Schema, description: str = "") -> Param:
    return Param(name, "query", schema, description)


def required_query(name: str, schema: Schema, description: str = "") -> Param:
    return Param(name, "query", schema, description, required=True)


def parse_param(param: Param, raw: str) -> Any:
    """A parameter's text as its schema's type (integer, boolean or string), checked."""
    where = f"{param.where}.{param.name}"
    kind = resolve(param.schema, COMPONENTS).get("type")
    value: Any = raw
    if kind == "integer":
        if not re.fullmatch(r"-?[0-9]{1,19}", raw.strip()):
            raise BadInput(where, f"must be an integer, not {raw!r}")
        value = int(raw)
    elif kind == "boolean":
        if raw.lower() not in ("true", "false"):
            raise BadInput(where, f"must be true or false, not {raw!r}")
        value = raw.lower() == "true"
    return check(param.schema, value, where)
