"""The registry of clients' partitioners: which partition a keyed record goes to.

A producer that is not told a partition picks one. For a record with a key, every client
below hashes the key's (serialized) bytes, makes the hash non-negative and reduces it modulo
the partition count: each hashing entry is a :class:`~conformance.partitioners.compose.
Composition` of those parts (its only definition of the keyed rule), plus what the client
does with a null or an empty key. :data:`PARTITIONERS` has one :class:`Partitioner` per
distinct rule, each with the clients that use it (by default or by name) and the client's
own config/API name. ``partition(key, n)`` is ``None`` where the partition is not a function
of the key (random, sticky or round-robin, as that client does for a null or empty key; the
entry says which). Three rules ignore every key (``round-robin``, kafka-go's default;
``sticky``; ``random``): not :attr:`~Partitioner.key_determined`, they are judged by their
promise about a sequence of placements (:meth:`Partitioner.promise_problems`).
:func:`partitioner` takes a name or a composition (``murmur2|unsigned|mod``), as everything
that accepts a partitioner does.

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

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from conformance.errors import PartitionerError
from conformance.jsondoc import JsonDocument
from conformance.partitioners.compose import HASHES, POSITIVES, REDUCE, Composition, composition

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
    "partitioner",
    "place",
]

#: the format of the ``kafka-conformance partition --json`` document
FORMAT = "kafka-conformance/partition/1"
#: the format of the ``kafka-conformance partition --list --json`` document
LIST_FORMAT = "kafka-conformance/partitioners/2"
#: a partition count is a Java ``int`` (an int32 in librdkafka and sarama too)
MAX_PARTITIONS = (1 << 31) - 1

_Check = Callable[[Sequence[int], int], list[tuple[int, str]]]  # placements -> (record, line)


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

#: Java's keyed rule: ``toPositive(murmur2(key)) % numPartitions``
JAVA_COMPOSITION = composition("murmur2(seed=0x9747b28c)|mask|mod")

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

    #: the registry key (``--partitioner NAME``); a declared composition's canonical text
    name: str
    description: str
    #: the clients that use it, each with its own name for it
    used_by: tuple[Usage, ...]
    #: the keyed rule, ``positive(hash(key)) % n`` (None: a rule that ignores every key)
    composition: Composition | None
    #: the partition of a key as the source writes it
    formula: str
    #: the keys whose partition is not a function of the key: ``"null"``, ``"empty"``,
    #: ``"keyed"`` (every key: a key-ignoring rule); a null key not listed is hashed as zero
    #: bytes
    not_key_determined: tuple[str, ...]
    #: what happens to a null key / an empty (zero-length) key
    null_key: str
    empty_key: str
    #: where the rule is written (file:lines of the snapshot the module docstring names)
    source: str
    #: a key-ignoring rule's promise about consecutive records' placements, what
    #: :meth:`promise_problems` checks and what not ("" when key-determined)
    promise: str = ""
    #: what happens to a key of at least one byte when the rule ignores it ("": the formula)
    non_empty_key: str = ""
    #: the promise's check beyond the partition range: (record, line) pairs (None: range only)
    check: _Check | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.composition is None) != (KEYED in self.not_key_determined):
            raise ValueError(f"{self.name}: a composition exactly when a key determines it")

    @property
    def key_determined(self) -> bool:
        """Whether :meth:`partition` places a key of at least one byte (False: key-ignoring)."""
        return self.composition is not None

    @property
    def hash(self) -> str:
        """The composition's hash (a name of ``HASHES``; "" for a key-ignoring rule)."""
        return self.composition.hash if self.composition is not None else ""

    @property
    def java_compatible(self) -> bool:
        """The same partition as Java's ``BuiltInPartitioner.partitionForKey`` for every
        non-null key (the empty key included): Java's composition exactly (any other hash or
        positive step differs on some key)."""
        return self.composition == JAVA_COMPOSITION

    def partition(self, key: bytes | None, num_partitions: int) -> int | None:
        """The partition of a record with ``key`` (``None``: a null key) on a topic of
        ``num_partitions`` partitions, or ``None`` when this client does not derive it from
        the key (:attr:`null_key`, :attr:`empty_key`, :attr:`non_empty_key` say what it does
        instead)."""
        _check_count(num_partitions)
        kind = NULL if key is None else EMPTY if len(key) == 0 else KEYED
        if self.composition is None or kind in self.not_key_determined:
            return None
        return self.composition.partition(b"" if key is None else bytes(key), num_partitions)

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
            "composition": None if self.composition is None else self.composition.to_dict(),
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
        name, description, used_by, None, formula, (NULL, EMPTY, KEYED), like_any, like_any,
        source, promise, f"not key-determined: {name} (the key is ignored)", check,
    )  # fmt: skip


_STICKY_RD = (
    "a sticky partition, changed every sticky.partitioning.linger.ms (default 2 x linger.ms "
    "= 10 ms); random when that is 0"
)
_HASHED_EMPTY = "hashed like any key (zero bytes)"
#: the two keyed rules several entries share (each differs in its null or empty key)
_CRC_UNSIGNED = composition("crc32|unsigned|mod")
_FNV_ABS = composition("fnv1a_32|abs|mod")

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
        formula="toPositive(murmur2(key)) % numPartitions",
        not_key_determined=(NULL,),
        null_key="not key-determined: sticky (Java 2.4+, franz-go, librdkafka), random "
        "(kafka-python, aiokafka, sarama), round-robin (kafkajs); see used_by",
        empty_key=_HASHED_EMPTY + ": (0x106e08d9 & 0x7fffffff) % n",
        source="kafka BuiltInPartitioner.java:329-331, KafkaProducer.java:1458-1478",
        composition=JAVA_COMPOSITION,
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
        formula="rd_crc32(key, keylen) % partition_cnt (unsigned)",
        not_key_determined=(NULL, EMPTY),
        null_key="not key-determined: " + _STICKY_RD,
        empty_key="not key-determined (keylen == 0): " + _STICKY_RD,
        source="librdkafka rdkafka_msg.c:1063-1084, 1210-1226",
        composition=_CRC_UNSIGNED,
    ),
    Partitioner(
        name="librdkafka:consistent",
        description="librdkafka: CRC-32 of the key, unsigned; null and empty keys are CRC-32 "
        "of nothing = 0",
        used_by=(Usage("librdkafka", "partitioner=consistent", False),),
        formula="rd_crc32(key, keylen) % partition_cnt (unsigned)",
        not_key_determined=(),
        null_key="partition 0 (rd_crc32 of 0 bytes = 0; never sticky)",
        empty_key="partition 0 (CRC-32 of 0 bytes = 0)",
        source="librdkafka rdkafka_msg.c:1063-1070, rdkafka_topic.c:406-413",
        composition=_CRC_UNSIGNED,
    ),
    Partitioner(
        name="librdkafka:murmur2",
        description="librdkafka: Java's murmur2 rule, but a null key is hashed as zero bytes",
        used_by=(Usage("librdkafka", "partitioner=murmur2", False),),
        formula="(rd_murmur2(key, keylen) & 0x7fffffff) % partition_cnt",
        not_key_determined=(),
        null_key="(0x106e08d9 & 0x7fffffff) % n: murmur2 of 0 bytes (never sticky)",
        empty_key=_HASHED_EMPTY + ": (0x106e08d9 & 0x7fffffff) % n",
        source="librdkafka rdkafka_msg.c:1086-1093, rdkafka_topic.c:406-413, rdmurmur2.c",
        composition=JAVA_COMPOSITION,
    ),
    Partitioner(
        name="librdkafka:fnv1a",
        description="librdkafka: FNV-1a as sarama's default reduces it; a null key is hashed "
        "as zero bytes",
        used_by=(Usage("librdkafka", "partitioner=fnv1a", False),),
        formula="rd_fnv1a(key, keylen) % partition_cnt (rd_fnv1a: |int32 FNV-1a|)",
        not_key_determined=(),
        null_key="0x7ee3623b % n: rd_fnv1a of 0 bytes (never sticky)",
        empty_key=_HASHED_EMPTY + ": 0x7ee3623b % n",
        source="librdkafka rdkafka_msg.c:1108-1115, rdkafka_topic.c:406-413, rdfnv1a.c",
        composition=_FNV_ABS,
    ),
    Partitioner(
        name="librdkafka:fnv1a_random",
        description="librdkafka: FNV-1a as sarama's default reduces it; null keys are not hashed",
        used_by=(Usage("librdkafka", "partitioner=fnv1a_random", False, _STICKY_RD),),
        formula="rd_fnv1a(key, keylen) % partition_cnt (rd_fnv1a: |int32 FNV-1a|)",
        not_key_determined=(NULL,),
        null_key="not key-determined (!key): " + _STICKY_RD,
        empty_key=_HASHED_EMPTY + ": 0x7ee3623b % n",
        source="librdkafka rdkafka_msg.c:1117-1128, 1210-1226",
        composition=_FNV_ABS,
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
        formula="p = int32(fnv1a) % numPartitions; if p < 0 { p = -p }",
        not_key_determined=(NULL,),
        null_key="not key-determined: random partition (Key == nil)",
        empty_key=_HASHED_EMPTY + " (a non-nil Encoder of 0 bytes)",
        source="sarama partitioner.go:175-183, 209-240",
        composition=_FNV_ABS,
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
        formula="(int32(fnv1a) & 0x7fffffff) % numPartitions",
        not_key_determined=(NULL,),
        null_key="not key-determined: random partition (Key == nil)",
        empty_key=_HASHED_EMPTY,
        source="sarama partitioner.go:188-196, 209-240",
        composition=composition("fnv1a_32|mask|mod"),
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
        formula="int32(crc32(key) % uint32(numPartitions))",
        not_key_determined=(NULL,),
        null_key="not key-determined: random partition (Key == nil)",
        empty_key="partition 0 (CRC-32 of 0 bytes = 0; librdkafka's consistent_random would "
        "not hash it)",
        source="sarama partitioner.go:200-207, 209-240",
        composition=_CRC_UNSIGNED,
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
        formula="toPositive(murmur2(key)) % numPartitions (legacy/murmur2.js)",
        not_key_determined=(NULL,),
        null_key="not key-determined: round-robin (null or undefined key)",
        empty_key=_HASHED_EMPTY,
        source="kafkajs src/producer/partitioners/legacy/partitioner.js:20-47, murmur2.js",
        composition=composition("kafkajs_legacy_murmur2(seed=0x9747b28c)|mask|mod"),
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


def partitioner(spec: str) -> Partitioner:
    """The partitioner ``spec`` names: a name of :data:`PARTITIONERS`, or a composition
    ``HASH[(seed=N)]|POSITIVE|mod`` (any text with a ``|``; docs/partitioners.md). A
    composition hashes every non-null key (the empty key too); a null key is not
    key-determined (the client's own choice: sticky, random, round-robin or a hash of zero
    bytes, which the composition does not say). Raises
    :class:`~conformance.errors.PartitionerError` naming what is not known."""
    if spec in PARTITIONERS:
        return PARTITIONERS[spec]
    if "|" not in spec:
        raise PartitionerError(
            f"unknown partitioner {spec!r} (known: {', '.join(PARTITIONERS)}; or a "
            f"composition HASH|POSITIVE|{REDUCE}, hashes {', '.join(HASHES)}, positive "
            f"{', '.join(POSITIVES)}: kafka-conformance partition --list)"
        )
    rule = composition(spec)
    same = [p.name for p in _ENTRIES if p.composition == rule]
    return Partitioner(
        name=rule.text,
        description="a declared composition"
        + (f" (the keyed rule of {', '.join(same)})" if same else ""),
        used_by=(),
        composition=rule,
        formula=f"{rule.positive}({rule.hash}(key)) % numPartitions",
        not_key_determined=(NULL,),
        null_key="not key-determined: the client's own choice (a composition says nothing of "
        "null keys)",
        empty_key=_HASHED_EMPTY,
        source="declared",
    )


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
        return {
            "format": LIST_FORMAT,
            "partitioners": [p.to_dict() for p in self.partitioners],
            "parts": {
                "syntax": f"HASH[(seed=N)]|POSITIVE|{REDUCE}",
                "hashes": [h.to_dict() for h in HASHES.values()],
                "positive": [p.to_dict() for p in POSITIVES.values()],
                "reduce": [REDUCE],
            },
        }


def place(
    key: bytes | None, num_partitions: int, names: tuple[str, ...] | None = None
) -> PartitionReport:
    """``key`` under the partitioners ``names`` (names or compositions, :func:`partitioner`;
    every one of :data:`PARTITIONERS` when None). Raises
    :class:`~conformance.errors.PartitionerError` for an unknown one, ``ValueError`` for a
    partition count outside 1..:data:`MAX_PARTITIONS`."""
    chosen = [partitioner(n) for n in names] if names is not None else list(_ENTRIES)
    placements = []
    for p in chosen:
        partition = p.partition(key, num_partitions)
        instead = p.null_key if key is None else p.non_empty_key if key else p.empty_key
        placements.append(Placement(p.name, partition, "" if partition is not None else instead))
    return PartitionReport(key, num_partitions, tuple(placements))
