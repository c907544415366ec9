"""Spark's Kafka source for the installed PySpark: ``spark-sql-kafka-0-10`` and what it needs that
the PySpark distribution does not bundle, fetched once from Maven Central into a git-ignored cache
(``build/spark-kafka/<spark version>/``) and handed to Spark with ``spark.jars``, so a streaming
job never touches the network (no ``spark.jars.packages``, no Ivy).

The connector is taken at exactly the installed PySpark's version and Scala binary version (the
``scala-library`` jar PySpark ships): Spark's data source API is internal, a connector of another
release may fail at run time. Its dependencies are read from its published POM (compile scope, with
the versions that release was built with: ``kafka-clients``, ``commons-pool2``,
``spark-token-provider-kafka-0-10``, ...), leaving out any artifact PySpark already bundles. Every
jar is checked against Maven Central's SHA-1.

``python -m mockbroker_pipeline.jars fetch`` (``make spark-kafka``) fetches; ``kafka_jars()`` lists the
cached jars or raises MissingJars saying how to get them.
"""

from __future__ import annotations

import hashlib
import re
import sys
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
CACHE = Path(__file__).resolve().parents[1] / "build" / "spark-kafka"
_POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}
_STAMP = ".complete"


class MissingJars(RuntimeError):
    """The Kafka source's jars are not in the cache."""


@dataclass(frozen=True)
class Artifact:
    group: str
    name: str
    version: str

    def url(self, ext: str) -> str:
        return f"{MAVEN_CENTRAL}/{self.group.replace('.', '/')}/{self.name}/{self.version}/{self.name}-{self.version}.{ext}"

    @property
    def jar_name(self) -> str:
        return f"{self.name}-{self.version}.jar"


def pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def spark_version() -> str:
    from pyspark.version import __version__

    return str(__version__)


def scala_binary_version() -> str:
    """2.13 from ``scala-library-2.13.x.jar`` in PySpark's jars."""
    for jar in (pyspark_home() / "jars").glob("scala-library-*.jar"):
        m = re.fullmatch(r"scala-library-(\d+)\.(\d+)\.\d+\.jar", jar.name)
        if m:
            return f"{m[1]}.{m[2]}"
    raise MissingJars(f"no scala-library jar in {pyspark_home() / 'jars'}: is PySpark installed whole?")


def connector() -> Artifact:
    return Artifact("org.apache.spark", f"spark-sql-kafka-0-10_{scala_binary_version()}", spark_version())


def cache_dir() -> Path:
    return CACHE / spark_version()


def kafka_jars() -> list[Path]:
    """The cached jars for ``spark.jars`` (MissingJars when not fetched)."""
    where = cache_dir()
    if not (where / _STAMP).is_file():
        raise MissingJars(
            f"Spark's Kafka source ({connector().name}:{spark_version()}) is not in {where}; fetch it once "
            "with `make spark-kafka` (python -m mockbroker_pipeline.jars fetch)"
        )
    return sorted(where.glob("*.jar"))


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as answer:
        data: bytes = answer.read()
    return data


def _bundled_names() -> set[str]:
    """Artifact ids of the jars PySpark ships (``name-version.jar`` -> name)."""
    names = set()
    for jar in (pyspark_home() / "jars").glob("*.jar"):
        m = re.fullmatch(r"(.+?)-\d[^-]*(-.*)?\.jar", jar.name)
        if m:
            names.add(m[1])
    return names


def dependencies(pom: bytes) -> list[Artifact]:
    """Compile and runtime dependencies of a published (flattened) POM."""
    root = ET.fromstring(pom)
    out = []
    for dep in root.findall("m:dependencies/m:dependency", _POM_NS):

        def text(tag: str, dep: ET.Element = dep) -> str | None:
            node = dep.find(f"m:{tag}", _POM_NS)
            return None if node is None or node.text is None else node.text.strip()

        if (text("scope") or "compile") not in ("compile", "runtime") or text("optional") == "true":
            continue
        group, name, version = text("groupId"), text("artifactId"), text("version")
        if not group or not name or not version or "${" in version:
            raise MissingJars(f"cannot read a dependency's coordinates in the POM: {group}:{name}:{version}")
        out.append(Artifact(group, name, version))
    return out


def plan() -> list[Artifact]:
    """The connector and its dependencies (transitively) that PySpark does not bundle."""
    bundled = _bundled_names()
    todo, seen, out = [connector()], set(), []
    while todo:
        artifact = todo.pop(0)
        if artifact.name in seen:
            continue
        seen.add(artifact.name)
        out.append(artifact)
        todo += [d for d in dependencies(_get(artifact.url("pom"))) if d.name not in bundled and d.name not in seen]
    return out


def fetch() -> list[Path]:
    """Fetch what is missing into the cache (idempotent)."""
    where = cache_dir()
    if (where / _STAMP).is_file():
        return kafka_jars()
    where.mkdir(parents=True, exist_ok=True)
    try:
        artifacts = plan()
    except OSError as exc:
        raise MissingJars(f"{connector().url('pom')}: {exc} (is {connector().name} {spark_version()} on Maven Central?)") from exc
    for artifact in artifacts:
        target = where / artifact.jar_name
        data = _get(artifact.url("jar"))
        expected = _get(artifact.url("jar.sha1")).decode().split()[0].strip().lower()
        actual = hashlib.sha1(data, usedforsecurity=False).hexdigest()
        if actual != expected:
            raise MissingJars(f"{artifact.url('jar')}: SHA-1 {actual}, Maven Central says {expected}")
        target.write_bytes(data)
        print(f"fetched {artifact.group}:{artifact.name}:{artifact.version}", flush=True)
    (where / _STAMP).write_text("\n".join(a.jar_name for a in artifacts) + "\n")
    return kafka_jars()


def main(argv: list[str]) -> int:
    if argv != ["fetch"]:
        print("usage: python -m mockbroker_pipeline.jars fetch", file=sys.stderr)
        return 2
    try:
        jars = fetch()
    except MissingJars as exc:
        print(f"mockbroker_pipeline.jars: {exc}", file=sys.stderr)
        return 1
    print(f"Spark's Kafka source: {', '.join(j.name for j in jars)} in {cache_dir()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
