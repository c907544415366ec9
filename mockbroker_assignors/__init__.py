"""Partition assignors: pure functions of plain dataclasses, importing nothing from the project.

Client-side (classic protocol names): range, roundrobin, sticky, cooperative-sticky, with results
identical to the Java client's. Server-side (KIP-848): uniform and range, identical to the Java
broker's. ``mockbroker_assignors.registry`` finds them by name, with plugins from the ``mockbroker.assignors``
entry-point group or ``"module:attr"`` strings.
"""

from __future__ import annotations

from mockbroker_assignors.base import Assignor, ServerAssignor
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSpec,
    GroupSubscription,
    MemberAssignment,
    MemberSpec,
    RebalanceProtocol,
    Subscription,
    TargetAssignment,
    TopicMetadata,
    TopicPartition,
)

__all__ = [
    "Assignor",
    "ClusterMetadata",
    "GroupAssignment",
    "GroupSpec",
    "GroupSubscription",
    "MemberAssignment",
    "MemberSpec",
    "RebalanceProtocol",
    "ServerAssignor",
    "Subscription",
    "TargetAssignment",
    "TopicMetadata",
    "TopicPartition",
]
