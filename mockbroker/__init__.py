"""mockbroker: an asyncio, in-memory broker that speaks the Apache Kafka wire protocol."""

from __future__ import annotations

from mockbroker.clock import LoopClock, ManualClock
from mockbroker.cluster import MockCluster
from mockbroker.config.cluster import ClusterConfig
from mockbroker.model import TopicError

__version__ = "0.1.0.dev0"

__all__ = ["ClusterConfig", "LoopClock", "ManualClock", "MockCluster", "TopicError", "__version__"]
