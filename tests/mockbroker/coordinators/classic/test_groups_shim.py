"""``mockbroker.groups`` is a shim over ``mockbroker.coordinators``: every name it exported before
the move resolves to the very object at its new home, and it exports nothing else."""

from __future__ import annotations

import importlib

import pytest

import mockbroker.groups as shim

OLD_EXPORTS = [
    "ClassicGroup", "ClassicGroupMember", "ClassicGroupState", "ConsumerGroup", "ConsumerGroupCoordinator",
    "ConsumerGroupMember", "ConsumerGroupState", "GroupConfig", "GroupCoordinator", "MemberState",
    "OffsetAndMetadata", "OffsetStore", "Parked", "wait",
]  # fmt: skip


@pytest.mark.parametrize("name", OLD_EXPORTS)
def test_every_old_name_is_the_object_at_its_new_home(name: str) -> None:
    new_home = importlib.import_module(shim._EXPORTS[name])
    assert getattr(shim, name) is getattr(new_home, name)
    assert shim._EXPORTS[name].startswith(("mockbroker.coordinators.", "mockbroker.config."))


def test_the_shim_exports_the_old_names_only() -> None:
    assert sorted(shim.__all__) == sorted(OLD_EXPORTS) == sorted(shim._EXPORTS)
    with pytest.raises(AttributeError):
        shim.__getattr__("GroupError")


def test_the_cluster_builds_the_router() -> None:
    from mockbroker import MockCluster
    from mockbroker.coordinators.router import GroupCoordinator

    assert isinstance(MockCluster().groups, GroupCoordinator)
