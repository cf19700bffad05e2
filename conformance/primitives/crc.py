"""Checksums: CRC-32C (v2 batches, producer snapshots), CRC-32 (v0/v1 messages), xxHash32 (lz4).

==========  ===========================  =========================================
function    algorithm                    used by
==========  ===========================  =========================================
crc32c      Castagnoli, check 0xE3069283  v2 batch @17 over [21, end) (``Crc32C``)
crc32       IEEE 802.3 (zlib)            v0/v1 message @0 over [4, end) (``CRC32``)
xxh32       xxHash32, seed 0             lz4 frame header checksum, block checksums
==========  ===========================  =========================================

The C implementations (google-crc32c, xxhash) are used when installed; pure-Python fallbacks
keep the kit importable anywhere.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from conformance.primitives import native as _native

crc32: Callable[[bytes], int] = zlib.crc32


def _make_crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _make_crc32c_table()


def crc32c_pure(data: bytes) -> int:
    c = 0xFFFFFFFF
    table = _TABLE
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


try:  # pragma: no cover - depends on the environment
    import google_crc32c as _gcrc

    def _crc32c_c(data: bytes) -> int:
        return _gcrc.value(bytes(data))

except ImportError:  # pragma: no cover
    _crc32c_c = crc32c_pure


def crc32c(data: bytes, start: int = 0) -> int:
    """CRC-32C of ``data[start:]``: the native extension's (no copy) when it is in use, else
    google-crc32c, else pure Python."""
    module = _native.NATIVE
    if module is not None and type(data) is bytes:
        return module.crc32c(data, start)  # type: ignore[no-any-return]
    return _crc32c_c(data[start:] if start else data)


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M


def xxh32_pure(data: bytes, seed: int = 0) -> int:
    n = len(data)
    i = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M
        v2 = (seed + _P2) & _M
        v3 = seed & _M
        v4 = (seed - _P1) & _M
        while i + 16 <= n:
            for k in range(4):
                lane = int.from_bytes(data[i : i + 4], "little")
                i += 4
                if k == 0:
                    v1 = (_rotl((v1 + lane * _P2) & _M, 13) * _P1) & _M
                elif k == 1:
                    v2 = (_rotl((v2 + lane * _P2) & _M, 13) * _P1) & _M
                elif k == 2:
                    v3 = (_rotl((v3 + lane * _P2) & _M, 13) * _P1) & _M
                else:
                    v4 = (_rotl((v4 + lane * _P2) & _M, 13) * _P1) & _M
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 4 <= n:
        h = (_rotl((h + int.from_bytes(data[i : i + 4], "little") * _P3) & _M, 17) * _P4) & _M
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _M, 11) * _P1) & _M
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M
    h ^= h >> 13
    h = (h * _P3) & _M
    h ^= h >> 16
    return h


try:  # pragma: no cover
    import xxhash as _xxhash

    def xxh32(data: bytes, seed: int = 0) -> int:
        return _xxhash.xxh32_intdigest(bytes(data), seed)

except ImportError:  # pragma: no cover
    xxh32 = xxh32_pure


__all__ = ["crc32", "crc32c", "crc32c_pure", "xxh32", "xxh32_pure"]
