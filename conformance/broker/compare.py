"""Comparing two produce verdicts (``verdict.py``'s document): the kit's and Kafka's.

Exact, field by field, over ``scope``, ``response`` and ``exception`` (``stream.compare.diff``,
with its one relaxation for compression libraries' own wording), and over ``stored`` with one
rule: a batch the broker *rebuilt with compression* holds Java's compressor output, which
another compressor need not reproduce byte for byte (Kafka does not pin it either). Such
stored bytes agree when they decode (consumer, memory mode) to the same document apart from
what the compressed bytes decide: each batch's ``sizeInBytes``, ``crc`` and the positions
after it. Stored bytes of uncompressed or in-place batches must be identical.

:func:`stored_differences` compares stored bytes at levels (``conformance.levels``), for a
check: what a consumer reads back at ``delivery``, every batch field at ``wire``, with the
same rule for batches both rebuilt with compression.
"""

from __future__ import annotations

import base64
from typing import Any

from conformance.codecs import NONE
from conformance.errors import DecodeError
from conformance.levels import DELIVERY, WIRE, Difference
from conformance.stream.compare import diff
from conformance.stream.decoder import decode
from conformance.stream.splitter import Splitter

__all__ = [
    "COMPARED",
    "COMPRESSOR_DECIDES",
    "PARTIES",
    "diff_verdicts",
    "recompressed",
    "stored_differences",
]

#: the batch fields of a decode document a compressor's output decides
COMPRESSOR_DECIDES = ("sizeInBytes", "crc", "position")
#: the members of a verdict that are compared (the others name who answered)
COMPARED = ("scope", "response", "exception", "stored")
#: how a difference at levels names its two parties: Kafka's answer, the target's
PARTIES = ("kafka", "target")
#: batch fields a consumer hands to the application with each record
_CONSUMER_SEES = ("timestampType",)


def diff_verdicts(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Every difference between Kafka's verdict ``expected`` and ``actual`` (empty: agree)."""
    out = diff(
        {k: expected.get(k) for k in COMPARED if k != "stored"},
        {k: actual.get(k) for k in COMPARED if k != "stored"},
    )
    e, a = expected.get("stored"), actual.get("stored")
    if e == a:
        return out
    if e is None or a is None:
        return [*out, f"$.stored: {_short(e)} != {_short(a)}"]
    eb, ab = base64.b64decode(e), base64.b64decode(a)
    if not (recompressed(eb) and recompressed(ab)):
        return [*out, f"$.stored: {_short(e)} != {_short(a)} (not a recompressed batch)"]
    return [*out, *(f"$.stored decoded {d}" for d in diff(_content(eb), _content(ab)))]


def stored_differences(kafka: str | None, target: str | None) -> list[Difference]:
    """What differs between the batches Kafka stores (base64, or None: nothing) and the
    target's, as fetched back: records at ``delivery``, batch fields at ``wire``."""
    if kafka == target:
        return []
    k = base64.b64decode(kafka) if kafka is not None else b""
    t = base64.b64decode(target) if target is not None else b""
    if not k or not t:
        what = "nothing" if not k else f"{len(k)} bytes"
        got = "nothing" if not t else f"{len(t)} bytes"
        return [Difference(DELIVERY, f"stored: kafka={what} target={got}")]
    kd, td = decode(k).to_dict(), decode(t).to_dict()
    both = recompressed(k) and recompressed(t) and len(kd["batches"]) == len(td["batches"])
    out: list[Difference] = []
    for line in diff(kd, td, "$.stored", PARTIES):
        path = line.split(": ", 1)[0]
        field = path.rsplit(".", 1)[-1]
        if both and ".records" not in path and field in COMPRESSOR_DECIDES:
            continue
        seen = ".records" in path or path == "$.stored.batches" or field in _CONSUMER_SEES
        out.append(Difference(DELIVERY if seen else WIRE, line))
    if not out and k != t and not both:
        out.append(Difference(WIRE, "stored: the bytes differ where the decode shows nothing"))
    return out


def recompressed(data: bytes) -> bool:
    """Whether every batch of ``data`` is compressed (bytes that do not split: no)."""
    try:
        return all(b.compression_id != NONE for b in Splitter(data, "memory"))
    except DecodeError:  # bytes that do not split are compared exactly
        return False


def _content(data: bytes) -> dict[str, Any]:
    doc = decode(data).to_dict()
    for b in doc["batches"]:
        for key in COMPRESSOR_DECIDES:
            b.pop(key, None)
    if doc.get("tail"):
        doc["tail"].pop("position", None)
    return doc


def _short(b64: str | None) -> str:
    if b64 is None:
        return "None"
    return b64 if len(b64) <= 48 else f"{b64[:44]}... ({len(b64)} base64 chars)"
