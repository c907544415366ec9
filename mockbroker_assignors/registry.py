"""Assignor registry: the built-in assignors by protocol name, plus plugins.

Two namespaces, as in Kafka: client-side assignors (classic groups; the name is the protocol name
members offer in JoinGroup, e.g. "range", "cooperative-sticky") and server-side assignors
(KIP-848 consumer groups; the name a member asks for in ConsumerGroupHeartbeat's
``ServerAssignor``, e.g. "uniform", "range"). "range" is in both, and means different code.

Where assignors come from, in the order a name is looked up:
1. the built-ins (imported on first use, so each module only loads when asked for),
2. ``register(assignor)`` calls (programmatic plugins),
3. the ``mockbroker.assignors`` entry-point group of installed distributions,
and, not by name but by reference, ``load("package.module:Attribute")``.

A plugin is a class (instantiated with no arguments) or an instance. It is a client-side
assignor when it has ``supported_protocols`` (see ``mockbroker_assignors.base.Assignor``), otherwise a
server-side one (``mockbroker_assignors.base.ServerAssignor``); either way it needs a non-empty ``name`` and
an ``assign`` taking two arguments. Anything else is refused with a TypeError saying what is
missing. One instance serves every lookup, so assignors should keep no state between calls.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, cast

from mockbroker_assignors.base import Assignor, ServerAssignor
from mockbroker_assignors.types import RebalanceProtocol

__all__ = [
    "CLIENT_BUILTINS",
    "ENTRY_POINT_GROUP",
    "SERVER_BUILTINS",
    "AssignorRegistry",
    "Kind",
    "UnknownAssignorError",
    "coerce",
    "default_registry",
    "get",
    "get_server",
    "kind_of",
    "load",
    "names",
    "register",
    "resolve",
    "resolve_server",
    "server_names",
    "unregister",
]

ENTRY_POINT_GROUP = "mockbroker.assignors"

# Protocol name -> "module:attr"; imported lazily, since the modules are independent of each other.
CLIENT_BUILTINS: Mapping[str, str] = {
    "range": "mockbroker_assignors.range:RangeAssignor",
    "roundrobin": "mockbroker_assignors.roundrobin:RoundRobinAssignor",
    "sticky": "mockbroker_assignors.sticky:StickyAssignor",
    "cooperative-sticky": "mockbroker_assignors.cooperative_sticky:CooperativeStickyAssignor",
}
SERVER_BUILTINS: Mapping[str, str] = {
    "uniform": "mockbroker_assignors.uniform:UniformAssignor",
    "range": "mockbroker_assignors.server_range:ServerRangeAssignor",
}

Kind = Literal["client", "server"]
AnyAssignor = Assignor | ServerAssignor


class UnknownAssignorError(KeyError):
    """No assignor of this kind by this name; the message lists the names that are known."""

    def __init__(self, name: str, kind: Kind, known: Iterable[str], hint: str = "") -> None:
        side = "client-side" if kind == "client" else "server-side"
        message = f"no {side} assignor named {name!r}; known: {', '.join(sorted(known)) or '(none)'}"
        self.message = message + (f" ({hint})" if hint else "")
        super().__init__(name)

    def __str__(self) -> str:  # KeyError would show repr(name) only
        return self.message


def _import_attr(spec: str) -> object:
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise ValueError(f"assignor reference {spec!r} is not of the form 'package.module:Attribute'")
    try:
        obj: object = importlib.import_module(module_name)
    except ImportError as e:
        raise ImportError(f"assignor reference {spec!r}: cannot import module {module_name!r}: {e}") from e
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            raise ImportError(
                f"assignor reference {spec!r}: {module_name} has no attribute {attr_path!r}"
            ) from e
    return obj


def _two_positional(method: Callable[..., object]) -> bool:
    try:
        inspect.signature(method).bind(None, None)
    except TypeError:
        return False
    except ValueError:  # no signature available (some builtins): give it the benefit of the doubt
        return True
    return True


def coerce(obj: object, *, source: str, kind: Kind | None = None) -> AnyAssignor:
    """Turn a plugin object into a validated assignor instance: instantiate a class, then check it
    against the Assignor / ServerAssignor protocols. ``source`` names it in error messages."""
    if isinstance(obj, type):
        cls = obj
        try:
            obj = cls()
        except Exception as e:
            raise TypeError(
                f"{source}: cannot instantiate {cls.__qualname__}() without arguments: {e}"
            ) from e

    problems: list[str] = []
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        problems.append(f"'name' must be a non-empty str (protocol name), got {name!r}")
    assign = getattr(obj, "assign", None)
    if not callable(assign):
        problems.append("'assign' must be a method")
    elif not _two_positional(assign):
        problems.append("'assign' must take two arguments (cluster, subscriptions) or (group, cluster)")

    is_client = hasattr(obj, "supported_protocols")
    if is_client:
        protocols = getattr(obj, "supported_protocols", None)
        if (
            not isinstance(protocols, tuple | list)
            or not protocols
            or not all(isinstance(p, RebalanceProtocol) for p in protocols)
        ):
            problems.append(
                f"'supported_protocols' must be a non-empty tuple of RebalanceProtocol, got {protocols!r}"
            )
    actual: Kind = "client" if is_client else "server"
    if kind is not None and actual != kind and not problems:
        if kind == "client":
            problems.append(
                "it has no 'supported_protocols', so it is a server-side assignor, not a client-side one"
            )
        else:
            problems.append(
                "it has 'supported_protocols', so it is a client-side assignor, not a server-side one"
            )
    if problems:
        wanted = {"client": "Assignor", "server": "ServerAssignor", None: "Assignor or ServerAssignor"}[kind]
        raise TypeError(f"{source}: {type(obj).__qualname__} is not a valid {wanted}: " + "; ".join(problems))
    return cast(Assignor, obj) if is_client else cast(ServerAssignor, obj)


def kind_of(assignor: AnyAssignor) -> Kind:
    return "client" if hasattr(assignor, "supported_protocols") else "server"


def _installed_entry_points() -> Iterable[importlib.metadata.EntryPoint]:
    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


class AssignorRegistry:
    """Assignors by name, client-side and server-side kept apart.

    ``entry_points`` supplies the plugin entry points (default: the installed distributions'
    ``mockbroker.assignors`` group); they are read once, on the first lookup of a name that is
    neither built in nor registered, or when names are listed. An entry point that cannot be
    loaded, is not an assignor, or reuses a taken name is skipped with a warning, and looking up
    its name raises the reason."""

    def __init__(
        self,
        *,
        builtins: bool = True,
        entry_points: Callable[[], Iterable[importlib.metadata.EntryPoint]] = _installed_entry_points,
    ) -> None:
        self._specs: dict[Kind, dict[str, str]] = {
            "client": dict(CLIENT_BUILTINS) if builtins else {},
            "server": dict(SERVER_BUILTINS) if builtins else {},
        }
        self._loaded: dict[Kind, dict[str, AnyAssignor]] = {"client": {}, "server": {}}
        self._entry_points = entry_points
        self._discovered = False
        self._broken: dict[str, Exception] = {}

    # -- lookups ------------------------------------------------------------------------------

    def get(self, name: str) -> Assignor:
        """The client-side assignor for protocol name ``name``; UnknownAssignorError if none."""
        return cast(Assignor, self._get(name, "client"))

    def get_server(self, name: str) -> ServerAssignor:
        """The server-side (KIP-848) assignor named ``name``; UnknownAssignorError if none."""
        return cast(ServerAssignor, self._get(name, "server"))

    def resolve(self, name_or_spec: str) -> Assignor:
        """``get(name)``, or for a ``"module:attr"`` reference ``load`` it as a client-side assignor."""
        if ":" in name_or_spec:
            return cast(Assignor, load(name_or_spec, kind="client"))
        return self.get(name_or_spec)

    def resolve_server(self, name_or_spec: str) -> ServerAssignor:
        """``get_server(name)``, or for a ``"module:attr"`` reference ``load`` it as a server-side one."""
        if ":" in name_or_spec:
            return cast(ServerAssignor, load(name_or_spec, kind="server"))
        return self.get_server(name_or_spec)

    def names(self) -> list[str]:
        """Client-side protocol names, sorted (built-ins are listed without importing them)."""
        self._discover()
        return sorted(self._known("client"))

    def server_names(self) -> list[str]:
        """Server-side assignor names, sorted."""
        self._discover()
        return sorted(self._known("server"))

    # -- changes --------------------------------------------------------------------------------

    def register(self, assignor: object, *, replace: bool = False) -> AnyAssignor:
        """Add a client- or server-side assignor (class or instance) under its ``name``.

        A name already taken on that side is a ValueError unless ``replace=True``."""
        instance = coerce(assignor, source=f"register({assignor!r})")
        kind = kind_of(instance)
        if instance.name in self._known(kind) and not replace:
            side = "client-side" if kind == "client" else "server-side"
            raise ValueError(
                f"a {side} assignor named {instance.name!r} exists; pass replace=True to replace it"
            )
        self._specs[kind].pop(instance.name, None)
        self._loaded[kind][instance.name] = instance
        return instance

    def unregister(self, name: str, *, server: bool = False) -> None:
        """Remove an assignor (built-ins too); UnknownAssignorError if there is none by that name."""
        kind: Kind = "server" if server else "client"
        if name not in self._known(kind):
            raise UnknownAssignorError(name, kind, self._known(kind))
        self._specs[kind].pop(name, None)
        self._loaded[kind].pop(name, None)

    # -- internals ------------------------------------------------------------------------------

    def _known(self, kind: Kind) -> set[str]:
        return set(self._specs[kind]) | set(self._loaded[kind])

    def _get(self, name: str, kind: Kind) -> AnyAssignor:
        found = self._loaded[kind].get(name)
        if found is not None:
            return found
        spec = self._specs[kind].get(name)
        if spec is not None:
            try:
                instance = coerce(_import_attr(spec), source=f"built-in {name!r} ({spec})", kind=kind)
            except ImportError as e:
                raise ImportError(f"built-in assignor {name!r} ({spec}) could not be imported: {e}") from e
            # Idempotent, not del/assign: clusters on several threads (the conformance runner's
            # embedded brokers) may load the same built-in at once; the first instance stays.
            self._specs[kind].pop(name, None)
            return self._loaded[kind].setdefault(name, instance)
        if not self._discovered:
            self._discover()
            return self._get(name, kind)
        if name in self._broken:
            raise UnknownAssignorError(
                name, kind, self._known(kind), f"entry point {name!r} was skipped: {self._broken[name]}"
            ) from self._broken[name]
        other: Kind = "server" if kind == "client" else "client"
        hint = ""
        if name in self._known(other):
            hint = (
                f"{name!r} is a {other}-side assignor; use {'get_server' if other == 'server' else 'get'}()"
            )
        raise UnknownAssignorError(name, kind, self._known(kind), hint)

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        for entry_point in self._entry_points():
            source = f"entry point {entry_point.name!r} = {entry_point.value!r} (group {ENTRY_POINT_GROUP})"
            try:
                instance = coerce(entry_point.load(), source=source)
                if instance.name != entry_point.name:
                    raise TypeError(
                        f"{source}: the entry point's name must be the assignor's name {instance.name!r}"
                    )
                kind = kind_of(instance)
                if instance.name in self._known(kind):
                    raise ValueError(f"{source}: the name {instance.name!r} is already taken")
            except Exception as e:
                # Loading errors (ImportError and the like) do not say which plugin; ours do.
                reason = str(e) if str(e).startswith(source) else f"{source}: {type(e).__name__}: {e}"
                self._broken[entry_point.name] = e
                warnings.warn(f"skipping assignor plugin {reason}", RuntimeWarning, stacklevel=3)
                continue
            self._loaded[kind][instance.name] = instance


def load(spec: str, *, kind: Kind | None = None) -> AnyAssignor:
    """Import ``"package.module:Attribute"`` (attribute path may be dotted), instantiate it if it
    is a class, and validate it as an assignor (``kind`` "client" or "server" to insist on one).

    Not registered by this; ``register(load(spec))`` makes it findable by name."""
    return coerce(_import_attr(spec), source=f"load({spec!r})", kind=kind)


default_registry = AssignorRegistry()


def get(name: str) -> Assignor:
    """``default_registry.get``: the client-side assignor for a protocol name."""
    return default_registry.get(name)


def get_server(name: str) -> ServerAssignor:
    """``default_registry.get_server``: the server-side (KIP-848) assignor by name."""
    return default_registry.get_server(name)


def resolve(name_or_spec: str) -> Assignor:
    return default_registry.resolve(name_or_spec)


def resolve_server(name_or_spec: str) -> ServerAssignor:
    return default_registry.resolve_server(name_or_spec)


def register(assignor: object, *, replace: bool = False) -> AnyAssignor:
    return default_registry.register(assignor, replace=replace)


def unregister(name: str, *, server: bool = False) -> None:
    default_registry.unregister(name, server=server)


def names() -> list[str]:
    return default_registry.names()


def server_names() -> list[str]:
    return default_registry.server_names()
