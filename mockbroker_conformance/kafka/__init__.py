"""The real Apache Kafka broker as a test oracle: its jars fetched with Maven, one node started on demand (launcher)."""
