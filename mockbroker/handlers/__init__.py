"""The handler table: one thin module per API, each declaring the versions it serves.

A handler module defines ``API_KEY``, ``VERSIONS = (min, max)``, optionally ``ADVERTISED_MIN``
(what ApiVersions advertises when it differs from what is served; see produce) and
``async def handle(ctx, request) -> response | None``. ApiVersions is built from this table,
so an API is advertised exactly when a handler serves it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from protocol.registry import APIS

# Every module in this package serves one API; they are found, not listed.
MODULES = tuple(sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")))


@dataclass(frozen=True, slots=True)
class Handler:
    api_key: int
    name: str
    versions: tuple[int, int]
    advertised_min: int
    handle: Callable[[Any, Any], Awaitable[Any]]


def _load() -> dict[int, Handler]:
    table: dict[int, Handler] = {}
    for name in MODULES:
        mod = importlib.import_module(f"mockbroker.handlers.{name}")
        key = int(mod.API_KEY)
        lo, hi = mod.VERSIONS
        codec_lo, codec_hi = APIS[key].versions
        if lo < codec_lo or hi > codec_hi:
            raise RuntimeError(f"{name} serves v{lo}-{hi} but the codec decodes only v{codec_lo}-{codec_hi}")
        if key in table:
            raise RuntimeError(f"two handlers for api key {key}")
        table[key] = Handler(key, APIS[key].name, (lo, hi), getattr(mod, "ADVERTISED_MIN", lo), mod.handle)
    return table


HANDLERS: dict[int, Handler] = _load()
