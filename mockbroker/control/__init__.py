"""The control and introspection API (docs/control.md): ``Control`` (``cluster.control``), its
errors and snapshots, the request hook (``intercept``) and the declarative faults built beside it
(``faults``).

Layout: ``control`` is the ``Control`` class, put together from one part per concern over a
shared base (``base``): ``brokers`` (brokers, leaders, coordinators, API versions), ``records``
(topics and records), ``groups`` (groups and waits), ``transactions`` (transactional ids, their
aborts and coordinator faults); the hook, the request log and the faults are
on ``Control`` itself. ``snapshots`` (and ``share_snapshots``, KIP-932 share groups) hold the plain data the calls return; ``errors`` what they
raise.
"""

from mockbroker.control.base import DEFAULT_WAIT_S, NO_LEADER
from mockbroker.control.control import Control
from mockbroker.control.errors import ControlError, NotFound, ProduceError, WaitTimeout
from mockbroker.control.records import CONTROL_CLIENT_ID, RecordLike
from mockbroker.control.share_snapshots import (
    InFlightRecordSnapshot,
    ShareGroupSnapshot,
    ShareMemberSnapshot,
    SharePartitionSnapshot,
)
from mockbroker.control.snapshots import (
    AnyGroupSnapshot,
    BrokerSnapshot,
    ClusterSnapshot,
    ConsumedRecord,
    ConsumerGroupSnapshot,
    ConsumerMemberSnapshot,
    EndpointSnapshot,
    FaultsSnapshot,
    GroupListing,
    GroupSnapshot,
    MemberSnapshot,
    PartitionSnapshot,
    StreamsGroupSnapshot,
    StreamsMemberSnapshot,
    TopicSnapshot,
    TransactionSnapshot,
)

__all__ = [
    "CONTROL_CLIENT_ID",
    "DEFAULT_WAIT_S",
    "NO_LEADER",
    "AnyGroupSnapshot",
    "BrokerSnapshot",
    "ClusterSnapshot",
    "ConsumedRecord",
    "ConsumerGroupSnapshot",
    "ConsumerMemberSnapshot",
    "Control",
    "ControlError",
    "EndpointSnapshot",
    "FaultsSnapshot",
    "GroupListing",
    "GroupSnapshot",
    "InFlightRecordSnapshot",
    "MemberSnapshot",
    "NotFound",
    "PartitionSnapshot",
    "ProduceError",
    "RecordLike",
    "ShareGroupSnapshot",
    "ShareMemberSnapshot",
    "SharePartitionSnapshot",
    "StreamsGroupSnapshot",
    "StreamsMemberSnapshot",
    "TopicSnapshot",
    "TransactionSnapshot",
    "WaitTimeout",
]
