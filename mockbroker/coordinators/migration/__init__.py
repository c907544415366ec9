"""Mixed groups (kafka-group-semantics §10.8): classic-protocol members inside consumer groups and
online migration between the two kinds (``mixed.py``)."""
