"""No compression (codec 0): the records region is the payload itself.

Kafka reads an uncompressed batch's records straight from its buffer (no Java stream): the
reader in ``wire`` never calls :func:`read_stream` for codec 0 and reads the region directly;
this entry exists so that every codec id Kafka knows has one :class:`Codec` (its name, and
that magic 0/1 may use it).
"""

from __future__ import annotations

from conformance.codecs._stream import CLIENTS, PIECE, Codec, Decompressed, Limit

__all__ = ["CODEC", "read_stream", "write_stream"]


def read_stream(
    payload: bytes, limit: Limit, magic: int = 2, clients: str = CLIENTS[0]
) -> Decompressed:
    """The payload as one piece (not bounded by ``limit``: nothing is decompressed)."""
    return Decompressed([bytes(payload)])


def write_stream(data: bytes, magic: int = 2) -> bytes:
    return bytes(data)


CODEC = Codec(
    id=0,
    name="none",
    java_stream="(none: the records are read from the batch buffer)",
    read_stream=read_stream,
    write_stream=write_stream,
    read_policy=PIECE,
    fill_size=0,
    fill_size_2_8=0,
    legacy_magics=True,
    since=(0, 8),
)
