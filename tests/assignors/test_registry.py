"""Tests of mockbroker_assignors.registry: built-ins by name, register(), "module:attr" loading, entry points,
and the README's custom-assignor example end to end."""

from __future__ import annotations

import re
import sys
import tomllib
import types
from collections.abc import Iterable
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from hypothesis import given

import mockbroker_assignors.registry as registry
from mockbroker_assignors.range import RangeAssignor
from mockbroker_assignors.registry import ENTRY_POINT_GROUP, AssignorRegistry, UnknownAssignorError, load
from mockbroker_assignors.roundrobin import RoundRobinAssignor
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSpec,
    GroupSubscription,
    MemberAssignment,
    RebalanceProtocol,
    TargetAssignment,
    TopicPartition,
)
from tests.assignors.properties import MODEST, check_common_properties, topologies

HERE = "tests.assignors.test_registry"

# -- plugins used by these tests (loaded by reference as tests.assignors.test_registry:<Name>) ------------


class ReverseAssignor:
    """Range-like, but members in reverse id order: a valid client-side plugin."""

    name: str = "reverse"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE)

    def assign(self, cluster: ClusterMetadata, subscriptions: GroupSubscription) -> GroupAssignment:
        members = sorted(subscriptions, reverse=True)
        owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            takers = [m for m in members if topic in subscriptions[m].topics]
            for p in range(cluster.partitions_for(topic)):
                owned[takers[p % len(takers)]].append(TopicPartition(topic, p))
        return {m: MemberAssignment(tuple(ps)) for m, ps in owned.items()}


class FirstTakesAllServerAssignor:
    """A valid (if silly) server-side plugin: no supported_protocols, assign(group, cluster)."""

    name: str = "first-takes-all"

    def assign(self, group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment:
        out: TargetAssignment = {m: {} for m in group.members}
        for m in sorted(group.members):
            for t in group.members[m].subscribed_topics:
                if not any(t in a for a in out.values()):
                    out[m][t] = frozenset(range(cluster.partitions_for(t)))
        return out


class NeedsArguments(ReverseAssignor):
    def __init__(self, required: int) -> None:
        self.required = required


class NoName:
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(self, cluster: object, subscriptions: object) -> GroupAssignment:
        return {}


class BadProtocols(ReverseAssignor):
    name = "bad-protocols"
    supported_protocols = ("EAGER",)  # type: ignore[assignment]


class OneArgumentAssign:
    name = "one-arg"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(self, cluster: object) -> GroupAssignment:
        return {}


class Namespace:
    Nested = ReverseAssignor


def not_an_assignor() -> None:
    """A function, not an assignor."""


def entry_point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP)


def fresh(*points: EntryPoint) -> AssignorRegistry:
    found: list[EntryPoint] = list(points)

    def entry_points() -> Iterable[EntryPoint]:
        return found

    return AssignorRegistry(entry_points=entry_points)


# -- built-ins ------------------------------------------------------------------------------------------


def test_builtin_names_are_listed() -> None:
    reg = fresh()
    assert reg.names() == ["cooperative-sticky", "range", "roundrobin", "sticky"]
    assert reg.server_names() == ["range", "uniform"]
    assert registry.CLIENT_BUILTINS["sticky"] == "mockbroker_assignors.sticky:StickyAssignor"
    assert registry.CLIENT_BUILTINS["cooperative-sticky"] == "mockbroker_assignors.cooperative_sticky:CooperativeStickyAssignor"
    assert registry.SERVER_BUILTINS == {
        "uniform": "mockbroker_assignors.uniform:UniformAssignor",
        "range": "mockbroker_assignors.server_range:ServerRangeAssignor",
    }


def test_get_builtins() -> None:
    reg = fresh()
    assert isinstance(reg.get("range"), RangeAssignor)
    assert isinstance(reg.get("roundrobin"), RoundRobinAssignor)
    assert reg.get("range") is reg.get("range")  # one instance per registry
    assert isinstance(registry.get("range"), RangeAssignor)  # the default registry
    assert isinstance(registry.resolve("roundrobin"), RoundRobinAssignor)


def test_builtins_are_imported_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "CLIENT_BUILTINS", {**registry.CLIENT_BUILTINS, "later": "no_such_module_xyz:Later"})
    reg = fresh()
    assert "later" in reg.names()  # listing imports nothing
    assert isinstance(reg.get("range"), RangeAssignor)  # others still work
    with pytest.raises(ImportError, match=r"built-in assignor 'later' \(no_such_module_xyz:Later\) could not be imported"):
        reg.get("later")


def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(KeyError) as info:
        fresh().get("nope")
    assert isinstance(info.value, UnknownAssignorError)
    assert str(info.value) == "no client-side assignor named 'nope'; known: cooperative-sticky, range, roundrobin, sticky"
    with pytest.raises(UnknownAssignorError, match="no server-side assignor named 'sticky'; known: range, uniform"):
        fresh().get_server("sticky")


def test_wrong_side_gets_a_hint() -> None:
    with pytest.raises(UnknownAssignorError, match=r"'uniform' is a server-side assignor; use get_server\(\)"):
        fresh().get("uniform")


# -- register ---------------------------------------------------------------------------------------------


def test_register_client_and_server_plugins() -> None:
    reg = fresh()
    instance = reg.register(ReverseAssignor)  # a class is instantiated
    assert isinstance(instance, ReverseAssignor)
    assert reg.get("reverse") is instance
    assert "reverse" in reg.names()
    server = reg.register(FirstTakesAllServerAssignor())
    assert reg.get_server("first-takes-all") is server
    assert "first-takes-all" in reg.server_names() and "first-takes-all" not in reg.names()


def test_register_refuses_a_taken_name_unless_replacing() -> None:
    reg = fresh()

    class MyRange(ReverseAssignor):
        name = "range"

    with pytest.raises(ValueError, match="a client-side assignor named 'range' exists; pass replace=True"):
        reg.register(MyRange)
    replacement = reg.register(MyRange, replace=True)
    assert reg.get("range") is replacement


def test_unregister() -> None:
    reg = fresh()
    reg.register(ReverseAssignor)
    reg.unregister("reverse")
    reg.unregister("roundrobin")
    assert reg.names() == ["cooperative-sticky", "range", "sticky"]
    with pytest.raises(UnknownAssignorError):
        reg.unregister("reverse")
    reg.unregister("uniform", server=True)
    assert reg.server_names() == ["range"]


@pytest.mark.parametrize(
    ("plugin", "message"),
    [
        (NeedsArguments, r"cannot instantiate NeedsArguments\(\) without arguments"),
        (NoName, r"NoName is not a valid Assignor or ServerAssignor: 'name' must be a non-empty str"),
        (BadProtocols, r"'supported_protocols' must be a non-empty tuple of RebalanceProtocol, got \('EAGER',\)"),
        (OneArgumentAssign, r"'assign' must take two arguments"),
        (not_an_assignor, r"function is not a valid Assignor or ServerAssignor: 'name' must be .*; 'assign' must be a method"),
        (42, r"int is not a valid"),
    ],
)
def test_register_refuses_what_is_not_an_assignor(plugin: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        fresh().register(plugin)


# -- load("module:attr") -------------------------------------------------------------------------------


def test_load_by_reference() -> None:
    assert isinstance(load(f"{HERE}:ReverseAssignor"), ReverseAssignor)
    assert isinstance(load(f"{HERE}:Namespace.Nested"), ReverseAssignor)  # dotted attribute path
    assert isinstance(load(f"{HERE}:FirstTakesAllServerAssignor", kind="server"), FirstTakesAllServerAssignor)
    assert isinstance(load("mockbroker_assignors.range:RangeAssignor", kind="client"), RangeAssignor)
    assert isinstance(fresh().resolve(f"{HERE}:ReverseAssignor"), ReverseAssignor)
    assert isinstance(fresh().resolve_server(f"{HERE}:FirstTakesAllServerAssignor"), FirstTakesAllServerAssignor)


def test_load_errors_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"not of the form 'package\.module:Attribute'"):
        load("mockbroker_assignors.range.RangeAssignor")
    with pytest.raises(ImportError, match="cannot import module 'no_such_module_xyz'"):
        load("no_such_module_xyz:Thing")
    with pytest.raises(ImportError, match="has no attribute 'Missing'"):
        load(f"{HERE}:Missing")
    with pytest.raises(TypeError, match="no 'supported_protocols', so it is a server-side assignor, not a client-side one"):
        load(f"{HERE}:FirstTakesAllServerAssignor", kind="client")
    with pytest.raises(TypeError, match="it has 'supported_protocols', so it is a client-side assignor"):
        fresh().resolve_server(f"{HERE}:ReverseAssignor")


# -- entry points ------------------------------------------------------------------------------------------


def test_entry_point_plugins_are_found_by_name() -> None:
    reg = fresh(entry_point("reverse", f"{HERE}:ReverseAssignor"),
                entry_point("first-takes-all", f"{HERE}:FirstTakesAllServerAssignor"))
    assert isinstance(reg.get("reverse"), ReverseAssignor)
    assert isinstance(reg.get_server("first-takes-all"), FirstTakesAllServerAssignor)
    assert reg.names() == ["cooperative-sticky", "range", "reverse", "roundrobin", "sticky"]
    assert reg.server_names() == ["first-takes-all", "range", "uniform"]


def test_broken_entry_points_are_skipped_with_a_warning_and_explained_on_lookup() -> None:
    reg = fresh(
        entry_point("gone", "no_such_module_xyz:Gone"),
        entry_point("range", f"{HERE}:BadProtocols"),
        entry_point("misnamed", f"{HERE}:ReverseAssignor"),
        entry_point("reverse", f"{HERE}:ReverseAssignor"),
    )
    with pytest.warns(RuntimeWarning) as warned:
        names = reg.names()
    assert names == ["cooperative-sticky", "range", "reverse", "roundrobin", "sticky"]
    messages = [str(w.message) for w in warned]
    assert len(messages) == 3
    assert "entry point 'gone'" in messages[0] and "No module named 'no_such_module_xyz'" in messages[0]
    assert "'supported_protocols' must be" in messages[1]
    assert "the entry point's name must be the assignor's name 'reverse'" in messages[2]
    assert isinstance(reg.get("range"), RangeAssignor)  # the built-in still answers
    with pytest.raises(UnknownAssignorError, match=r"entry point 'gone' was skipped: .*no_such_module_xyz"):
        reg.get("gone")


def test_entry_point_cannot_take_a_builtin_name() -> None:
    class Impostor(ReverseAssignor):
        name = "roundrobin"

    module = types.ModuleType("impostor_plugin_xyz")
    module.Impostor = Impostor  # type: ignore[attr-defined]
    sys.modules["impostor_plugin_xyz"] = module
    try:
        reg = fresh(entry_point("roundrobin", "impostor_plugin_xyz:Impostor"))
        with pytest.warns(RuntimeWarning, match="the name 'roundrobin' is already taken"):
            assert reg.names()
        assert isinstance(reg.get("roundrobin"), RoundRobinAssignor)
    finally:
        del sys.modules["impostor_plugin_xyz"]


def test_default_registry_reads_the_installed_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        asked.append(group)
        return [entry_point("reverse", f"{HERE}:ReverseAssignor")]

    monkeypatch.setattr("importlib.metadata.entry_points", fake_entry_points)
    reg = AssignorRegistry()
    assert isinstance(reg.get("reverse"), ReverseAssignor)
    assert asked == ["mockbroker.assignors"]


# -- the README's custom assignor, end to end ----------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "mockbroker_assignors" / "README.md"


def readme_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.DOTALL)


@pytest.fixture
def readme_plugin(monkeypatch: pytest.MonkeyPatch) -> type:
    """The README's mypkg/assignors.py, importable as mypkg.assignors."""
    (source,) = [b for b in readme_blocks("python") if b.startswith('"""mypkg/assignors.py')]
    package, module = types.ModuleType("mypkg"), types.ModuleType("mypkg.assignors")
    package.__path__ = []
    exec(compile(source, "README.md:mypkg/assignors.py", "exec"), module.__dict__)
    package.assignors = module  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mypkg", package)
    monkeypatch.setitem(sys.modules, "mypkg.assignors", module)
    plugin: type = module.TopicRoundRobinAssignor
    return plugin


def test_readme_plugin_by_entry_point_by_reference_and_by_register(readme_plugin: type) -> None:
    (toml,) = [b for b in readme_blocks("toml") if ENTRY_POINT_GROUP in b]
    declared = tomllib.loads(toml)["project"]["entry-points"][ENTRY_POINT_GROUP]
    reg = fresh(*(entry_point(name, value) for name, value in declared.items()))
    via_entry_point = reg.get("topic-roundrobin")
    assert isinstance(via_entry_point, readme_plugin)
    assert isinstance(reg.resolve("mypkg.assignors:TopicRoundRobinAssignor"), readme_plugin)
    other = fresh()
    other.register(readme_plugin)
    assert isinstance(other.get("topic-roundrobin"), readme_plugin)


@MODEST
@given(topologies())
def test_readme_plugin_keeps_the_common_properties(topology: tuple[ClusterMetadata, GroupSubscription]) -> None:
    # Hypothesis and function-scoped fixtures do not mix: build the module here.
    (source,) = [b for b in readme_blocks("python") if b.startswith('"""mypkg/assignors.py')]
    namespace: dict[str, object] = {}
    exec(compile(source, "README.md:mypkg/assignors.py", "exec"), namespace)
    plugin = registry.coerce(namespace["TopicRoundRobinAssignor"], source="README", kind="client")
    cluster, subscriptions = topology
    check_common_properties(plugin, cluster, subscriptions, plugin.assign(cluster, subscriptions))  # type: ignore[arg-type]
