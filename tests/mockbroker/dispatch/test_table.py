"""The lazy handler table (mockbroker/dispatch/table.py) agrees with the handler modules, and
start-up imports no codec or handler module (they load on the first request of their API)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import mockbroker.handlers as handlers_pkg
from mockbroker.dispatch.table import HANDLERS, TABLE
from mockbroker_protocol import registry
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.messages import API_MODULES, API_VERSIONS


def test_every_handler_module_is_in_the_table() -> None:
    on_disk = {m.name for m in pkgutil.iter_modules(handlers_pkg.__path__) if not m.name.startswith("_")}
    listed = {module for module, _, _ in TABLE.values()}
    assert on_disk == listed, (
        "add new handler modules to TABLE in mockbroker/dispatch/table.py: "
        f"not listed {sorted(on_disk - listed)}, listed but missing {sorted(listed - on_disk)}"
    )


def test_table_repeats_each_modules_declarations() -> None:
    for key, (module, versions, advertised_min) in TABLE.items():
        mod = importlib.import_module(f"mockbroker.handlers.{module}")
        assert type(key) is ApiKey and key == mod.API_KEY and type(mod.API_KEY) is ApiKey, module
        assert tuple(mod.VERSIONS) == versions, module
        assert getattr(mod, "ADVERTISED_MIN", None) == advertised_min, module
        handler = HANDLERS[key]
        assert handler.load() is mod.handle and handler.loaded
        assert handler.advertised_min == (versions[0] if advertised_min is None else advertised_min)


def test_registry_table_matches_the_generated_classes() -> None:
    assert set(API_VERSIONS) == set(API_MODULES) == set(registry.APIS)
    for key, api in registry.APIS.items():
        spec = api.request.SPEC  # loading checks the table against the module too
        assert (api.name + "Request", spec.api_key) == (spec.name, key)
        assert (tuple(spec.valid_versions), spec.flexible_versions) == (api.versions, api.flexible_versions)
        assert api.response.SPEC.flexible_versions == spec.flexible_versions


def test_a_module_loader_plugs_in() -> None:
    """set_module_loader is the hook a compiled-vs-pure resolver uses; loaded APIs reload through it."""
    seen: list[str] = []

    def loader(name: str) -> object:
        seen.append(name)
        return registry.import_message_module(name)

    try:
        registry.set_module_loader(loader)  # type: ignore[arg-type]
        assert not registry.APIS[12].loaded
        assert registry.APIS[12].request.SPEC.name == "HeartbeatRequest"
        assert seen == ["heartbeat"]
    finally:
        registry.set_module_loader(None)
    assert registry.APIS[12].request.SPEC.name == "HeartbeatRequest"


def test_start_up_imports_no_codec_or_handler_module() -> None:
    """What `mockbroker serve` imports before the first request: the registry, the handler table
    and the dispatch path, but none of the generated codec modules or handler modules, nor the
    group coordinator, the assignors or the produce path (they load with their first use)."""
    lazy = ("mockbroker_protocol.messages.", "mockbroker.handlers.", "mockbroker.coordinators.router", "mockbroker_assignors",
            "mockbroker.log.replica_manager", "mockbroker_protocol.records")  # fmt: skip
    code = (
        "import asyncio, sys, mockbroker.cli, mockbroker.dispatch.dispatch, mockbroker.net.server\n"
        "from mockbroker.cluster import MockCluster\n"
        "async def main():\n"
        "    await (await MockCluster(port=0).start()).stop()\n"
        "asyncio.run(main())\n"
        f"bad = sorted(m for m in sys.modules if m.startswith({lazy!r}))\n"
        "print(' '.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == []
