"""``conformance.partitioners`` against the vectors the clients publish themselves.

Every expected value below is copied from a client's (or its hash library's) own test or
source, named at each table; none is computed by the kit. Plus the Java differential (Kafka's
own ``Utils.murmur2`` on random keys, through the broker oracle) and Hypothesis properties.
The key-ignoring rules' promises are held to the placement sequences the clients' own tests
(or sources) say they produce, and to sequences a documented bug produces.
"""

from __future__ import annotations

import json
import os
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance import partitioners
from conformance.cli import main
from conformance.errors import PartitionerError
from conformance.partitioners import (
    EMPTY,
    FORMAT,
    HASHES,
    KEYED,
    LIST_FORMAT,
    MAX_PARTITIONS,
    NULL,
    PARTITIONERS,
    POSITIVES,
    Composition,
    composition,
    fnv1a_32,
    kafkajs_legacy_murmur2,
    murmur2,
    partitioner,
    place,
    rd_fnv1a,
    to_positive,
)
from conformance.primitives.crc import crc32
from conformance.producer_check.run import ProducerCapabilityError, read_producer_capabilities

JAVA = PARTITIONERS["java"]

# ------------------------------------------------------------------------------ murmur2

#: apache/kafka clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java, testMurmur2
KAFKA_UTILS_TEST = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}

_SHORT = b"1234"
_UNALIGNED = b"PreAmbleWillBeRemoved,ThePrePartThatIs"
#: librdkafka src/rdmurmur2.c, unittest_murmur2 (as uint32; "" also stands for NULL there)
LIBRDKAFKA_MURMUR2 = {
    b"kafka": 0xD067CF64,
    b"giberish123456789": 0x8F552B0C,
    _SHORT: 0x9FC97B14,
    _SHORT[1:]: 0xE7C009CA,
    _SHORT[2:]: 0x873930DA,
    _SHORT[3:]: 0x5A4B5CA1,
    _UNALIGNED: 0x78424F1C,
    _UNALIGNED[1:]: 0x4A62B377,
    _UNALIGNED[2:]: 0xE0E4E09E,
    _UNALIGNED[3:]: 0x62B8B43F,
    b"": 0x106E08D9,
}

#: IBM/sarama partitioner_test.go, TestMurmur2 (uint32, "verified against ... Utils.murmur2()")
SARAMA_MURMUR2 = {
    b"foo": 597841616,
    b"bar": 988958145,
    b"baz": 1973573280,
    b"": 275646681,
    b"kafka": 3496464228,
    b"sarama": 770765511,
}

#: tulios/kafkajs src/producer/partitioners/default/murmur2.spec.js (generated with the Java
#: murmur2 of default/Test.java); plus murmur2(0) -> String(0) and Buffer.from('1')
KAFKAJS_DEFAULT_MURMUR2 = {
    b"0": 971027396,
    b"1": -1993445489,
    b"128": -326012175,
    b"2187": -1508407203,
    b"16384": -325739742,
    b"78125": -1654490814,
    b"279936": 1462227128,
    b"823543": -2014198330,
    b"2097152": 607668903,
    b"4782969": -1182699775,
    b"10000000": -1830336757,
    b"19487171": -1603849305,
    b"35831808": -857013643,
    b"62748517": -1167431028,
    b"105413504": -381294639,
    b"170859375": -1658323481,
    b"100:48069": 1009543857,
}

#: tulios/kafkajs src/producer/partitioners/legacy/murmur2.spec.js (the 1.x JavaScript murmur2)
KAFKAJS_LEGACY_MURMUR2 = {
    b"0": 272173970,
    b"1": 1311020360,
    b"128": 2053105854,
    b"2187": -2081355488,
    b"16384": 204404061,
    b"78125": -677491393,
    b"279936": -622460209,
    b"823543": 651276451,
    b"2097152": 944683677,
    b"4782969": -892695770,
    b"10000000": -1778616326,
    b"19487171": -518311627,
    b"35831808": 556972389,
    b"62748517": -233806557,
    b"105413504": -109398538,
    b"170859375": 102939717,
}


@pytest.mark.parametrize(("key", "expected"), KAFKA_UTILS_TEST.items())
def test_murmur2_kafka_utils_test(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


@pytest.mark.parametrize(("key", "expected"), LIBRDKAFKA_MURMUR2.items())
def test_murmur2_librdkafka_unittest(key: bytes, expected: int) -> None:
    assert murmur2(key) & 0xFFFFFFFF == expected


@pytest.mark.parametrize(("key", "expected"), SARAMA_MURMUR2.items())
def test_murmur2_sarama(key: bytes, expected: int) -> None:
    assert murmur2(key) & 0xFFFFFFFF == expected


@pytest.mark.parametrize(("key", "expected"), KAFKAJS_DEFAULT_MURMUR2.items())
def test_murmur2_kafkajs_default(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


@pytest.mark.parametrize(("key", "expected"), KAFKAJS_LEGACY_MURMUR2.items())
def test_kafkajs_legacy_murmur2(key: bytes, expected: int) -> None:
    assert kafkajs_legacy_murmur2(key) == expected


def test_kafkajs_legacy_is_not_java_murmur2() -> None:
    """The two kafkajs spec files hash the same keys to different values: 1.x's default
    partitioner was not Java-compatible (kafkajs CHANGELOG 2.0.0, #1339)."""
    for key, legacy in KAFKAJS_LEGACY_MURMUR2.items():
        assert legacy != KAFKAJS_DEFAULT_MURMUR2[key]


def test_murmur2_takes_any_bytes_like() -> None:
    for key, expected in KAFKA_UTILS_TEST.items():
        assert murmur2(bytearray(key)) == murmur2(memoryview(key)) == expected


def test_to_positive_is_not_abs() -> None:
    """``Utils.toPositive``: ``number & 0x7fffffff`` (its Javadoc), unlike ``Utils.abs``
    (UtilsTest.testAbs: abs(-10) = 10)."""
    assert to_positive(-(1 << 31)) == 0
    assert to_positive(-1) == 0x7FFFFFFF
    assert to_positive(-10) == 0x7FFFFFF6
    assert to_positive(10) == 10
    assert to_positive(0) == 0


# --------------------------------------------------------------------------- fnv1a, crc32

#: Go src/hash/fnv/fnv_test.go, golden32a (sarama's hasher: fnv.New32a)
GO_FNV32A = {b"": 0x811C9DC5, b"a": 0xE40C292C, b"ab": 0x4D2505CA, b"abc": 0x1A47E90B}

#: librdkafka src/rdfnv1a.c, unittest_fnv1a (rd_fnv1a: the absolute value of the int32)
LIBRDKAFKA_FNV1A = {
    b"kafka": 0xD33C4E1,
    b"giberish123456789": 0x77A58295,
    _SHORT: 0x23BDD03,
    _SHORT[1:]: 0x2DEA3CD2,
    _SHORT[2:]: 0x740FA83E,
    _SHORT[3:]: 0x310CA263,
    _UNALIGNED: 0x65CBD69C,
    _UNALIGNED[1:]: 0x6E49C79A,
    _UNALIGNED[2:]: 0x69EED356,
    _UNALIGNED[3:]: 0x6ABCC023,
    b"": 0x7EE3623B,
}

#: IBM/sarama partitioner_test.go, TestHashPartitionerMinInt32: "1468509572224" generates
#: 2147483648 (uint32), int32's min value
SARAMA_MIN_INT32_KEY = b"1468509572224"


@pytest.mark.parametrize(("key", "expected"), GO_FNV32A.items())
def test_fnv1a_32_go_golden(key: bytes, expected: int) -> None:
    assert fnv1a_32(key) == expected


@pytest.mark.parametrize(("key", "expected"), LIBRDKAFKA_FNV1A.items())
def test_rd_fnv1a_librdkafka_unittest(key: bytes, expected: int) -> None:
    assert rd_fnv1a(key) == expected


def test_fnv1a_min_int32_key() -> None:
    assert fnv1a_32(SARAMA_MIN_INT32_KEY) == 2147483648
    for name in (
        "sarama:NewHashPartitioner",
        "sarama:NewReferenceHashPartitioner",
        "librdkafka:fnv1a",
        "librdkafka:fnv1a_random",
    ):
        assert 0 <= PARTITIONERS[name].partition(SARAMA_MIN_INT32_KEY, 50) < 50  # type: ignore[operator]


def test_fnv1a_min_int32_key_by_hand() -> None:
    """Worked by hand from the sources' arithmetic (2^31 = 50 * 42949672 + 48), not from the
    kit: sarama's Go ``int32(MinInt32) % 50 = -48``, negated: 48; librdkafka's
    ``(uint32_t)(-INT32_MIN) % 50 = 2^31 % 50``: 48; Java's reduction ``MIN & 0x7fffffff``: 0."""
    key = SARAMA_MIN_INT32_KEY
    assert PARTITIONERS["sarama:NewHashPartitioner"].partition(key, 50) == 48
    assert PARTITIONERS["librdkafka:fnv1a_random"].partition(key, 50) == 48
    assert PARTITIONERS["sarama:NewReferenceHashPartitioner"].partition(key, 50) == 0


def test_crc32_sarama_sheetjs() -> None:
    """sarama partitioner_test.go: "`SheetJS` has a crc32 hash value of 2647669026"."""
    assert crc32(b"SheetJS") == 2647669026


# ------------------------------------------------------------------------ partitions

#: dpkp/kafka-python test/producer/test_partitioner.py and aio-libs/aiokafka
#: tests/test_partitioner.py, test_murmur2_java_compatibility: 1000 partitions ("compare with
#: output from Kafka's org.apache.kafka.clients.producer.Partitioner")
KAFKA_PYTHON_1000 = {
    b"": 681,
    b"a": 524,
    b"ab": 434,
    b"abc": 107,
    b"123456789": 566,
    b"\x00 ": 742,
}

#: IBM/sarama partitioner_test.go, TestMurmur2Partitioner "known Java-compatible partition
#: assignments": 100 partitions
SARAMA_MURMUR2_100 = {b"foo": 16, b"bar": 45, b"baz": 80, b"kafka": 80, b"sarama": 11}

#: IBM/sarama partitioner_test.go, TestConsistentCRCHashPartitioner: 100 partitions
SARAMA_CRC_100 = {
    b"abc123def456": 57,
    b"SheetJS": 26,
    b"9e8c7f4cf45857cfff7645d6": 24,
    b"3900446192ff85a5f67da10c": 75,
    b"0f4407b7a67d6d27de372198": 50,
}


@pytest.mark.parametrize(("key", "expected"), KAFKA_PYTHON_1000.items())
def test_java_partition_kafka_python(key: bytes, expected: int) -> None:
    assert JAVA.partition(key, 1000) == expected
    assert PARTITIONERS["librdkafka:murmur2"].partition(key, 1000) == expected


@pytest.mark.parametrize(("key", "expected"), SARAMA_MURMUR2_100.items())
def test_java_partition_sarama_murmur2(key: bytes, expected: int) -> None:
    assert JAVA.partition(key, 100) == expected


@pytest.mark.parametrize(("key", "expected"), SARAMA_CRC_100.items())
def test_sarama_consistent_crc(key: bytes, expected: int) -> None:
    assert PARTITIONERS["sarama:NewConsistentCRCHashPartitioner"].partition(key, 100) == expected


#: librdkafka tests/0048-partitioner.c, do_test_partitioners: the keys ("23456" is
#: ``unaligned + 1`` of "123456") and, per partitioner, the hash of each key; -1 (None here)
#: is "random". The expected partition is ``hash % part_cnt`` with part_cnt 7 (quick) or 17;
#: the murmur2 constants are already ``toPositive``-ed (tests/java/Murmur2Cli.java).
LIBRDKAFKA_0048_KEYS: tuple[bytes | None, ...] = (
    None,
    b"",
    b"23456",
    b"this is another string with more length to it perhaps",
    b"hejsan",
)
LIBRDKAFKA_0048: dict[str, tuple[int | None, ...]] = {
    "consistent": (0x0, 0x0, 0xB1B451D7, 0xB0150DF7, 0xD077037E),
    "consistent_random": (None, None, 0xB1B451D7, 0xB0150DF7, 0xD077037E),
    "murmur2": (0x106E08D9, 0x106E08D9, 0x058D780F, 0x4F7703DA, 0x5EC19395),
    "murmur2_random": (None, 0x106E08D9, 0x058D780F, 0x4F7703DA, 0x5EC19395),
    "fnv1a": (0x7EE3623B, 0x7EE3623B, 0x27E6F469, 0x155E3E5F, 0x17B1E27A),
    "fnv1a_random": (None, 0x7EE3623B, 0x27E6F469, 0x155E3E5F, 0x17B1E27A),
}
#: librdkafka's names in the kit's registry (murmur2_random is Java's rule)
_RD = {n: f"librdkafka:{n}" for n in LIBRDKAFKA_0048} | {"murmur2_random": "java"}


@pytest.mark.parametrize("part_cnt", [7, 17])
@pytest.mark.parametrize("name", sorted(LIBRDKAFKA_0048))
def test_librdkafka_0048_partitioner(name: str, part_cnt: int) -> None:
    partitioner = PARTITIONERS[_RD[name]]
    for key, hashed in zip(LIBRDKAFKA_0048_KEYS, LIBRDKAFKA_0048[name], strict=True):
        expected = None if hashed is None else hashed % part_cnt
        assert partitioner.partition(key, part_cnt) == expected, key


def test_librdkafka_0048_hashes() -> None:
    """The same constants as the hashes themselves (NULL hashed as zero bytes). The murmur2
    column is ``toPositive(Utils.murmur2(key))``, as librdkafka's tests/java/Murmur2Cli.java
    prints it (murmur2 of "23456" has the high bit set)."""
    for i, key in enumerate(LIBRDKAFKA_0048_KEYS):
        data = key or b""
        assert crc32(data) == LIBRDKAFKA_0048["consistent"][i]
        assert to_positive(murmur2(data)) == LIBRDKAFKA_0048["murmur2"][i]
        assert rd_fnv1a(data) == LIBRDKAFKA_0048["fnv1a"][i]


def test_null_and_empty_keys_as_each_client_documents() -> None:
    """librdkafka's ``partitioner`` doc (rdkafka_conf.c): consistent maps empty and NULL keys
    to a single partition, consistent_random randomly partitions them; murmur2 and fnv1a map
    NULL keys to a single partition, the *_random ones partition NULL randomly. Sarama, Java,
    kafka-python, kafkajs: a null key is not hashed, an empty one is."""
    n = 12
    single = ("librdkafka:consistent", "librdkafka:murmur2", "librdkafka:fnv1a")
    for name in single:
        assert PARTITIONERS[name].partition(None, n) == PARTITIONERS[name].partition(b"", n)
        assert PARTITIONERS[name].not_key_determined == ()
    assert PARTITIONERS["librdkafka:consistent_random"].not_key_determined == (NULL, EMPTY)
    for name, p in PARTITIONERS.items():
        if name not in single and name != "librdkafka:consistent_random" and p.key_determined:
            assert p.not_key_determined == (NULL,), name
            assert p.partition(None, n) is None and p.partition(b"", n) is not None


# ----------------------------------------------------------------------- the registry


def test_registry_documents_every_partitioner() -> None:
    assert len(PARTITIONERS) >= 13
    for name, p in PARTITIONERS.items():
        assert p.name == name and p.description and p.formula and p.source and p.used_by
        texts = ((NULL, p.null_key), (EMPTY, p.empty_key), (KEYED, p.non_empty_key))
        for kind, text in texts[: 3 if KEYED in p.not_key_determined else 2]:
            assert text.startswith("not key-determined") == (kind in p.not_key_determined)
        assert set(p.not_key_determined) <= {NULL, EMPTY, KEYED}
        assert p.key_determined == (KEYED not in p.not_key_determined) == (not p.promise)
        if p.key_determined:
            assert p.composition is not None and p.hash in HASHES and not p.non_empty_key
        else:  # ignoring keys ignores null and empty ones too
            assert p.not_key_determined == (NULL, EMPTY, KEYED) and not p.hash
            assert p.composition is None
            assert not p.java_compatible and "Checked:" in p.promise
        doc = json.loads(p.to_json())
        assert doc == p.to_dict() and doc["name"] == name and "rule" not in doc
        assert "check" not in doc and doc["key_determined"] == p.key_determined
        assert all(u["client"] and u["selected_by"] for u in doc["used_by"])
    defaults = {u.client for p in PARTITIONERS.values() for u in p.used_by if u.default}
    # Java, kafka-python, aiokafka, franz-go, kafkajs, librdkafka, sarama, kafka-go
    assert len(defaults) >= 8
    with pytest.raises(KeyError):  # the producer check turns this into a capability error
        PARTITIONERS["no-such-partitioner"]


def test_partition_count_is_checked() -> None:
    for bad in (0, -1, MAX_PARTITIONS + 1):
        with pytest.raises(ValueError):
            JAVA.partition(b"k", bad)
    assert JAVA.partition(b"k", MAX_PARTITIONS) is not None
    assert JAVA.partition(b"k", 1) == 0


def test_place_and_its_document() -> None:
    report = place(b"foo", 100)
    assert [p.partitioner for p in report.placements] == list(PARTITIONERS)
    doc = json.loads(report.to_json())
    assert doc["format"] == FORMAT and doc["key"] == "666f6f" and doc["key_length"] == 3
    assert doc["placements"][0] == {"partitioner": "java", "partition": 16, "instead": None}
    null = place(None, 6, ("java", "librdkafka:consistent"))
    assert null.to_dict()["key"] is None
    java, consistent = null.placements
    assert java.partition is None and java.instead == JAVA.null_key
    assert consistent.partition == 0
    with pytest.raises(PartitionerError, match="unknown partitioner 'no-such' .*known: java"):
        place(b"", 1, ("no-such",))
    (declared,) = place(b"21", 100, ("murmur2|unsigned|mod",)).placements
    assert declared.partitioner == "murmur2(seed=0x9747b28c)|unsigned|mod"
    assert declared.partition == (-973932308 + (1 << 32)) % 100  # UtilsTest's murmur2("21")


# ---------------------------------------------------------------------- compositions

#: each hashing entry's keyed rule as its source writes it (the ``formula`` of each entry):
#: Java ``toPositive(Utils.murmur2(key)) % n`` (BuiltInPartitioner.java:329-331, seed
#: 0x9747b28c in Utils.java:495); librdkafka ``rd_crc32(key) % cnt`` on uint32, ``(rd_murmur2
#: & 0x7fffffff) % cnt``, ``rd_fnv1a % cnt`` with rd_fnv1a the absolute value of the int32
#: (rdkafka_msg.c:1063-1128, rdfnv1a.c); sarama ``int32(fnv) % n``, negated when negative (=
#: the absolute value, then the remainder), ``(int32(fnv) & 0x7fffffff) % n``,
#: ``crc32 % uint32(n)`` (partitioner.go:175-240); kafkajs 1.x ``toPositive(murmur2(key)) % n``
#: over its own murmur2, same seed (legacy/partitioner.js, murmur2.js)
SOURCE_COMPOSITIONS = {
    "java": "murmur2(seed=0x9747b28c)|mask|mod",
    "librdkafka:consistent_random": "crc32|unsigned|mod",
    "librdkafka:consistent": "crc32|unsigned|mod",
    "librdkafka:murmur2": "murmur2(seed=0x9747b28c)|mask|mod",
    "librdkafka:fnv1a": "fnv1a_32|abs|mod",
    "librdkafka:fnv1a_random": "fnv1a_32|abs|mod",
    "sarama:NewHashPartitioner": "fnv1a_32|abs|mod",
    "sarama:NewReferenceHashPartitioner": "fnv1a_32|mask|mod",
    "sarama:NewConsistentCRCHashPartitioner": "crc32|unsigned|mod",
    "kafkajs:LegacyPartitioner": "kafkajs_legacy_murmur2(seed=0x9747b28c)|mask|mod",
}
#: SMHasher (aappleby/smhasher src/main.cpp): MurmurHash2's verification value, the hash
#: (seed 0) of the hashes of {}, {0}, {0, 1}, ... {0..254} each with seed 256 - length
SMHASHER_MURMUR2 = 0x27864C1E
UNSIGNED_MURMUR2 = "murmur2|unsigned|mod"  # @platformatic/kafka: (murmur2(key) >>> 0) % n


def test_every_built_in_is_the_composition_its_source_writes() -> None:
    keyed = {n: p.composition.text for n, p in PARTITIONERS.items() if p.composition}
    assert keyed == SOURCE_COMPOSITIONS
    assert all(not p.key_determined for n, p in PARTITIONERS.items() if n not in keyed)


def test_murmur2_seed_smhasher_verification() -> None:
    key = bytes(range(256))
    hashes = b"".join(
        struct.pack("<I", murmur2(key[:i], seed=256 - i) & 0xFFFFFFFF) for i in range(256)
    )
    assert murmur2(hashes, seed=0) & 0xFFFFFFFF == SMHASHER_MURMUR2
    assert composition("murmur2(seed=0)|unsigned|mod").hashed(hashes) & 0xFFFFFFFF == (
        SMHASHER_MURMUR2
    )


def test_positive_steps_by_hand() -> None:
    """mask is Java's toPositive; abs the int32's absolute value with |-2^31| = 2^31
    (librdkafka's rd_fnv1a of the int32 minimum: 2147483648, rdfnv1a.c); unsigned the bits as
    uint32 (JavaScript's ``-1 >>> 0`` is 4294967295). The hash's 32-bit pattern counts, not
    its sign: 0x80000000 and -2^31 are the same input."""
    mask, absolute, unsigned = (POSITIVES[n].function for n in ("mask", "abs", "unsigned"))
    for low in (-(1 << 31), 0x80000000):
        assert (mask(low), absolute(low), unsigned(low)) == (0, 1 << 31, 0x80000000)
    for minus_one in (-1, 0xFFFFFFFF):
        assert (mask(minus_one), absolute(minus_one), unsigned(minus_one)) == (
            0x7FFFFFFF,
            1,
            0xFFFFFFFF,
        )
    assert (mask(-10), absolute(-10), unsigned(-10)) == (0x7FFFFFF6, 10, 0xFFFFFFF6)
    assert (mask(7), absolute(7), unsigned(7)) == (7, 7, 7)


@pytest.mark.parametrize(
    "text",
    [
        UNSIGNED_MURMUR2,
        "murmur2(seed=0x9747b28c)|unsigned|mod",
        " murmur2 ( seed = 0x9747B28C ) | unsigned | mod ",
        "murmur2(seed=2538058380)|unsigned|mod",
    ],
)
def test_composition_syntax_and_its_canonical_text(text: str) -> None:
    rule = composition(text)
    assert rule == Composition("murmur2", "unsigned", 0x9747B28C)
    assert rule.text == "murmur2(seed=0x9747b28c)|unsigned|mod"
    assert composition(rule.text) == rule
    assert composition("crc32|unsigned|mod").text == "crc32|unsigned|mod"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("xyz|mask|mod", "unknown hash 'xyz' (known: murmur2, crc32, fnv1a_32, kafkajs_legacy_"),
        ("murmur2|positive|mod", "unknown positive step 'positive' (known: mask, abs, unsigned)"),
        ("murmur2|mask|div", "unknown reduction 'div' in partitioner 'murmur2|mask|div' (known"),
        ("murmur2|mask", "a composition is HASH|POSITIVE|mod, 3 parts separated by '|', not 2"),
        ("murmur2|mask|mod|mod", "3 parts separated by '|', not 4"),
        ("|mask|mod", "not a hash: ''"),
        ("murmur2(|mask|mod", "not a hash: 'murmur2('"),
        ("crc32(seed=1)|unsigned|mod", "hash 'crc32' takes no parameters"),
        ("murmur2(salt=1)|mask|mod", "hash 'murmur2' has one parameter, seed (seed=N), not"),
        ("murmur2(seed=1,seed=2)|mask|mod", "hash 'murmur2' has one parameter, seed"),
        ("murmur2(seed=-1)|mask|mod", "seed must be a decimal or 0x hexadecimal integer"),
        ("murmur2(seed=1e3)|mask|mod", "seed must be a decimal or 0x hexadecimal integer"),
        ("murmur2(seed=\u0663)|mask|mod", "seed must be a decimal or 0x hexadecimal integer"),
        ("murmur2(seed=0x100000000)|mask|mod", "seed must be 0..0xffffffff, not 4294967296"),
    ],
)
def test_a_composition_error_names_what_is_not_known(text: str, message: str) -> None:
    with pytest.raises(PartitionerError) as e:
        partitioner(text)
    assert message in str(e.value)
    assert f"in partitioner {text!r}" in str(e.value)


def test_a_declared_composition_is_a_partitioner() -> None:
    p = partitioner(UNSIGNED_MURMUR2)
    assert p.name == "murmur2(seed=0x9747b28c)|unsigned|mod" and p.key_determined
    assert p.partition(None, 6) is None and p.not_key_determined == (NULL,)
    assert p.partition(b"", 6) == 0x106E08D9 % 6  # librdkafka's murmur2 of no bytes
    assert not p.java_compatible and json.loads(p.to_json())["composition"]["positive"] == (
        "unsigned"
    )
    same = partitioner("murmur2|mask|mod")
    assert same.java_compatible and "java, librdkafka:murmur2" in same.description
    assert partitioner("java") is JAVA


@pytest.mark.parametrize(("key", "signed"), KAFKA_UTILS_TEST.items())
def test_unsigned_murmur2_on_kafkas_own_hashes(key: bytes, signed: int) -> None:
    """``(murmur2(key) >>> 0) % n`` over the values of Kafka's UtilsTest: the same as Java
    for a non-negative hash, another partition (for most n) for a negative one."""
    p = partitioner(UNSIGNED_MURMUR2)
    for n in (6, 100, 1000):
        assert p.partition(key, n) == (signed + (1 << 32) if signed < 0 else signed) % n
        if signed >= 0:
            assert p.partition(key, n) == JAVA.partition(key, n)
    if signed < 0:
        assert p.partition(key, 1000) != JAVA.partition(key, 1000)


@given(
    st.sampled_from(sorted(HASHES)),
    st.sampled_from(sorted(POSITIVES)),
    st.integers(0, 0xFFFFFFFF),
    st.binary(max_size=40),
    st.integers(1, MAX_PARTITIONS),
)
def test_every_composition_gives_a_partition(
    hash_name: str, positive: str, seed: int, key: bytes, n: int
) -> None:
    rule = Composition(hash_name, positive, seed if HASHES[hash_name].seeded else None)
    assert 0 <= rule.partition(key, n) < n
    assert composition(rule.text) == rule


def test_capabilities_take_a_composition_and_name_what_is_not_known() -> None:
    produce = {"partitioner": UNSIGNED_MURMUR2}
    caps, problem = read_producer_capabilities(json.dumps({"produce": produce}), "x")
    assert problem is None and caps.partitioner() == UNSIGNED_MURMUR2
    for bad, message in (
        ("xyz|mask|mod", "produce.partitioner: unknown hash 'xyz' (known: murmur2, crc32, "),
        ("murmur2|neg|mod", "produce.partitioner: unknown positive step 'neg' (known: mask, "),
        ("no-such", "produce.partitioner: unknown partitioner 'no-such' (known: java, "),
    ):
        with pytest.raises(ProducerCapabilityError, match=re.escape(message)):
            read_producer_capabilities(json.dumps({"produce": {"partitioner": bad}}), "x")


def test_cli_takes_a_composition(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(
        capsys, "--key", "21", "--partitions", "100", "--partitioner", UNSIGNED_MURMUR2
    )
    assert code == 0
    assert out.splitlines()[1].split() == [
        "murmur2(seed=0x9747b28c)|unsigned|mod",
        str((-973932308 + (1 << 32)) % 100),
    ]
    code, out = _run(capsys, "--list", "--partitioner", "fnv1a_32|abs|mod")
    assert code == 0 and out.splitlines()[:2] == [
        "fnv1a_32|abs|mod (key-determined)",
        "    composition: fnv1a_32|abs|mod",
    ]
    assert "parts of a composition" not in out


# --------------------------------------------------------------- key-ignoring promises

ROUND_ROBIN, STICKY, RANDOM = (PARTITIONERS[n] for n in ("round-robin", "sticky", "random"))
KEY_IGNORING = (ROUND_ROBIN, STICKY, RANDOM)


def test_key_ignoring_entries_and_who_uses_them() -> None:
    """kafka-go's Writer: "The default is to use a round-robin distribution" (writer.go:93-96,
    ``config.Balancer = &RoundRobin{}``); no other client ignores keys by default."""
    for p in KEY_IGNORING:
        assert not p.key_determined
        for key in (None, b"", b"k", b"order-42"):
            assert p.partition(key, 12) is None
    defaults = {p.name: [u.client for u in p.used_by if u.default] for p in KEY_IGNORING}
    assert defaults == {"round-robin": ["segmentio/kafka-go (all)"], "sticky": [], "random": []}
    named = {u.selected_by for p in KEY_IGNORING for u in p.used_by}
    for name in (
        "Writer.Balancer nil = &RoundRobin{}",
        "Producer.Partitioner = NewRoundRobinPartitioner",
        "Producer.Partitioner = NewRandomPartitioner",
        "RoundRobinPartitioner()",
        "StickyPartitioner()",
        "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
        "partitioner.class=org.apache.kafka.clients.producer.UniformStickyPartitioner",
        "partitioner.ignore.keys=true",
        "partitioner=random",
    ):
        assert name in named, name


def test_key_determined_entries_make_no_sequence_promise() -> None:
    for p in PARTITIONERS.values():
        if p.key_determined:
            assert p.promise_problems([0, 0, 0, 99, -1], 3) == [], p.name


#: segmentio/kafka-go balancer_test.go, TestRoundRobin, default chunk size: the i-th Balance
#: over partitions 0..6 (and 0..7) returns ``i / 1 % len(partitions)``, i = 0..49
KAFKA_GO_ROUND_ROBIN = {n: [i % n for i in range(50)] for n in (7, 8)}
#: IBM/sarama partitioner_test.go, TestRoundRobinPartitioner: one call with 1 partition
#: (returns 0), then calls i = 1..49 with 7 partitions return ``i % 7``: the walk starts at 1
SARAMA_ROUND_ROBIN_7 = [i % 7 for i in range(1, 50)]
#: apache/kafka RoundRobinPartitionerTest: "Intentionally make the partition list not in
#: partition order": Cluster partitions listed 1, 2, 0; RoundRobinPartitioner takes
#: ``availablePartitions.get(counter % size)``, counter from 0 (RoundRobinPartitioner.java:57)
JAVA_LIST_ORDER = [1, 2, 0] * 10


@pytest.mark.parametrize(
    ("placed", "n"),
    [
        (KAFKA_GO_ROUND_ROBIN[7], 7),
        (KAFKA_GO_ROUND_ROBIN[8], 8),
        (SARAMA_ROUND_ROBIN_7, 7),
        (JAVA_LIST_ORDER, 3),
        ([0] * 5, 1),  # sarama: "Returned non-zero partition when only one available"
        ([], 3),
        ([2], 3),
    ],
)
def test_round_robin_accepts_what_the_clients_do(placed: list[int], n: int) -> None:
    assert ROUND_ROBIN.promise_problems(placed, n) == []


def test_round_robin_rejects_a_skipped_partition_kafka_9965() -> None:
    """Java's RoundRobinPartitioner before KAFKA-17632 (apache/kafka#17620, "Fix
    RoundRobinPartitioner for even partition counts"; ProducerConfig.java:315-316: "a known
    issue that will cause uneven distribution when a new batch is created. See KAFKA-9965"):
    with an even partition count, every other partition only, [0, 2, 0, 2, ...] on 4. In a
    cycle through 4 partitions, 2 (after 0) must be followed by 1 or 3, never 0 again."""
    lines = ROUND_ROBIN.promise_problems([0, 2, 0, 2, 0, 2], 4)
    assert lines and lines[0].startswith(
        "record 2 on partition 0 after record 1 on partition 2: round-robin gives 1 or 3"
    )
    assert all(line.startswith("record ") for line in lines)


def test_round_robin_rejects_a_repeat_and_a_changed_cycle() -> None:
    # the second record on the first one's partition: 2 partitions, so 1 must follow 0
    assert ROUND_ROBIN.promise_problems([0, 0], 2) == [
        "record 1 on partition 0 after record 0 on partition 0: round-robin gives 1 "
        "(a partition not yet in its cycle of 2)"
    ]
    # the kafka-go walk, then once 2 after 0 where the walk put 1 after 0 (record 1)
    assert ROUND_ROBIN.promise_problems([0, 1, 2, 0, 2], 3) == [
        "record 4 on partition 2 after record 3 on partition 0: round-robin gives 1 "
        "(record 1 put 1 after 0)"
    ]


def test_round_robin_is_not_lenient_to_skipped_leaderless_partitions() -> None:
    """RoundRobinPartitionerTest.testRoundRobinWithUnavailablePartitions: partition 1 has no
    leader, so Java alternates 2, 0 (its available list) on 3 partitions: the promise is a
    cycle through all of them (the producer check's topics have a leader everywhere)."""
    lines = ROUND_ROBIN.promise_problems([2, 0] * 50, 3)
    assert lines and lines[0].startswith("record 2 on partition 2 after record 1 on partition 0")


@pytest.mark.parametrize("rule", KEY_IGNORING, ids=lambda p: p.name)
def test_every_key_ignoring_rule_checks_the_range(rule: partitioners.Partitioner) -> None:
    assert rule.promise_problems([0, 1, 2, 0], 3) == []
    lines = rule.promise_problems([0, 3, 1], 3)
    assert f"record 1 on partition 3: {rule.name} gives a partition in 0..2" in lines
    lines = rule.promise_problems([1, 2, -1], 3)
    assert f"record 2 on partition -1: {rule.name} gives a partition in 0..2" in lines
    with pytest.raises(ValueError):
        rule.promise_problems([0], 0)


def test_sticky_and_random_accept_what_the_clients_do() -> None:
    """Sticky runs (UniformStickyPartitioner / franz-go StickyPartitioner: a new partition,
    not the previous one, per new batch; Java 3.3+ may pick the same again) and random draws
    (sarama TestRandomPartitioner: any choice in [0, 50)) break no promise in range."""
    runs = [2, 2, 2, 0, 0, 1, 1, 1, 1, 0]
    assert STICKY.promise_problems(runs, 3) == []
    assert STICKY.promise_problems([4] * 20, 5) == []
    assert RANDOM.promise_problems([17, 3, 3, 49, 0, 17], 50) == []


def _cycles(n: int) -> st.SearchStrategy[tuple[list[int], int, int]]:
    return st.tuples(st.permutations(range(n)), st.integers(0, n - 1), st.integers(0, 40))


@given(st.integers(1, 12).flatmap(_cycles))
def test_round_robin_accepts_any_fixed_cycle(cycle: tuple[list[int], int, int]) -> None:
    """Any order (Java's is its metadata's), any start (a counter already moved)."""
    order, start, count = cycle
    n = len(order)
    assert ROUND_ROBIN.promise_problems([order[(start + i) % n] for i in range(count)], n) == []


@given(st.lists(st.integers(0, 5), max_size=30))
def test_range_is_all_sticky_and_random_check(placed: list[int]) -> None:
    assert STICKY.promise_problems(placed, 6) == RANDOM.promise_problems(placed, 6) == []


# ------------------------------------------------------------------------ the command


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["partition", *argv])
    return code, capsys.readouterr().out


def test_cli_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, "--key", "foo", "--partitions", "100")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "key 666f6f 'foo', 3 bytes; 100 partitions"
    assert lines[1].split() == ["java", "16"]
    assert len(lines) == 1 + len(PARTITIONERS)
    code, out = _run(capsys, "--null-key", "--partitions", "7", "--partitioner", "java")
    assert code == 0 and "not key-determined" in out.splitlines()[1]


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--key-hex", "00 20", "--partitions", "1000", "--partitioner", "java", "--json")
    code, out = _run(capsys, *args)
    doc = json.loads(out)
    assert code == 0 and doc["key"] == "0020" and doc["placements"][0]["partition"] == 742
    code, out = _run(capsys, "--key", "", "--partitions", "1000", "--json")
    assert json.loads(out)["placements"][0]["partition"] == 681  # empty, not null


@pytest.mark.parametrize(
    "argv",
    [
        ["--partitions", "3"],
        ["--key", "a", "--null-key", "--partitions", "3"],
        ["--key-hex", "zz", "--partitions", "3"],
        ["--key", "a", "--partitions", "0"],
        ["--key", "a", "--partitions", str(MAX_PARTITIONS + 1)],
        ["--key", "a", "--partitions", "3", "--partitioner", "nope"],
        ["--list", "--partitioner", "nope"],
        ["--list", "--key", "a"],
        ["--list", "--null-key"],
    ],
)
def test_cli_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["partition", *argv])
    assert e.value.code == 2
    capsys.readouterr()


@pytest.mark.parametrize(
    "argv", [["--list", "--partitions", "3"], ["--key", "a"], ["--null-key", "--json"]]
)
def test_cli_list_and_key_arguments(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--list takes no --partitions; a key needs them: exit 2 with a message."""
    code, out = _run(capsys, *argv)
    assert code == 2 and out == ""


def _command(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KAFKA_CONFORMANCE_ROOT": str(Path(__file__).resolve().parent.parent)}
    return subprocess.run(
        [sys.executable, "-m", "conformance.cli", "partition", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_cli_list_text() -> None:
    done = _command("--list")
    assert done.returncode == 0, done.stderr
    entries, parts = done.stdout.split("\n\n")
    heads = [line for line in entries.splitlines() if not line.startswith(" ")]
    assert heads == [
        f"{name} ({'key-determined' if p.key_determined else 'ignores keys'})"
        for name, p in PARTITIONERS.items()
    ]
    java = entries.split("\nlibrdkafka:consistent_random")[0]
    assert "    composition: murmur2(seed=0x9747b28c)|mask|mod\n" in java
    assert "    null key: not key-determined: sticky" in java
    assert "composition: none (the key is ignored)" in entries.split("round-robin (ignores")[1]
    assert parts.startswith("parts of a composition HASH[(seed=N)]|POSITIVE|mod")
    for name in [*HASHES, *POSITIVES]:
        assert f"    hash {name}" in parts or f"    positive {name}: " in parts, name
    assert "    hash murmur2(seed=N): " in parts and "\n    mod: " in parts
    blocks = done.stdout.split("\nround-robin (ignores keys)\n")[1]
    assert "default of: segmentio/kafka-go (all)" in blocks.split("\nsticky")[0]
    one = _command("--list", "--partitioner", "random")
    assert one.returncode == 0 and one.stdout.splitlines()[0] == "random (ignores keys)"
    assert "default of: no client" in one.stdout


def test_cli_list_json() -> None:
    done = _command("--list", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["format"] == LIST_FORMAT
    assert [p["name"] for p in doc["partitioners"]] == list(PARTITIONERS)
    assert doc["parts"]["syntax"] == "HASH[(seed=N)]|POSITIVE|mod"
    assert [h["name"] for h in doc["parts"]["hashes"]] == list(HASHES)
    assert [p["name"] for p in doc["parts"]["positive"]] == list(POSITIVES)
    assert doc["partitioners"][0]["composition"] == {
        "text": "murmur2(seed=0x9747b28c)|mask|mod",
        "hash": "murmur2",
        "seed": "0x9747b28c",
        "positive": "mask",
        "reduce": "mod",
    }
    assert doc["partitioners"] == [json.loads(p.to_json()) for p in PARTITIONERS.values()]
    rr = doc["partitioners"][list(PARTITIONERS).index("round-robin")]
    assert rr["key_determined"] is False and rr["promise"] and rr["hash"] is None
    assert doc["partitioners"][0]["key_determined"] is True


def test_cli_unknown_partitioner_exits_2() -> None:
    for argv in (
        ("--key", "a", "--partitions", "3", "--partitioner", "nope"),
        ("--list", "--partitioner", "nope"),
    ):
        done = _command(*argv)
        assert done.returncode == 2 and "unknown partitioner 'nope' (known: java," in done.stderr
    done = _command("--key", "a", "--partitions", "3", "--partitioner", "xyz|mask|mod")
    assert done.returncode == 2 and "unknown hash 'xyz' (known: murmur2, crc32" in done.stderr


# ------------------------------------------------------------------ Hypothesis properties

keys = st.one_of(st.none(), st.binary(max_size=80))
counts = st.one_of(st.integers(1, 64), st.integers(1, MAX_PARTITIONS))


@given(keys, counts)
def test_partition_in_range_and_none_exactly_where_documented(key: bytes | None, n: int) -> None:
    for p in PARTITIONERS.values():
        got = p.partition(key, n)
        kind = NULL if key is None else EMPTY if key == b"" else KEYED
        if kind in p.not_key_determined:
            assert got is None, p.name
        else:
            assert got is not None and 0 <= got < n, p.name


@given(st.integers(-(1 << 31), (1 << 31) - 1))
def test_to_positive_never_negative(x: int) -> None:
    y = to_positive(x)
    assert 0 <= y <= 0x7FFFFFFF
    assert y == x if x >= 0 else y == x + (1 << 31)


@given(st.binary(max_size=80))
def test_hashes_are_32_bit(data: bytes) -> None:
    assert -(1 << 31) <= murmur2(data) < (1 << 31)
    assert -(1 << 31) <= kafkajs_legacy_murmur2(data) < (1 << 31)
    assert 0 <= fnv1a_32(data) <= 0xFFFFFFFF
    assert 0 <= rd_fnv1a(data) <= 0x80000000


@given(st.binary(max_size=80), counts)
def test_java_compatible_means_java_for_every_key(key: bytes, n: int) -> None:
    java = JAVA.partition(key, n)
    for p in PARTITIONERS.values():
        if p.java_compatible:
            assert p.partition(key, n) == java, p.name


@given(st.binary(max_size=80), counts)
def test_librdkafka_fnv1a_matches_sarama_default(key: bytes, n: int) -> None:
    """rdfnv1a.c: "modifications to match the Sarama default Producer implementation":
    librdkafka takes the absolute value before an unsigned remainder, sarama negates a
    negative signed remainder; the same partition for every key."""
    sarama = PARTITIONERS["sarama:NewHashPartitioner"].partition(key, n)
    assert PARTITIONERS["librdkafka:fnv1a_random"].partition(key, n) == sarama


@given(st.binary(min_size=1, max_size=80), counts)
def test_crc_partitioners_agree_on_non_empty_keys(key: bytes, n: int) -> None:
    """sarama's NewConsistentCRCHashPartitioner "is compatible with librdkafka's
    consistent_random" for keys with bytes (not for the empty key: see its entry)."""
    crc = PARTITIONERS["sarama:NewConsistentCRCHashPartitioner"].partition(key, n)
    assert PARTITIONERS["librdkafka:consistent_random"].partition(key, n) == crc
    assert PARTITIONERS["librdkafka:consistent"].partition(key, n) == crc


# -------------------------------------------------------------- Java's own Utils.murmur2


@pytest.mark.oracle
def test_murmur2_matches_kafka_utils_murmur2_on_random_keys() -> None:
    """100,000 random keys (lengths 0-64, fixed seed) hashed by Kafka's real
    ``Utils.murmur2`` in a JVM (``conformance.jvm.broker_oracle``, every version it supports:
    3.9.2 first) and by the kit; and the composition no client of the registry uses,
    @platformatic/kafka's ``(murmur2(key) >>> 0) % n``, over Java's hashes."""
    broker_oracle = pytest.importorskip("conformance.jvm.broker_oracle")
    rng = random.Random(0x9747B28C)
    sample = [rng.randbytes(rng.randint(0, 64)) for _ in range(100_000)]
    ours = [murmur2(k) for k in sample]
    versions = getattr(broker_oracle, "SUPPORTED_VERSIONS", ("3.9.2",))
    for version in sorted(versions, key=lambda v: v != "3.9.2"):
        with broker_oracle.BrokerOracle(version) as oracle:
            java = oracle.murmur2(sample)
        assert len(java) == len(sample), version
        wrong = [(k.hex(), j, o) for k, j, o in zip(sample, java, ours) if j != o]
        assert not wrong, (version, wrong[:10])
    unsigned = partitioner(UNSIGNED_MURMUR2)
    for n in (6, 1000):
        wrong = [
            k.hex() for k, j in zip(sample, java) if unsigned.partition(k, n) != (j % (1 << 32)) % n
        ]
        assert not wrong, (n, wrong[:10])
        assert any(unsigned.partition(k, n) != JAVA.partition(k, n) for k in sample)
