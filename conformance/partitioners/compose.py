"""A keyed partition rule declared from its parts: ``HASH|POSITIVE|mod``.

Every client that hashes a key computes ``positive(hash(key)) % n``; the clients differ in the
hash and in how they make it non-negative. A :class:`Composition` names both, in one syntax
(docs/partitioners.md, "Compositions"), accepted wherever a partitioner name is:

    murmur2(seed=0x9747b28c)|mask|mod     Java's rule (toPositive(murmur2(key)) % n)
    murmur2|unsigned|mod                  (murmur2(key) >>> 0) % n, @platformatic/kafka's
    crc32|unsigned|mod                    librdkafka's consistent arithmetic
    fnv1a_32|abs|mod                      sarama's default arithmetic

* ``HASH`` is a name of :data:`HASHES`, optionally with parameters in parentheses
  (``murmur2(seed=42)``; a seed is decimal or ``0x`` hexadecimal, 0..0xffffffff; a seeded
  hash without one has Kafka's seed 0x9747b28c);
* ``POSITIVE`` is a name of :data:`POSITIVES`, applied to the hash's 32-bit pattern;
* ``mod`` (:data:`REDUCE`) is the remainder by the partition count, of a non-negative number
  (so a signed and an unsigned remainder agree).

Spaces around the parts are ignored. Anything else is a :class:`~conformance.errors.
PartitionerError` naming what is not known and what is. :attr:`Composition.text` is the
canonical form (every parameter written out), which is also the name the composition is
judged and reported by.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conformance.errors import PartitionerError
from conformance.jsondoc import JsonDocument
from conformance.partitioners.hashes import (
    JAVA_SEED,
    abs32,
    fnv1a_32,
    kafkajs_legacy_murmur2,
    murmur2,
    to_positive,
    unsigned32,
)
from conformance.primitives.crc import crc32

__all__ = ["HASHES", "POSITIVES", "REDUCE", "Composition", "Hash", "Positive", "composition"]

#: the one reduction: the remainder by the partition count
REDUCE = "mod"
_MAX_SEED = 0xFFFFFFFF


@dataclass(frozen=True)
class Hash(JsonDocument):
    """A hash of the key's bytes, to 32 bits."""

    name: str
    definition: str
    source: str
    #: the hash of a key (with ``seed=`` when :attr:`seeded`)
    function: Callable[..., int]
    #: whether it takes a seed (``NAME(seed=N)``, default Kafka's 0x9747b28c)
    seeded: bool = False

    def to_dict(self) -> dict[str, Any]:
        params = {"seed": f"0x{JAVA_SEED:08x}"} if self.seeded else {}
        return {
            "name": self.name,
            "definition": self.definition,
            "parameters": params,
            "source": self.source,
        }


@dataclass(frozen=True)
class Positive(JsonDocument):
    """A way of making a 32-bit hash a non-negative number."""

    name: str
    definition: str
    source: str
    function: Callable[[int], int]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "definition": self.definition, "source": self.source}


#: the hashes a composition may name, in the order ``partition --list`` shows them
HASHES: dict[str, Hash] = {
    h.name: h
    for h in (
        Hash(
            "murmur2",
            "32-bit MurmurHash2: m 0x5bd1e995, r 24, little-endian 4-byte words, unsigned tail "
            "bytes; seed 0x9747b28c (Kafka's) unless given",
            "Kafka Utils.murmur2 (Utils.java:492-530); librdkafka rdmurmur2.c; sarama murmur2.go",
            murmur2,
            seeded=True,
        ),
        Hash(
            "crc32",
            "CRC-32 (IEEE, zlib's), unsigned",
            "librdkafka rd_crc32 (rdcrc32.h); Go hash/crc32.NewIEEE",
            crc32,
        ),
        Hash(
            "fnv1a_32",
            "FNV-1a 32 bit: offset basis 0x811c9dc5, prime 0x01000193, unsigned",
            "Go hash/fnv.New32a (sarama's hasher); librdkafka rdfnv1a.c",
            fnv1a_32,
        ),
        Hash(
            "kafkajs_legacy_murmur2",
            "kafkajs 1.x's murmur2 in JavaScript doubles (rounded products, a partial last "
            "word hashed once more); not Java's values; seed 0x9747b28c unless given",
            "kafkajs src/producer/partitioners/legacy/murmur2.js",
            kafkajs_legacy_murmur2,
            seeded=True,
        ),
    )
}

#: the ways of making the hash non-negative a composition may name
POSITIVES: dict[str, Positive] = {
    p.name: p
    for p in (
        Positive(
            "mask",
            "x & 0x7fffffff (Java's toPositive; not abs: -2^31 -> 0, -1 -> 2147483647)",
            "Kafka Utils.toPositive (Utils.java:1187-1189)",
            to_positive,
        ),
        Positive(
            "abs",
            "|x| of the hash read as int32, in 0..2^31 (-2^31 -> 2^31: C's abs read back as "
            "uint32, Go's negated remainder; Java's Math.abs would leave -2^31 negative)",
            "librdkafka rd_fnv1a (rdfnv1a.c); sarama hashPartitioner (partitioner.go:228-240)",
            abs32,
        ),
        Positive(
            "unsigned",
            "the hash's 32 bits as uint32 (JavaScript's x >>> 0, C's uint32_t)",
            "librdkafka rd_crc32 % partition_cnt; sarama hashUnsigned",
            unsigned32,
        ),
    )
}

_HASH_PART = re.compile(r"([A-Za-z0-9_]+)\s*(?:\((.*)\))?", re.DOTALL)
_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+|[0-9]+")


def _known(names: Any) -> str:
    return ", ".join(names)


@dataclass(frozen=True)
class Composition(JsonDocument):
    """``positive(hash(key)) % n``: a keyed partition rule from its parts."""

    hash: str
    positive: str
    #: the seed of a seeded hash (None for the others)
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.hash not in HASHES:
            raise PartitionerError(f"unknown hash {self.hash!r} (known: {_known(HASHES)})")
        if self.positive not in POSITIVES:
            raise PartitionerError(
                f"unknown positive step {self.positive!r} (known: {_known(POSITIVES)})"
            )
        seeded = HASHES[self.hash].seeded
        if seeded and self.seed is None:
            object.__setattr__(self, "seed", JAVA_SEED)
        elif not seeded and self.seed is not None:
            raise PartitionerError(f"hash {self.hash!r} takes no seed")
        if self.seed is not None and not 0 <= self.seed <= _MAX_SEED:
            raise PartitionerError(f"seed must be 0..0x{_MAX_SEED:x}, not {self.seed}")

    @property
    def text(self) -> str:
        """The canonical form: ``murmur2(seed=0x9747b28c)|mask|mod``."""
        params = f"(seed=0x{self.seed:08x})" if self.seed is not None else ""
        return f"{self.hash}{params}|{self.positive}|{REDUCE}"

    def hashed(self, key: bytes) -> int:
        """The hash of ``key`` (the hash's own sign: murmur2 is a Java ``int``)."""
        function = HASHES[self.hash].function
        return function(key) if self.seed is None else function(key, seed=self.seed)

    def partition(self, key: bytes, num_partitions: int) -> int:
        """``positive(hash(key)) % num_partitions`` (the caller checks ``num_partitions``)."""
        return POSITIVES[self.positive].function(self.hashed(key)) % num_partitions

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "hash": self.hash,
            "seed": None if self.seed is None else f"0x{self.seed:08x}",
            "positive": self.positive,
            "reduce": REDUCE,
        }


def _seed(hash_name: str, params: str) -> int:
    key, eq, value = params.partition("=")
    key, value = key.strip(), value.strip()
    if not eq or key != "seed" or "," in value:
        raise PartitionerError(
            f"hash {hash_name!r} has one parameter, seed (seed=N), not {params.strip()!r}"
        )
    if not _NUMBER.fullmatch(value):
        raise PartitionerError(
            f"seed must be a decimal or 0x hexadecimal integer 0..0x{_MAX_SEED:x}, not {value!r}"
        )
    return int(value, 0) if not value.isdigit() else int(value)


def composition(text: str) -> Composition:
    """The composition ``text`` (``HASH[(seed=N)]|POSITIVE|mod``). Raises
    :class:`~conformance.errors.PartitionerError` naming what is not known."""
    parts = [p.strip() for p in text.split("|")]
    where = f" in partitioner {text!r}"
    if len(parts) != 3:
        raise PartitionerError(
            f"a composition is HASH|POSITIVE|{REDUCE}, 3 parts separated by '|', not "
            f"{len(parts)}{where} (hashes: {_known(HASHES)}; positive: {_known(POSITIVES)})"
        )
    hash_part, positive, reduce = parts
    match = _HASH_PART.fullmatch(hash_part)
    if match is None:
        raise PartitionerError(
            f"not a hash: {hash_part!r}{where} (known: {_known(HASHES)}, e.g. murmur2(seed=42))"
        )
    name, params = match.group(1), match.group(2)
    if reduce != REDUCE:
        raise PartitionerError(f"unknown reduction {reduce!r}{where} (known: {REDUCE})")
    try:
        if name in HASHES and params is not None and not HASHES[name].seeded:
            raise PartitionerError(f"hash {name!r} takes no parameters")
        seed = _seed(name, params) if name in HASHES and params is not None else None
        return Composition(name, positive, seed)
    except PartitionerError as exc:
        raise PartitionerError(f"{exc}{where}") from None
