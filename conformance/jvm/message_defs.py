"""Kafka's JSON message definitions, read from a Kafka version's jars at run time.

Kafka's jars carry the JSON files its classes were generated from: ``kafka-clients`` has
``common/message/*.json`` (requests, responses, headers, consumer protocol, ...),
``kafka-metadata`` has ``common/metadata/*.json`` (KRaft records), the coordinator jars
(``kafka-group-coordinator``, ``kafka-transaction-coordinator``, ``kafka-share-coordinator``;
``kafka_2.13`` in 2.x) ``common/message/*.json`` for their keys and values, ``kafka-raft``
its quorum state, ``kafka-storage`` ``message/*.json`` (remote log metadata, producer
snapshots). :func:`message_schemas` reads every such entry of Kafka's own jars (those named
``kafka-*``/``kafka_*``) of one version (resolved with Maven on first use by
``kafka_jars.classpath``) into a :class:`~conformance.messages.schema.Schemas`, once per
process and version. The definitions are never copied into the repository.

``clients_only=True`` reads the ``kafka-clients`` jar alone (the protocol's requests and
responses: what the fake broker speaks). Without a checkout (an installed kit) that jar is
downloaded once from Maven Central (``$KAFKA_CONFORMANCE_MAVEN_URL``, default
:data:`MAVEN_CENTRAL`) into the user's cache, checked against the repository's SHA-1 file;
the other jars need a checkout (Maven and its projects under ``jvm/``).

Kafka 0.x and 1.x have no such files (their protocol is written in Java): asking for them is a
:class:`MessageDefinitionsUnavailable`, as is a classpath without its ``kafka-clients`` jar or
a jar that cannot be read.

Command line::

    python -m conformance.jvm.message_defs 3.9.2                 # name, type, apiKey, versions
    python -m conformance.jvm.message_defs 3.9.2 FetchRequest    # one definition's source
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import tempfile
import threading
import urllib.error
import urllib.request
import zipfile
from collections.abc import Sequence
from pathlib import Path

from conformance.broker.versions import VERSIONS
from conformance.client.protocol import Protocol
from conformance.jvm import kafka_jars
from conformance.jvm import runtime as jvm
from conformance.messages.schema import SchemaError, Schemas, read_schemas

__all__ = [
    "DEFINITION_ENTRY",
    "CLIENT_RELEASES",
    "MessageDefinitionsUnavailable",
    "client_protocol",
    "definition_texts",
    "main",
    "message_schemas",
]

#: the jar entries that are message definitions
DEFINITION_ENTRY = re.compile(r"^(?:common/message|common/metadata|message)/[A-Za-z0-9]+\.json$")
_KAFKA_JAR = re.compile(r"^kafka[-_].*\.jar$")


class MessageDefinitionsUnavailable(kafka_jars.KafkaJarsUnavailable):
    """A Kafka version's message definitions cannot be read (no jars, no definitions, a jar
    that is missing or damaged, a definition Kafka's generator would refuse)."""


def definition_texts(jars: Sequence[Path]) -> list[tuple[str, str]]:
    """``("<jar>!<entry>", text)`` of every definition in Kafka's own jars among ``jars``."""
    out: list[tuple[str, str]] = []
    for jar in sorted(jars, key=lambda j: j.name):
        if not _KAFKA_JAR.match(jar.name):
            continue
        try:
            with zipfile.ZipFile(jar) as z:
                for entry in sorted(z.namelist()):
                    if DEFINITION_ENTRY.match(entry):
                        text = z.read(entry).decode("utf-8")
                        out.append((f"{jar.name}!{entry}", text))
        except FileNotFoundError:
            raise MessageDefinitionsUnavailable(f"jar missing: {jar}") from None
        except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as e:
            raise MessageDefinitionsUnavailable(f"cannot read {jar}: {e}") from None
    return out


_cache: dict[tuple[str, str], Schemas] = {}
_lock = threading.Lock()

#: where an installed kit downloads the kafka-clients jar from (``$KAFKA_CONFORMANCE_MAVEN_URL``)
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
_MAVEN_ENV = "KAFKA_CONFORMANCE_MAVEN_URL"


def clients_jar(version: str, repo_root: Path | None = None) -> Path:
    """The ``kafka-clients`` jar of Kafka ``version``: the checkout's resolved classpath's,
    else downloaded once into the user's cache (SHA-1 checked). Raises
    :class:`kafka_jars.KafkaJarsUnavailable`."""
    try:
        root = jvm.repo_root(repo_root)
    except jvm.NoCheckout:
        return _download_clients_jar(version)
    for jar in kafka_jars.classpath(version, root):
        if jar.name.startswith("kafka-clients-"):
            return jar
    raise MessageDefinitionsUnavailable(f"Kafka {version}'s classpath has no kafka-clients jar")


def _download_clients_jar(version: str) -> Path:
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
        raise MessageDefinitionsUnavailable(f"not a Kafka version: {version!r}")
    name = f"kafka-clients-{version}.jar"
    target = jvm.cache_root() / "kafka" / version / "clients" / name
    if target.is_file() and target.stat().st_size > 0:
        return target
    base = os.environ.get(_MAVEN_ENV, MAVEN_CENTRAL).rstrip("/")
    url = f"{base}/org/apache/kafka/kafka-clients/{version}/{name}"
    try:
        with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
            want = r.read().decode("ascii", "replace").split()[0].lower()
        with urllib.request.urlopen(url, timeout=300) as r:
            data = r.read()
    except (urllib.error.URLError, OSError, IndexError) as e:
        raise MessageDefinitionsUnavailable(
            f"cannot download {url} (Kafka {version}'s message definitions; an installed kit "
            f"fetches it once into {target.parent}; set {_MAVEN_ENV} to a mirror): {e}"
        ) from None
    got = hashlib.sha1(data).hexdigest()
    if got != want:
        raise MessageDefinitionsUnavailable(f"{url}: SHA-1 {got}, the repository says {want}")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=target.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, target)
    return target


def _schemas(key: tuple[str, str], jars: Sequence[Path], version: str) -> Schemas:
    """The definitions in ``jars`` (Kafka ``version``'s), read once per process per ``key``."""
    with _lock:
        cached = _cache.get(key)
    if cached is not None:
        return cached
    if not any(j.name.startswith("kafka-clients-") for j in jars):
        raise MessageDefinitionsUnavailable(
            f"Kafka {version}'s classpath has no kafka-clients jar "
            f"({jars[0].parent if jars else 'no jars'})"
        )
    texts = definition_texts(jars)
    if not texts:
        raise MessageDefinitionsUnavailable(
            f"Kafka {version}'s jars hold no JSON message definitions (they ship from Kafka 2.x "
            "on; older protocols are written in Java)"
        )
    try:
        schemas = read_schemas(texts, f"Kafka {version}")
    except SchemaError as e:
        raise MessageDefinitionsUnavailable(f"Kafka {version}: {e}") from None
    with _lock:
        _cache[key] = schemas
    return schemas


def message_schemas(
    version: str, repo_root: Path | None = None, *, clients_only: bool = False
) -> Schemas:
    """Every message definition of Kafka ``version`` (cached per process); ``clients_only``:
    those of the ``kafka-clients`` jar alone (the only ones an installed kit can fetch)."""
    if clients_only:
        jars = [clients_jar(version, repo_root)]
    else:
        jars = kafka_jars.classpath(version, repo_root)
    key = (version + ("/clients" if clients_only else ""), str(jars[0].parent) if jars else "")
    return _schemas(key, jars, version)


#: the releases whose ``kafka-clients`` definitions the kit's client speaks, newest first (the
#: broker lines the kit models: 4.x dropped old versions that 3.x and 2.x still define)
CLIENT_RELEASES: tuple[str, ...] = tuple(
    sorted(VERSIONS, key=lambda v: tuple(int(x) for x in v.split(".")), reverse=True)
)
_protocol: list[Protocol] = []


def client_protocol() -> Protocol:
    """The protocol of the kit's own client (``conformance.client``): the ``kafka-clients``
    definitions of :data:`CLIENT_RELEASES`, each jar downloaded once into the cache (a
    checkout's ``.cache/``, else the user's cache directory), in a checkout and an installed
    kit alike: the client needs no Maven and no Kafka distribution."""
    with _lock:
        if _protocol:
            return _protocol[0]
    releases = [
        _schemas((v + "/client", ""), [_download_clients_jar(v)], v) for v in CLIENT_RELEASES
    ]
    protocol = Protocol(releases)
    with _lock:
        if not _protocol:
            _protocol.append(protocol)
        return _protocol[0]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance.jvm.message_defs",
        description="List the JSON message definitions in a Kafka version's jars.",
    )
    parser.add_argument("version", metavar="VERSION", help="Kafka version, e.g. 3.9.2")
    parser.add_argument("name", nargs="?", help="print where this definition comes from")
    args = parser.parse_args(argv)
    try:
        schemas = message_schemas(args.version)
    except kafka_jars.KafkaJarsUnavailable as e:
        print(f"message_defs: {e}", file=sys.stderr)
        return 1
    if args.name:
        try:
            s = schemas[args.name]
        except KeyError as e:
            print(f"message_defs: {e.args[0]}", file=sys.stderr)
            return 1
        print(
            f"{s.name} {s.type} apiKey={s.api_key} versions={s.valid_versions} "
            f"flexible={s.flexible_versions} from {s.source}"
        )
        return 0
    for name in sorted(schemas):
        s = schemas[name]
        key = "" if s.api_key is None else str(s.api_key)
        print(f"{s.name}\t{s.type}\t{key}\t{s.valid_versions}\t{s.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
