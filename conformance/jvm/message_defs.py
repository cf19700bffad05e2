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

Kafka 0.x and 1.x have no such files (their protocol is written in Java): asking for them is a
:class:`MessageDefinitionsUnavailable`, as is a classpath without its ``kafka-clients`` jar or
a jar that cannot be read.

Command line::

    python -m conformance.jvm.message_defs 3.9.2                 # name, type, apiKey, versions
    python -m conformance.jvm.message_defs 3.9.2 FetchRequest    # one definition's source
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path

from conformance.jvm import kafka_jars
from conformance.messages.schema import SchemaError, Schemas, read_schemas

__all__ = [
    "DEFINITION_ENTRY",
    "MessageDefinitionsUnavailable",
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


def message_schemas(version: str, repo_root: Path | None = None) -> Schemas:
    """Every message definition of Kafka ``version`` (cached per process)."""
    jars = kafka_jars.classpath(version, repo_root)
    key = (version, str(jars[0].parent) if jars else "")
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
