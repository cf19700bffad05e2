"""Layer 1 — primitives: the Java semantics every format reads with.

``varint`` (``ByteUtils`` zig-zag varints and their acceptance rules), ``crc`` (CRC-32,
CRC-32C, xxHash32 — C libraries with pure-Python fallbacks), ``java`` (Java's UTF-8 decoding,
``Integer.parseInt``, 32/64-bit wrap-around). Imports only :mod:`conformance.errors`.
"""
