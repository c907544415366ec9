"""Configuration: the cluster's settings, the group and topic settings derived from them, version
profiles, and the serve-time sources that build them (flags > environment > TOML).

- ``cluster``: ``ClusterConfig``, every setting of a cluster with Kafka's names (re-exported here).
- ``groups``: ``GroupConfig``, the group coordinator's view of those settings.
- ``topics``: topic-level configs (``cleanup.policy``, ``retention.ms``, ...): types, defaults, checks.
- ``profiles``: the API version caps of each Kafka release mockbroker can imitate.
- ``settings``: ``mockbroker serve``'s sources merged and checked into one ``ClusterConfig``.
"""

from __future__ import annotations

from mockbroker.config.cluster import ClusterConfig

__all__ = ["ClusterConfig"]
