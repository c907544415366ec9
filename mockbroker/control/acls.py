"""Control of ACLs (docs/security.md): list, add and remove the bindings the cluster's authorizer
decides by, as kafka-acls would through CreateAcls / DeleteAcls. Enum fields are given by their
Kafka names (TOPIC, PREFIXED, READ, ALLOW), case-insensitively; each change records a
``control.acl_added`` / ``control.acl_removed`` event."""

from __future__ import annotations

from enum import IntEnum
from typing import Any, TypeVar

from mockbroker.control.base import ControlBase
from mockbroker.control.errors import ControlError
from mockbroker.security.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    Authorizer,
    InvalidAcl,
    PatternType,
    ResourceType,
    check_new_acl,
)

E = TypeVar("E", bound=IntEnum)


def _enum(kind: type[E], value: str | int, what: str) -> E:
    if isinstance(value, int):
        try:
            return kind(value)
        except ValueError:
            pass
    else:
        member = kind.__members__.get(value.strip().upper())
        if member is not None:
            return member
    raise ControlError(f"{what} must be one of {', '.join(kind.__members__)}, not {value!r}")


class AclControl(ControlBase):
    def _authorizer(self) -> Authorizer:
        authorizer = self.cluster.authorizer
        if authorizer is None:
            raise ControlError("no authorizer is configured: set authorizer.class.name (docs/security.md)")
        return authorizer

    async def acls(self) -> list[dict[str, Any]]:
        """Every ACL binding, in the order it was added."""
        return [acl.describe() for acl in self._authorizer().acls]

    async def add_acl(
        self,
        resource_type: str | int,
        resource_name: str,
        principal: str,
        operation: str | int,
        permission_type: str | int = "ALLOW",
        pattern_type: str | int = "LITERAL",
        host: str = "*",
        reason: str | None = None,
    ) -> dict[str, Any]:
        """Add one binding, with CreateAcls' checks (a binding there already is kept once)."""
        acl = AclBinding(
            _enum(ResourceType, resource_type, "resource_type"),
            resource_name,
            _enum(PatternType, pattern_type, "pattern_type"),
            principal,
            host,
            _enum(AclOperation, operation, "operation"),
            _enum(AclPermissionType, permission_type, "permission_type"),
        )
        try:
            check_new_acl(acl)
        except InvalidAcl as exc:
            raise ControlError(str(exc)) from None
        if self._authorizer().add(acl):
            self.cluster.events.record("control.acl_added", reason=reason, acl=acl.describe())
        return acl.describe()

    async def remove_acls(
        self,
        resource_type: str | int = "ANY",
        resource_name: str | None = None,
        pattern_type: str | int = "ANY",
        principal: str | None = None,
        host: str | None = None,
        operation: str | int = "ANY",
        permission_type: str | int = "ANY",
        reason: str | None = None,
    ) -> list[dict[str, Any]]:
        """Remove the bindings a DeleteAcls filter with these fields would (None: any); return them."""
        flt = AclBindingFilter(
            _enum(ResourceType, resource_type, "resource_type"),
            resource_name,
            _enum(PatternType, pattern_type, "pattern_type"),
            principal,
            host,
            _enum(AclOperation, operation, "operation"),
            _enum(AclPermissionType, permission_type, "permission_type"),
        )
        if flt.is_unknown():
            raise ControlError("a filter's enum fields must not be UNKNOWN")
        removed = [acl.describe() for acl in self._authorizer().remove_matching(flt)]
        for acl in removed:
            self.cluster.events.record("control.acl_removed", reason=reason, acl=acl)
        return removed
