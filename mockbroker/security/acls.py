"""ACLs and the authorizer: Kafka's resource types, pattern types, operations and permission
types (org.apache.kafka.common.acl / .resource codes), the bindings a cluster keeps, the filters of
DescribeAcls and DeleteAcls (AclBindingFilter.matches), the checks CreateAcls and DeleteAcls
apply (AclApis, AclControlManager.validateNewAcl / validateFilter) and the decision
StandardAuthorizer takes (StandardAuthorizerData.authorize: super users, DENY before ALLOW, the
operations ALLOW implies, ``allow.everyone.if.no.acl.found`` for a resource without ACLs).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockbroker.config.cluster import ClusterConfig


class ResourceType(IntEnum):
    """org.apache.kafka.common.resource.ResourceType codes."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    """org.apache.kafka.common.resource.PatternType codes (MATCH and ANY only in filters)."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    """org.apache.kafka.common.acl.AclOperation codes."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    """org.apache.kafka.common.acl.AclPermissionType codes."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"  # Resource.CLUSTER_NAME
WILDCARD_RESOURCE = "*"  # ResourcePattern.WILDCARD_RESOURCE
WILDCARD_HOST = "*"
WILDCARD_PRINCIPAL = "User:*"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

# An ALLOW of one of these implies the operation it is keyed by (StandardAuthorizerData:
# DESCRIBE by READ, WRITE, DELETE or ALTER; DESCRIBE_CONFIGS by ALTER_CONFIGS).
_IMPLIED_BY: dict[int, frozenset[int]] = {
    AclOperation.DESCRIBE: frozenset({AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}),
    AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.ALTER_CONFIGS}),
}


def _code(enum: type[IntEnum], value: int) -> int:
    """A wire code as Kafka's fromCode reads it: a code it does not know is UNKNOWN (0)."""
    return value if value in enum._value2member_map_ else 0


def _any_unknown(resource_type: int, pattern_type: int, operation: int, permission_type: int) -> bool:
    return (
        _code(ResourceType, resource_type) == 0
        or _code(PatternType, pattern_type) == 0
        or _code(AclOperation, operation) == 0
        or _code(AclPermissionType, permission_type) == 0
    )


def _name(enum: type[IntEnum], value: int) -> str:
    return enum(_code(enum, value)).name


@dataclass(frozen=True, slots=True)
class AclBinding:
    """A ResourcePattern and an AccessControlEntry: what CreateAcls adds."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int

    def is_unknown(self) -> bool:
        """AclBinding.isUnknown: an UNKNOWN (or unknown code) in any enum field."""
        return _any_unknown(self.resource_type, self.pattern_type, self.operation, self.permission_type)

    def describe(self) -> dict[str, object]:
        """For the control model and the HTTP API: names, as kafka-acls prints them."""
        return {
            "resource_type": _name(ResourceType, self.resource_type),
            "resource_name": self.resource_name,
            "pattern_type": _name(PatternType, self.pattern_type),
            "principal": self.principal,
            "host": self.host,
            "operation": _name(AclOperation, self.operation),
            "permission_type": _name(AclPermissionType, self.permission_type),
        }


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """What DescribeAcls and DeleteAcls match bindings by (None: any name, principal, host)."""

    resource_type: int
    resource_name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission_type: int

    def is_unknown(self) -> bool:
        """AclBindingFilter.isUnknown: an UNKNOWN (or unknown code) in any enum field."""
        return _any_unknown(self.resource_type, self.pattern_type, self.operation, self.permission_type)

    def matches(self, acl: AclBinding) -> bool:
        return self._pattern_matches(acl) and self._entry_matches(acl)

    def _pattern_matches(self, acl: AclBinding) -> bool:
        """ResourcePatternFilter.matches: MATCH finds the literal name, the wildcard and the
        prefixes a name starts with; ANY any pattern type of that exact name."""
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        pattern = self.pattern_type
        if pattern not in (PatternType.ANY, PatternType.MATCH) and pattern != acl.pattern_type:
            return False
        name = self.resource_name
        if name is None:
            return True
        if pattern in (PatternType.ANY, acl.pattern_type):
            return name == acl.resource_name
        if acl.pattern_type == PatternType.LITERAL:
            return name == acl.resource_name or acl.resource_name == WILDCARD_RESOURCE
        if acl.pattern_type == PatternType.PREFIXED:
            return name.startswith(acl.resource_name)
        return False

    def _entry_matches(self, acl: AclBinding) -> bool:
        """AccessControlEntryFilter.matches."""
        return (
            (self.principal is None or self.principal == acl.principal)
            and (self.host is None or self.host == acl.host)
            and (self.operation == AclOperation.ANY or self.operation == acl.operation)
            and (self.permission_type == AclPermissionType.ANY or self.permission_type == acl.permission_type)
        )


class InvalidAcl(ValueError):
    """A binding CreateAcls refuses: INVALID_REQUEST with this message."""


def check_new_acl(acl: AclBinding) -> None:
    """AclApis.handleCreateAcls' checks, then AclControlManager.validateNewAcl's, in that order."""
    if acl.resource_type == ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
        raise InvalidAcl(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if not acl.resource_name:
        raise InvalidAcl("Invalid empty resource name")
    if _code(ResourceType, acl.resource_type) in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise InvalidAcl(f"Invalid resourceType {_name(ResourceType, acl.resource_type)}")
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise InvalidAcl(f"Invalid patternType {_name(PatternType, acl.pattern_type)}")
    if _code(AclOperation, acl.operation) in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise InvalidAcl(f"Invalid operation {_name(AclOperation, acl.operation)}")
    if acl.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        raise InvalidAcl(f"Invalid permissionType {_name(AclPermissionType, acl.permission_type)}")


def parse_super_users(text: str) -> frozenset[str]:
    """super.users: principals separated by semicolons (User:admin;User:kafka)."""
    return frozenset(p.strip() for p in text.split(";") if p.strip())


def authorizer_of(config: ClusterConfig) -> Authorizer | None:
    """The cluster's authorizer: one when authorizer.class.name is set (any value), else None."""
    if not config.authorizer_class_name:
        return None
    return Authorizer(parse_super_users(config.super_users), config.allow_everyone_if_no_acl_found)


class Authorizer:
    """The ACLs of a cluster with an authorizer configured, and StandardAuthorizer's decision."""

    __slots__ = ("acls", "allow_everyone_if_no_acl_found", "super_users")

    def __init__(self, super_users: Iterable[str] = (), allow_everyone_if_no_acl_found: bool = False) -> None:
        self.super_users = frozenset(super_users)
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        # insertion-ordered set: a binding created twice is kept once (AclControlManager.existingAcls)
        self.acls: dict[AclBinding, None] = {}

    def add(self, acl: AclBinding) -> bool:
        """Add a checked binding; False when it was there already."""
        if acl in self.acls:
            return False
        self.acls[acl] = None
        return True

    def matching(self, flt: AclBindingFilter) -> list[AclBinding]:
        return [acl for acl in self.acls if flt.matches(acl)]

    def remove_matching(self, flt: AclBindingFilter) -> list[AclBinding]:
        gone = self.matching(flt)
        for acl in gone:
            del self.acls[acl]
        return gone

    def authorize(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        """StandardAuthorizerData.authorize for one action."""
        if principal in self.super_users:
            return True
        found = allowed = False
        for acl in self.acls:
            if acl.resource_type != resource_type or not _names_match(acl, name):
                continue
            found = True
            if acl.principal not in (principal, WILDCARD_PRINCIPAL) or acl.host not in (host, WILDCARD_HOST):
                continue
            if acl.permission_type == AclPermissionType.DENY:
                if acl.operation in (AclOperation.ALL, operation):
                    return False  # a matching DENY wins over any ALLOW
            elif acl.operation in (AclOperation.ALL, operation) or acl.operation in _IMPLIED_BY.get(operation, ()):
                allowed = True
        if allowed:
            return True
        return not found and self.allow_everyone_if_no_acl_found

    def authorize_by_resource_type(self, principal: str, host: str, operation: int, resource_type: int) -> bool:
        """StandardAuthorizer.authorizeByResourceType, simplified: allowed when some ALLOW of the
        operation on that resource type reaches the principal and no DENY on the wildcard name
        covers it (or, with no ACL of that type at all, allow.everyone.if.no.acl.found)."""
        if principal in self.super_users:
            return True
        found = allowed = False
        for acl in self.acls:
            if acl.resource_type != resource_type:
                continue
            found = True
            if acl.principal not in (principal, WILDCARD_PRINCIPAL) or acl.host not in (host, WILDCARD_HOST):
                continue
            if acl.operation not in (AclOperation.ALL, operation):
                continue
            if acl.permission_type == AclPermissionType.DENY:
                if acl.pattern_type == PatternType.LITERAL and acl.resource_name == WILDCARD_RESOURCE:
                    return False
            else:
                allowed = True
        return allowed or (not found and self.allow_everyone_if_no_acl_found)


def _names_match(acl: AclBinding, name: str) -> bool:
    if acl.pattern_type == PatternType.LITERAL:
        return acl.resource_name in (name, WILDCARD_RESOURCE)
    return name.startswith(acl.resource_name)
