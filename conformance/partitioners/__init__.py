"""The default partitioners of Kafka clients, exactly: which partition a keyed record goes to.

``hashes`` holds the hashes (Kafka's ``murmur2``, CRC-32, FNV-1a, ...), ``compose`` the keyed
rule declared from its parts (``HASH|POSITIVE|mod``: the hash, how it is made non-negative,
the remainder), ``registry`` every client's partitioner, each hashing one a composition plus
its null- and empty-key behaviour, and the three rules that ignore keys
(docs/partitioners.md). This package re-exports their public names.
"""

from __future__ import annotations

from conformance.partitioners.compose import (
    HASHES,
    POSITIVES,
    REDUCE,
    Composition,
    Hash,
    Positive,
    composition,
)
from conformance.partitioners.hashes import (
    JAVA_SEED,
    abs32,
    fnv1a_32,
    kafkajs_legacy_murmur2,
    murmur2,
    rd_fnv1a,
    to_positive,
    unsigned32,
)
from conformance.partitioners.registry import (
    EMPTY,
    FORMAT,
    JAVA_COMPOSITION,
    KEYED,
    LIST_FORMAT,
    MAX_PARTITIONS,
    NULL,
    PARTITIONERS,
    Partitioner,
    PartitionReport,
    Placement,
    Registry,
    Usage,
    partitioner,
    place,
)

__all__ = [
    "EMPTY",
    "FORMAT",
    "HASHES",
    "JAVA_COMPOSITION",
    "JAVA_SEED",
    "KEYED",
    "LIST_FORMAT",
    "MAX_PARTITIONS",
    "NULL",
    "PARTITIONERS",
    "POSITIVES",
    "REDUCE",
    "Composition",
    "Hash",
    "PartitionReport",
    "Partitioner",
    "Placement",
    "Positive",
    "Registry",
    "Usage",
    "abs32",
    "composition",
    "fnv1a_32",
    "kafkajs_legacy_murmur2",
    "murmur2",
    "partitioner",
    "place",
    "rd_fnv1a",
    "to_positive",
    "unsigned32",
]
