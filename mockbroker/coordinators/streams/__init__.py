"""KIP-1071 streams groups: the fourth kind of group, whose members are Kafka Streams clients.

group.py (StreamsGroup, members, tasks, reconciliation), topology.py (InternalTopicManager:
validating a topology against the cluster's topics, the internal topics to create),
assignor.py (the sticky task assignor) and coordinator.py (StreamsGroupCoordinator:
StreamsGroupHeartbeat, StreamsGroupDescribe and the streams-group side of the offset and admin
APIs). Sans-I/O, as the other kinds (docs/architecture.md, "Coordinators").
"""
