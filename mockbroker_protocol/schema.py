"""Schema facts carried by the generated message classes: one FieldSpec per field, per class.

The generated codecs do not read these at run time (they are straight-line code); the facts are
there for tests (random message strategies, differential checks), for introspection and for
error messages.
"""

from __future__ import annotations

from typing import NamedTuple

# Kafka's open-ended version ranges ("3+") are stored with this upper bound.
MAX_VERSION = 32767


class FieldSpec(NamedTuple):
    name: str  # snake_case attribute name
    kafka_name: str  # the spec's name, e.g. "SessionTimeoutMs"
    type: str  # the spec's type: "int32", "string", "[]int32", "[]JoinGroupRequestProtocol", ...
    versions: tuple[int, int]
    nullable_versions: tuple[int, int] | None
    tag: int | None
    tagged_versions: tuple[int, int] | None
    default: object  # the decoded default (a fresh copy is made per instance for lists/structs)

    def present(self, version: int) -> bool:
        return self.versions[0] <= version <= self.versions[1]

    def nullable(self, version: int) -> bool:
        nv = self.nullable_versions
        return nv is not None and nv[0] <= version <= nv[1]

    def tagged(self, version: int) -> bool:
        tv = self.tagged_versions
        return self.tag is not None and tv is not None and tv[0] <= version <= tv[1]

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type[:1].isupper()


class MessageSpec(NamedTuple):
    name: str  # e.g. "JoinGroupRequest"
    api_key: int
    valid_versions: tuple[int, int]
    flexible_versions: tuple[int, int] | None

    def flexible(self, version: int) -> bool:
        fv = self.flexible_versions
        return fv is not None and fv[0] <= version <= fv[1]
