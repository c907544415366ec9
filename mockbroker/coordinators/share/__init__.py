"""KIP-932 share groups: the share-group coordinator (ShareGroupHeartbeat, ShareGroupDescribe) and
its group model and assignor (group.py, assignor.py, coordinator.py)."""
