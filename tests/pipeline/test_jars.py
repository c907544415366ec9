"""mockbroker_pipeline.jars without the network: the connector's coordinates follow the installed
PySpark, and a published POM's dependencies are read as Maven would (compile and runtime scope,
not test, provided or optional)."""

from __future__ import annotations

POM = b"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <dependencies>
    <dependency><groupId>org.apache.spark</groupId><artifactId>spark-token-provider-kafka-0-10_2.13</artifactId>
      <version>4.2.0</version><scope>compile</scope></dependency>
    <dependency><groupId>org.apache.spark</groupId><artifactId>spark-sql_2.13</artifactId>
      <version>4.2.0</version><scope>provided</scope></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId><version>3.9.2</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId>
      <version>3.9.2</version><scope>test</scope></dependency>
    <dependency><groupId>org.apache.commons</groupId><artifactId>commons-pool2</artifactId>
      <version>2.13.1</version><scope>runtime</scope></dependency>
    <dependency><groupId>x</groupId><artifactId>optional-one</artifactId><version>1</version>
      <optional>true</optional></dependency>
  </dependencies>
</project>"""


def test_dependencies_of_a_published_pom() -> None:
    from mockbroker_pipeline.jars import Artifact, dependencies

    assert dependencies(POM) == [
        Artifact("org.apache.spark", "spark-token-provider-kafka-0-10_2.13", "4.2.0"),
        Artifact("org.apache.kafka", "kafka-clients", "3.9.2"),
        Artifact("org.apache.commons", "commons-pool2", "2.13.1"),
    ]
    assert Artifact("org.apache.kafka", "kafka-clients", "3.9.2").url("jar") == (
        "https://repo1.maven.org/maven2/org/apache/kafka/kafka-clients/3.9.2/kafka-clients-3.9.2.jar"
    )


def test_connector_follows_the_installed_pyspark() -> None:
    from pyspark.version import __version__

    from mockbroker_pipeline.jars import connector

    artifact = connector()
    assert artifact.version == __version__
    assert artifact.name.startswith("spark-sql-kafka-0-10_2.")
