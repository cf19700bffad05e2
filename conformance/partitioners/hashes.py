"""The hashes the clients' partitioners use, each exactly as its source computes it.

======================  ==================================================  ======================
function                definition                                          source
======================  ==================================================  ======================
murmur2                 32-bit MurmurHash2 (seed 0x9747b28c unless given),  ``Utils.murmur2``
                        m 0x5bd1e995, r 24, little-endian words, unsigned   (Utils.java:492-530)
                        tail bytes; Java ``int`` result (signed)
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

The ways of making a hash non-negative are :data:`conformance.partitioners.compose.POSITIVES`;
:func:`to_positive` and :func:`rd_fnv1a` are two of them applied (one home each).
"""

from __future__ import annotations

import struct

from conformance.primitives.java import wrap32

__all__ = [
    "JAVA_SEED",
    "abs32",
    "fnv1a_32",
    "kafkajs_legacy_murmur2",
    "murmur2",
    "rd_fnv1a",
    "to_positive",
    "unsigned32",
]

#: the seed of Kafka's ``Utils.murmur2`` (and of every client copying it)
JAVA_SEED = 0x9747B28C
_M32 = 0xFFFFFFFF
_MURMUR_M = 0x5BD1E995
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_WORDS = struct.Struct("<I")


def murmur2(data: bytes, seed: int = JAVA_SEED) -> int:
    """Kafka's ``Utils.murmur2`` (MurmurHash2, 32 bit; Kafka's seed 0x9747b28c unless ``seed``
    says otherwise), a signed Java ``int``.

    The Java code computes in ``int`` with wrap-around and unsigned shifts (``>>>``); this
    computes the same 32-bit pattern unsigned and returns it as Java's ``int``."""
    length = len(data)
    h = ((seed & _M32) ^ length) & _M32
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


def abs32(number: int) -> int:
    """The absolute value of a 32-bit hash read as ``int32``, in 0..2^31: -2^31 -> 2^31 (C's
    ``-INT32_MIN`` on two's complement read back as ``uint32_t``, as librdkafka's
    ``rd_fnv1a`` does; Go's negated signed remainder, as sarama's ``hashPartitioner`` does,
    gives the same partition)."""
    return abs(wrap32(number))


def unsigned32(number: int) -> int:
    """A 32-bit hash's bit pattern as ``uint32`` (JavaScript's ``x >>> 0``, C's ``uint32_t``)."""
    return number & _M32


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
    ``uint32_t`` return makes 2147483648 (what this returns: :func:`abs32`)."""
    return abs32(fnv1a_32(data))


_MF = float(_MURMUR_M)


def _js_int32(x: float) -> int:
    """ECMAScript ``ToInt32`` of a finite number (the operands of ``^`` and ``<<``)."""
    return wrap32(int(x))


def _js_uint32(x: float) -> int:
    """ECMAScript ``ToUint32`` of a finite number (the left operand of ``>>>``)."""
    return int(x) & _M32


def kafkajs_legacy_murmur2(data: bytes, seed: int = JAVA_SEED) -> int:
    """kafkajs's ``partitioners/legacy/murmur2.js`` (the 1.x default), statement by statement
    (its seed is Kafka's unless ``seed`` says otherwise).

    JavaScript multiplies in IEEE doubles (as Python floats do, with the same rounding), so
    ``k *= M`` and ``h *= M`` round once the product passes 2^53; the bit operators read their
    operands through ``ToInt32``/``ToUint32``. ``length4 = length / 4`` is not floored, so the
    loop ``i < length4`` runs once more for a partial last word, reading past the end
    (``undefined & 0xff`` is 0); the tail ``switch`` then mixes those bytes in again. The
    result is an ``int32`` that differs from Java's for most keys."""
    length = len(data)
    h: float = _js_int32(seed & _M32) ^ length
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
