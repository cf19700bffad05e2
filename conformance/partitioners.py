"""The default partitioners of Kafka clients, exactly: which partition a keyed record goes to.

A producer that is not told a partition picks one. For a record with a key, every client
below hashes the key's (serialized) bytes and reduces the hash modulo the partition count;
they differ in the hash, in how a negative hash is made non-negative, and in what a null or
empty key means. :data:`PARTITIONERS` has one :class:`Partitioner` per distinct rule, each
with the clients that use it (by default or by name) and the client's own config/API name.
``partition(key, n)`` is ``None`` where the partition is not a function of the key (random,
sticky or round-robin, as that client does for a null or empty key; the entry says which).
Three rules ignore every key (``round-robin``, kafka-go's default; ``sticky``; ``random``):
not :attr:`~Partitioner.key_determined`, they are judged by their promise about a sequence of
placements (:meth:`Partitioner.promise_problems`).

======================  ==================================================  ======================
hash                    definition                                          source
======================  ==================================================  ======================
murmur2                 32-bit MurmurHash2, seed 0x9747b28c, m 0x5bd1e995,  ``Utils.murmur2``
                        r 24, little-endian words, unsigned tail bytes;     (Utils.java:492-530)
                        Java ``int`` result (signed)
to_positive             ``x & 0x7fffffff`` (NOT abs: MIN_VALUE -> 0)        ``Utils.toPositive``
fnv1a_32                FNV-1a 32 (offset basis 0x811c9dc5, prime           Go ``hash/fnv`` New32a
                        0x01000193), unsigned                               (sarama's hasher)
rd_fnv1a                ``fnv1a_32`` as int32, absolute value, as uint32    librdkafka rdfnv1a.c
crc32                   CRC-32 (IEEE, zlib), unsigned:                      librdkafka rdcrc32.h,
                        :func:`conformance.primitives.crc.crc32`            Go ``hash/crc32``
kafkajs_legacy_murmur2  kafkajs 1.x ``murmur2`` in JavaScript doubles:      kafkajs partitioners/
                        the products lose precision, a partial last         legacy/murmur2.js
                        word is an extra zero-padded block; not Java's
======================  ==================================================  ======================

Sources read (snapshots): apache/kafka 1eb7644 (BuiltInPartitioner.java:329-331,
KafkaProducer.java:1458-1478, Utils.java:492-530 and 1187-1189), confluentinc/librdkafka
4c3b017 (src/rdkafka_msg.c:1050-1128 and 1210-1226, src/rdkafka_topic.c:365-413,
src/rdkafka_conf.c:1736-1843, src/rdmurmur2.c, src/rdfnv1a.c), IBM/sarama bd98b3a
(partitioner.go:175-283, murmur2.go), tulios/kafkajs 55b0b41 (src/producer/partitioners/),
dpkp/kafka-python a3b3836 (kafka/partitioner/default.py), aio-libs/aiokafka 672947a
(aiokafka/partitioner.py), twmb/franz-go adb3a18 (pkg/kgo/partitioner.go, config.go:686).
Key-ignoring rules: segmentio/kafka-go 3ce2979 = v0.4.50 (balancer.go:37-68, writer.go:645-656,
1293-1309) and each entry's ``source`` in the snapshots above. docs/partitioners.md has the
table of clients, the promises, and the test vectors' sources.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from conformance.jsondoc import JsonDocument
from conformance.primitives.crc import crc32
from conformance.primitives.java import wrap32

__all__ = [
    "EMPTY",
    "FORMAT",
    "KEYED",
    "LIST_FORMAT",
    "MAX_PARTITIONS",
    "NULL",
    "PARTITIONERS",
    "PartitionReport",
    "Partitioner",
    "Placement",
    "Registry",
    "Usage",
    "fnv1a_32",
    "kafkajs_legacy_murmur2",
    "murmur2",
    "place",
    "rd_fnv1a",
    "to_positive",
]

#: the format of the ``kafka-conformance partition --json`` document
FORMAT = "kafka-conformance/partition/1"
#: the format of the ``kafka-conformance partition --list --json`` document
LIST_FORMAT = "kafka-conformance/partitioners/1"
#: a partition count is a Java ``int`` (an int32 in librdkafka and sarama too)
MAX_PARTITIONS = (1 << 31) - 1

_M32 = 0xFFFFFFFF
_MURMUR_SEED = 0x9747B28C
_MURMUR_M = 0x5BD1E995
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_WORDS = struct.Struct("<I")
_Check = Callable[[Sequence[int], int], list[tuple[int, str]]]  # placements -> (record, line)


# ------------------------------------------------------------------------------------ hashes


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2``: MurmurHash2 (32 bit, seed 0x9747b28c), a signed Java ``int``.

    The Java code computes in ``int`` with wrap-around and unsigned shifts (``>>>``); this
    computes the same 32-bit pattern unsigned and returns it as Java's ``int``."""
    length = len(data)
    h = (_MURMUR_SEED ^ length) & _M32
    whole = length & ~3
    for (k,) in _WORDS.iter_unpack(memoryview(data)[:whole]):
        k = (k * _MURMUR_M) & _M32
        k ^= k >> 24
        k = (k * _MURMUR_M) & _M32
        h = ((h * _MURMUR_M) & _M32) ^ k
    tail = length & 3
    if tail:  # the switch's fall-through: case 3, case 2, case 1
        if tail == 3:
            h ^= data[whole + 2] << 16
        if tail >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * _MURMUR_M) & _M32
    h ^= h >> 13
    h = (h * _MURMUR_M) & _M32
    h ^= h >> 15
    return wrap32(h)


def to_positive(number: int) -> int:
    """``Utils.toPositive``: ``number & 0x7fffffff`` of a Java ``int`` (not its absolute value:
    ``Integer.MIN_VALUE`` -> 0, -1 -> 2147483647)."""
    return number & 0x7FFFFFFF


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bit (Go's ``hash/fnv.New32a().Sum32()``, sarama's default hasher): unsigned."""
    h = _FNV_OFFSET
    for b in bytes(data):
        h = ((h ^ b) * _FNV_PRIME) & _M32
    return h


def rd_fnv1a(data: bytes) -> int:
    """librdkafka's ``rd_fnv1a``: :func:`fnv1a_32` as an ``int32_t``, its absolute value when
    negative (to match sarama's ``NewHashPartitioner``), returned as ``uint32_t``.

    ``-INT32_MIN`` overflows in C; two's complement hardware leaves 0x80000000, which the
    ``uint32_t`` return makes 2147483648 (what this returns)."""
    h = wrap32(fnv1a_32(data))
    if h < 0:
        h = -h
    return h & _M32


_MF = float(_MURMUR_M)


def _js_int32(x: float) -> int:
    """ECMAScript ``ToInt32`` of a finite number (the operands of ``^`` and ``<<``)."""
    return wrap32(int(x))


def _js_uint32(x: float) -> int:
    """ECMAScript ``ToUint32`` of a finite number (the left operand of ``>>>``)."""
    return int(x) & _M32


def kafkajs_legacy_murmur2(data: bytes) -> int:
    """kafkajs's ``partitioners/legacy/murmur2.js`` (the 1.x default), statement by statement.

    JavaScript multiplies in IEEE doubles (as Python floats do, with the same rounding), so
    ``k *= M`` and ``h *= M`` round once the product passes 2^53; the bit operators read their
    operands through ``ToInt32``/``ToUint32``. ``length4 = length / 4`` is not floored, so the
    loop ``i < length4`` runs once more for a partial last word, reading past the end
    (``undefined & 0xff`` is 0); the tail ``switch`` then mixes those bytes in again. The
    result is an ``int32`` that differs from Java's for most keys."""
    length = len(data)
    h: float = _js_int32(_MURMUR_SEED) ^ length
    for i in range(-(-length // 4)):
        word = bytes(data[i * 4 : i * 4 + 4]).ljust(4, b"\x00")
        k: float = word[0] + (word[1] << 8) + (word[2] << 16) + wrap32(word[3] << 24)
        k = k * _MF
        k = _js_int32(k) ^ (_js_uint32(k) >> 24)
        k = k * _MF
        h = h * _MF
        h = _js_int32(h) ^ _js_int32(k)
    tail, whole = length % 4, length & ~3
    if tail == 3:
        h = _js_int32(h) ^ (data[whole + 2] << 16)
    if tail >= 2:
        h = _js_int32(h) ^ (data[whole + 1] << 8)
    if tail >= 1:
        h = _js_int32(h) ^ data[whole]
        h = h * _MF
    h = _js_int32(h) ^ (_js_uint32(h) >> 13)
    h = h * _MF
    return _js_int32(h) ^ (_js_uint32(h) >> 15)


# ----------------------------------------------------------------------- partition rules
# Each mirrors one client function; ``n`` is already checked (1 <= n <= MAX_PARTITIONS).


def _java(key: bytes | None, n: int) -> int | None:
    # BuiltInPartitioner.partitionForKey; KafkaProducer.partition: serializedKey != null
    if key is None:
        return None
    return to_positive(murmur2(key)) % n


def _rd_consistent(key: bytes | None, n: int) -> int | None:
    # rd_kafka_msg_partitioner_consistent: rd_crc32(key, keylen) % partition_cnt (uint32 %)
    return crc32(key or b"") % n


def _rd_consistent_random(key: bytes | None, n: int) -> int | None:
    # keylen == 0 (NULL or empty) -> random; else consistent
    if not key:
        return None
    return crc32(key) % n


def _rd_murmur2(key: bytes | None, n: int) -> int | None:
    # (rd_murmur2(key, keylen) & 0x7fffffff) % partition_cnt; NULL hashes as 0 bytes
    return (murmur2(key or b"") & 0x7FFFFFFF) % n


def _rd_fnv1a(key: bytes | None, n: int) -> int | None:
    # rd_fnv1a(key, keylen) % partition_cnt; NULL hashes as 0 bytes
    return rd_fnv1a(key or b"") % n


def _rd_fnv1a_random(key: bytes | None, n: int) -> int | None:
    # !key -> random; an empty key is hashed
    if key is None:
        return None
    return rd_fnv1a(key) % n


def _go_rem(a: int, n: int) -> int:
    """Go's (and Java's, C's) ``%``: truncated division, the sign of the dividend."""
    r = abs(a) % n
    return -r if a < 0 else r


def _sarama_hash(key: bytes | None, n: int) -> int | None:
    # hashPartitioner.Partition, referenceAbs and hashUnsigned false:
    # partition = int32(Sum32()) % numPartitions; if partition < 0 { partition = -partition }
    if key is None:
        return None
    p = _go_rem(wrap32(fnv1a_32(key)), n)
    return -p if p < 0 else p


def _sarama_reference_hash(key: bytes | None, n: int) -> int | None:
    # referenceAbs: (int32(Sum32()) & 0x7fffffff) % numPartitions
    if key is None:
        return None
    return (wrap32(fnv1a_32(key)) & 0x7FFFFFFF) % n


def _sarama_consistent_crc(key: bytes | None, n: int) -> int | None:
    # hashUnsigned with crc32.NewIEEE(): int32(Sum32() % uint32(numPartitions))
    if key is None:
        return None
    return crc32(key) % n


def _kafkajs_legacy(key: bytes | None, n: int) -> int | None:
    # legacy/partitioner.js: toPositive(murmur2(message.key)) % numPartitions
    if key is None:
        return None
    return (kafkajs_legacy_murmur2(key) & 0x7FFFFFFF) % n


def _ignore_key(key: bytes | None, n: int) -> int | None:  # round-robin, sticky, random
    return None


def _cycle_problems(placed: Sequence[int], n: int) -> list[tuple[int, str]]:
    """Round-robin: consecutive records walk one cycle through all ``n`` partitions, learnt
    from the records: a first step ``a -> b`` is taken when ``b`` can still follow ``a`` (no
    step leads to ``b`` yet, none closes a cycle shorter than ``n``); every later step from
    ``a`` must go to ``b``. Steps from or to a partition outside ``0..n-1`` are skipped."""
    after: dict[int, tuple[int, int]] = {}  # partition -> (its successor, the record showing)
    before: dict[int, int] = {}  # partition -> its predecessor
    found: list[tuple[int, str]] = []
    for i in range(1, len(placed)):
        a, b = placed[i - 1], placed[i]
        if not (0 <= a < n and 0 <= b < n):
            continue
        head = f"record {i} on partition {b} after record {i - 1} on partition {a}: round-robin"
        if a in after:
            want, since = after[a]
            if b != want:
                found.append((i, f"{head} gives {want} (record {since} put {want} after {a})"))
            continue
        first, length = a, 1  # the start of the chain of learnt steps that ends at a
        while first in before:
            first, length = before[first], length + 1
        if b not in before and (b != first or length == n):
            after[a], before[b] = (b, i), a
            continue
        # what may follow a: a partition no step leads to yet, not closing a short cycle
        free = [x for x in range(min(n, len(before) + 6)) if x not in before and x != first]
        free, more = ([first], 0) if length == n else (free[:4], n - len(before) - 5)
        shown = [str(x) for x in free] + ([f"{more} more"] if more > 0 else [])
        gives = " or ".join([", ".join(shown[:-1]), shown[-1]] if len(shown) > 1 else shown)
        found.append((i, f"{head} gives {gives} (a partition not yet in its cycle of {n})"))
    return found


# ------------------------------------------------------------------------------ registry

#: the values of ``Partitioner.not_key_determined``: a null key, an empty (zero-byte) key, a
#: key of at least one byte (only the key-ignoring rules)
NULL, EMPTY, KEYED = "null", "empty", "keyed"


def _check_count(num_partitions: int) -> None:
    if isinstance(num_partitions, bool) or not 1 <= num_partitions <= MAX_PARTITIONS:
        raise ValueError(f"num_partitions must be 1..{MAX_PARTITIONS}, not {num_partitions}")


@dataclass(frozen=True)
class Usage(JsonDocument):
    """One client using a partitioner: by default, or when configured by its own name."""

    #: the client (library) and the versions this holds for
    client: str
    #: the client's own config value / API name that selects it
    selected_by: str
    #: whether it is that client's default
    default: bool
    #: what that client does with a null key (when the partitioner leaves it open)
    null_key: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Partitioner(JsonDocument):
    """One partitioning rule of a client for records without an explicit partition."""

    #: the registry key (``--partitioner NAME``)
    name: str
    description: str
    #: the clients that use it, each with its own name for it
    used_by: tuple[Usage, ...]
    #: the hash function, a function of this module (``murmur2``, ``crc32``, ...)
    hash: str
    #: the partition of a key as the source writes it
    formula: str
    #: the keys whose partition is not a function of the key: ``"null"``, ``"empty"``,
    #: ``"keyed"`` (every key: a key-ignoring rule)
    not_key_determined: tuple[str, ...]
    #: what happens to a null key / an empty (zero-length) key
    null_key: str
    empty_key: str
    #: the same partition as Java's ``BuiltInPartitioner.partitionForKey`` for every non-null
    #: key (the empty key included)
    java_compatible: bool
    #: where the rule is written (file:lines of the snapshot the module docstring names)
    source: str
    rule: Callable[[bytes | None, int], int | None] = field(repr=False, compare=False)
    #: a key-ignoring rule's promise about consecutive records' placements, what
    #: :meth:`promise_problems` checks and what not ("" when key-determined)
    promise: str = ""
    #: what happens to a key of at least one byte when the rule ignores it ("": the formula)
    non_empty_key: str = ""
    #: the promise's check beyond the partition range: (record, line) pairs (None: range only)
    check: _Check | None = field(default=None, repr=False, compare=False)

    @property
    def key_determined(self) -> bool:
        """Whether :meth:`partition` places a key of at least one byte (False: key-ignoring)."""
        return KEYED not in self.not_key_determined

    def partition(self, key: bytes | None, num_partitions: int) -> int | None:
        """The partition of a record with ``key`` (``None``: a null key) on a topic of
        ``num_partitions`` partitions, or ``None`` when this client does not derive it from
        the key (:attr:`null_key`, :attr:`empty_key`, :attr:`non_empty_key` say what it does
        instead)."""
        _check_count(num_partitions)
        if key is not None and not isinstance(key, bytes):
            key = bytes(key)
        return self.rule(key, num_partitions)

    def promise_problems(self, partitions: Sequence[int], num_partitions: int) -> list[str]:
        """Where a key-ignoring rule's placements break its :attr:`promise`: ``partitions``,
        in send order, the partition of each record it placed (record ``i``:
        ``partitions[i]``); one line per broken promise, in record order, naming the records
        by that position and what the rule gives (``[]``: it held). A partition outside
        ``0..num_partitions-1`` is always a line; ``round-robin`` also checks its cycle,
        ``sticky`` and ``random`` nothing more. Key-determined rules: always ``[]``."""
        if self.key_determined:
            return []
        _check_count(num_partitions)
        last = num_partitions - 1
        found = [
            (i, f"record {i} on partition {p}: {self.name} gives a partition in 0..{last}")
            for i, p in enumerate(partitions)
            if not 0 <= p <= last
        ]
        if self.check is not None:
            found += self.check(partitions, num_partitions)
        return [line for _, line in sorted(found, key=lambda f: f[0])]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "key_determined": self.key_determined,
            "hash": self.hash or None,
            "formula": self.formula,
            "not_key_determined": list(self.not_key_determined),
            "null_key": self.null_key,
            "empty_key": self.empty_key,
            "non_empty_key": self.non_empty_key or None,
            "promise": self.promise or None,
            "java_compatible": self.java_compatible,
            "used_by": [u.to_dict() for u in self.used_by],
            "source": self.source,
        }


def _ignoring(
    name: str,
    description: str,
    used_by: tuple[Usage, ...],
    formula: str,
    source: str,
    promise: str,
    check: _Check | None = None,
) -> Partitioner:
    """A rule that ignores every key: ``partition`` is None for any key."""
    like_any = f"not key-determined: {name}, like any key"
    return Partitioner(
        name, description, used_by, "", formula, (NULL, EMPTY, KEYED), like_any, like_any,
        False, source, _ignore_key, promise, f"not key-determined: {name} (the key is ignored)",
        check,
    )  # fmt: skip


_STICKY_RD = (
    "a sticky partition, changed every sticky.partitioning.linger.ms (default 2 x linger.ms "
    "= 10 ms); random when that is 0"
)
_HASHED_EMPTY = "hashed like any key (zero bytes)"

_ENTRIES = (
    Partitioner(
        name="java",
        description="Java KafkaProducer's hash of the serialized key (BuiltInPartitioner), "
        "the rule every Java-compatible client copies",
        used_by=(
            Usage(
                "Java kafka-clients (keyed rule unchanged since 0.8.2)",
                "partitioner.class unset (BuiltInPartitioner; DefaultPartitioner before 3.3)",
                True,
                "sticky: uniform sticky partition, adaptive (KIP-794, 3.3+); DefaultPartitioner "
                "sticky (KIP-480, 2.4-3.2), round-robin before 2.4; all records when "
                "partitioner.ignore.keys=true",
            ),
            Usage(
                "kafka-python",
                "partitioner=DefaultPartitioner() (StickyPartitioner: same keyed rule)",
                True,
                "random among partitions with a leader (all partitions when none has one)",
            ),
            Usage(
                "aiokafka",
                "partitioner=DefaultPartitioner()",
                True,
                "random among partitions with a leader (all partitions when none has one)",
            ),
            Usage(
                "franz-go (kgo)",
                "UniformBytesPartitioner(64KiB, true, true, nil) = KafkaHasher(murmur2); "
                "StickyKeyPartitioner(nil)",
                True,
                "sticky by bytes produced, adaptive (nil Key; a non-nil empty Key is hashed)",
            ),
            Usage(
                "kafkajs 2.x",
                "createPartitioner: Partitioners.DefaultPartitioner (JavaCompatiblePartitioner "
                "in 1.x)",
                True,
                "round-robin over partitions with a leader, from a random start (null or "
                "undefined key)",
            ),
            Usage(
                "sarama 1.50+",
                "Producer.Partitioner = NewMurmur2Partitioner",
                False,
                "random (Key == nil)",
            ),
            Usage(
                "librdkafka (and clients built on it)",
                "partitioner=murmur2_random",
                False,
                _STICKY_RD,
            ),
        ),
        hash="murmur2",
        formula="toPositive(murmur2(key)) % numPartitions",
        not_key_determined=(NULL,),
        null_key="not key-determined: sticky (Java 2.4+, franz-go, librdkafka), random "
        "(kafka-python, aiokafka, sarama), round-robin (kafkajs); see used_by",
        empty_key=_HASHED_EMPTY + ": (0x106e08d9 & 0x7fffffff) % n",
        java_compatible=True,
        source="kafka BuiltInPartitioner.java:329-331, KafkaProducer.java:1458-1478",
        rule=_java,
    ),
    Partitioner(
        name="librdkafka:consistent_random",
        description="librdkafka's default: CRC-32 of the key, unsigned; null and empty keys "
        "are not hashed",
        used_by=(
            Usage(
                "librdkafka, confluent-kafka-python/-go/-dotnet (librdkafka's default)",
                "partitioner=consistent_random",
                True,
                _STICKY_RD,
            ),
        ),
        hash="crc32",
        formula="rd_crc32(key, keylen) % partition_cnt (unsigned)",
        not_key_determined=(NULL, EMPTY),
        null_key="not key-determined: " + _STICKY_RD,
        empty_key="not key-determined (keylen == 0): " + _STICKY_RD,
        java_compatible=False,
        source="librdkafka rdkafka_msg.c:1063-1084, 1210-1226",
        rule=_rd_consistent_random,
    ),
    Partitioner(
        name="librdkafka:consistent",
        description="librdkafka: CRC-32 of the key, unsigned; null and empty keys are CRC-32 "
        "of nothing = 0",
        used_by=(Usage("librdkafka", "partitioner=consistent", False),),
        hash="crc32",
        formula="rd_crc32(key, keylen) % partition_cnt (unsigned)",
        not_key_determined=(),
        null_key="partition 0 (rd_crc32 of 0 bytes = 0; never sticky)",
        empty_key="partition 0 (CRC-32 of 0 bytes = 0)",
        java_compatible=False,
        source="librdkafka rdkafka_msg.c:1063-1070, rdkafka_topic.c:406-413",
        rule=_rd_consistent,
    ),
    Partitioner(
        name="librdkafka:murmur2",
        description="librdkafka: Java's murmur2 rule, but a null key is hashed as zero bytes",
        used_by=(Usage("librdkafka", "partitioner=murmur2", False),),
        hash="murmur2",
        formula="(rd_murmur2(key, keylen) & 0x7fffffff) % partition_cnt",
        not_key_determined=(),
        null_key="(0x106e08d9 & 0x7fffffff) % n: murmur2 of 0 bytes (never sticky)",
        empty_key=_HASHED_EMPTY + ": (0x106e08d9 & 0x7fffffff) % n",
        java_compatible=True,
        source="librdkafka rdkafka_msg.c:1086-1093, rdkafka_topic.c:406-413, rdmurmur2.c",
        rule=_rd_murmur2,
    ),
    Partitioner(
        name="librdkafka:fnv1a",
        description="librdkafka: FNV-1a as sarama's default reduces it; a null key is hashed "
        "as zero bytes",
        used_by=(Usage("librdkafka", "partitioner=fnv1a", False),),
        hash="rd_fnv1a",
        formula="rd_fnv1a(key, keylen) % partition_cnt (rd_fnv1a: |int32 FNV-1a|)",
        not_key_determined=(),
        null_key="0x7ee3623b % n: rd_fnv1a of 0 bytes (never sticky)",
        empty_key=_HASHED_EMPTY + ": 0x7ee3623b % n",
        java_compatible=False,
        source="librdkafka rdkafka_msg.c:1108-1115, rdkafka_topic.c:406-413, rdfnv1a.c",
        rule=_rd_fnv1a,
    ),
    Partitioner(
        name="librdkafka:fnv1a_random",
        description="librdkafka: FNV-1a as sarama's default reduces it; null keys are not hashed",
        used_by=(Usage("librdkafka", "partitioner=fnv1a_random", False, _STICKY_RD),),
        hash="rd_fnv1a",
        formula="rd_fnv1a(key, keylen) % partition_cnt (rd_fnv1a: |int32 FNV-1a|)",
        not_key_determined=(NULL,),
        null_key="not key-determined (!key): " + _STICKY_RD,
        empty_key=_HASHED_EMPTY + ": 0x7ee3623b % n",
        java_compatible=False,
        source="librdkafka rdkafka_msg.c:1117-1128, 1210-1226",
        rule=_rd_fnv1a_random,
    ),
    Partitioner(
        name="sarama:NewHashPartitioner",
        description="sarama's default: FNV-1a, signed remainder, negated when negative",
        used_by=(
            Usage(
                "sarama (IBM/sarama, Shopify/sarama)",
                "Producer.Partitioner = NewHashPartitioner",
                True,
                "random (Key == nil)",
            ),
        ),
        hash="fnv1a_32",
        formula="p = int32(fnv1a) % numPartitions; if p < 0 { p = -p }",
        not_key_determined=(NULL,),
        null_key="not key-determined: random partition (Key == nil)",
        empty_key=_HASHED_EMPTY + " (a non-nil Encoder of 0 bytes)",
        java_compatible=False,
        source="sarama partitioner.go:175-183, 209-240",
        rule=_sarama_hash,
    ),
    Partitioner(
        name="sarama:NewReferenceHashPartitioner",
        description="sarama: FNV-1a with Java's reduction (& 0x7fffffff): Java's arithmetic, "
        "not Java's hash",
        used_by=(
            Usage(
                "sarama",
                "Producer.Partitioner = NewReferenceHashPartitioner (or "
                "NewCustomPartitioner(WithAbsFirst()))",
                False,
                "random (Key == nil)",
            ),
        ),
        hash="fnv1a_32",
        formula="(int32(fnv1a) & 0x7fffffff) % numPartitions",
        not_key_determined=(NULL,),
        null_key="not key-determined: random partition (Key == nil)",
        empty_key=_HASHED_EMPTY,
        java_compatible=False,
        source="sarama partitioner.go:188-196, 209-240",
        rule=_sarama_reference_hash,
    ),
    Partitioner(
        name="sarama:NewConsistentCRCHashPartitioner",
        description="sarama 1.41+: CRC-32, unsigned remainder (librdkafka's consistent "
        "arithmetic); an empty key goes to partition 0",
        used_by=(
            Usage(
                "sarama 1.41+",
                "Producer.Partitioner = NewConsistentCRCHashPartitioner (or "
                "NewCustomPartitioner(WithHashUnsigned(), WithCustomHashFunction(crc32.NewIEEE)))",
                False,
                "random (Key == nil)",
            ),
        ),
        hash="crc32",
        formula="int32(crc32(key) % uint32(numPartitions))",
        not_key_determined=(NULL,),
        null_key="not key-determined: random partition (Key == nil)",
        empty_key="partition 0 (CRC-32 of 0 bytes = 0; librdkafka's consistent_random would "
        "not hash it)",
        java_compatible=False,
        source="sarama partitioner.go:200-207, 209-240",
        rule=_sarama_consistent_crc,
    ),
    Partitioner(
        name="kafkajs:LegacyPartitioner",
        description="kafkajs 1.x default: Java's formula over a murmur2 computed in "
        "JavaScript doubles, which gives other hashes",
        used_by=(
            Usage(
                "kafkajs (default before 2.0.0)",
                "createPartitioner: Partitioners.LegacyPartitioner",
                False,
                "round-robin over partitions with a leader, from a random start",
            ),
        ),
        hash="kafkajs_legacy_murmur2",
        formula="toPositive(murmur2(key)) % numPartitions (legacy/murmur2.js)",
        not_key_determined=(NULL,),
        null_key="not key-determined: round-robin (null or undefined key)",
        empty_key=_HASHED_EMPTY,
        java_compatible=False,
        source="kafkajs src/producer/partitioners/legacy/partitioner.js:20-47, murmur2.js",
        rule=_kafkajs_legacy,
    ),
    _ignoring(
        "round-robin",
        "kafka-go's default: every record, whatever its key, on the next partition of one "
        "cycle through all partitions",
        (
            Usage("segmentio/kafka-go (all)", "Writer.Balancer nil = &RoundRobin{}", True),
            Usage("sarama (all)", "Producer.Partitioner = NewRoundRobinPartitioner", False),
            Usage("franz-go (kgo) 0.10.2+", "RoundRobinPartitioner()", False),
            Usage(
                "Java kafka-clients 2.4+ (2.4-3.9.1: KAFKA-9965, a skip per new batch)",
                "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
                False,
            ),
        ),
        "partitions[(start + i) % n] for the i-th record (order and start: the client's)",
        "kafka-go balancer.go:37-68, writer.go:645-656; sarama partitioner.go:113-133; "
        "franz-go partitioner.go:126-154; kafka RoundRobinPartitioner.java:52-69",
        "per record: each record on the partition after the previous record's, in one fixed "
        "cycle through all n partitions (each once every n records). Checked: the range, and "
        "that consecutive records walk one such cycle. Not checked: which cycle (kafka-go: ids "
        "ascending; sarama, franz-go: the ids with a leader ascending; Java: its metadata's "
        "order) nor where it starts (0 on a fresh producer: per topic, kafka-go per Writer); "
        "a partition skipped for want of a leader breaks it (the check's topics have leaders)",
        _cycle_problems,
    ),
    _ignoring(
        "sticky",
        "every record, whatever its key, on the current sticky partition until a batch "
        "closes, then on another one chosen at random",
        (
            Usage("Java kafka-clients 3.3+", "partitioner.ignore.keys=true", False),
            Usage(
                "Java kafka-clients 2.4+ (deprecated since 3.3)",
                "partitioner.class=org.apache.kafka.clients.producer.UniformStickyPartitioner",
                False,
            ),
            Usage("franz-go (kgo) 0.1.0+", "StickyPartitioner()", False),
            Usage("franz-go 1.5.3+", "UniformBytesPartitioner(n, adaptive, false, nil)", False),
        ),
        "the sticky partition; a random one when a batch closes",
        "kafka UniformStickyPartitioner.java:57-70, StickyPartitionCache.java:46-74, "
        "BuiltInPartitioner.java:66-116; franz-go partitioner.go:276-457, producer.go:935-954",
        "runs of records on one partition; a new, random partition when a batch closes (Java "
        "UniformStickyPartitioner, franz-go StickyPartitioner: a new batch, never the previous "
        "partition) or after a byte budget (Java 3.3+ partitioner.ignore.keys: batch.size, "
        "adaptive, maybe the same partition again; franz-go UniformBytesPartitioner: n bytes). "
        "Checked: the range only: where a run ends depends on timing and sizes the placements "
        "do not carry",
    ),
    _ignoring(
        "random",
        "every record, whatever its key, on a partition drawn at random",
        (
            Usage("sarama (all)", "Producer.Partitioner = NewRandomPartitioner", False),
            Usage("librdkafka 0.11.4+ (and its clients)", "partitioner=random", False, _STICKY_RD),
        ),
        "a uniformly random partition per record",
        "sarama partitioner.go:94-111, async_producer.go:733-758; librdkafka "
        "rdkafka_msg.c:1050-1061, 1210-1226, rdkafka_topic.c:371, 406-413",
        "each record on a partition drawn at random, independently (sarama: among the "
        "partitions with a leader; librdkafka: among all, drawn once more when the first has "
        "no leader). Checked: the range only: no sequence of placements breaks it",
    ),
)

#: every partitioner, by name, in the order ``--help`` and ``partition`` list them
PARTITIONERS: dict[str, Partitioner] = {p.name: p for p in _ENTRIES}


# --------------------------------------------------------------------- a key on every one


@dataclass(frozen=True)
class Placement(JsonDocument):
    """Where one partitioner puts a key: a partition, or ``None`` (not key-determined)."""

    partitioner: str
    partition: int | None
    #: when ``partition`` is None: what the client does instead
    instead: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "partitioner": self.partitioner,
            "partition": self.partition,
            "instead": self.instead if self.partition is None else None,
        }


@dataclass(frozen=True)
class PartitionReport(JsonDocument):
    """A key on a topic of ``num_partitions`` partitions under several partitioners: the
    ``kafka-conformance partition --json`` document (``format`` :data:`FORMAT`)."""

    key: bytes | None
    num_partitions: int
    placements: tuple[Placement, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "key": None if self.key is None else self.key.hex(),
            "key_length": None if self.key is None else len(self.key),
            "num_partitions": self.num_partitions,
            "placements": [p.to_dict() for p in self.placements],
        }


@dataclass(frozen=True)
class Registry(JsonDocument):
    """Partitioners (e.g. ``tuple(PARTITIONERS.values())``): the ``kafka-conformance partition
    --list --json`` document (``format`` :data:`LIST_FORMAT`)."""

    partitioners: tuple[Partitioner, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"format": LIST_FORMAT, "partitioners": [p.to_dict() for p in self.partitioners]}


def place(
    key: bytes | None, num_partitions: int, names: tuple[str, ...] | None = None
) -> PartitionReport:
    """``key`` under the partitioners ``names`` (every one of :data:`PARTITIONERS` when None).
    Raises ``KeyError`` for an unknown name, ``ValueError`` for a partition count outside
    1..:data:`MAX_PARTITIONS`."""
    chosen = [PARTITIONERS[n] for n in names] if names is not None else list(_ENTRIES)
    placements = []
    for p in chosen:
        partition = p.partition(key, num_partitions)
        instead = p.null_key if key is None else p.non_empty_key if key else p.empty_key
        placements.append(Placement(p.name, partition, "" if partition is not None else instead))
    return PartitionReport(key, num_partitions, tuple(placements))
