"""Shrinking a saved finding to the smallest input with the same signature (delta debugging).

Chunks of the input are removed, largest first (Zeller's ddmin, complement steps only), then
single bytes are zeroed (``ddmin_stream``: for a record stream, whole batches dropped first,
and every candidate also tried with its checksums recomputed); a candidate is kept when
``still_fails`` says it still shows the same finding. Bounded by a number of tries and a time
budget; the saved ``input.bin`` is never replaced, the result goes to ``input.min.bin``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from conformance.errors import DecodeError
from conformance.fuzz.mutator import split
from conformance.fuzz.store import FuzzFinding, crash_signature
from conformance.fuzz.targets import get
from conformance.wire.batch import seal_v2
from conformance.wire.layout import MAGIC_OFFSET, MAGIC_VALUE_V2, RECORD_BATCH_OVERHEAD
from conformance.wire.legacy import seal_legacy


def ddmin(
    data: bytes,
    still_fails: Callable[[bytes], bool],
    *,
    max_tries: int = 20_000,
    seconds: float = 60.0,
) -> bytes:
    deadline = time.monotonic() + seconds
    tries = 0
    best = data
    n = 2
    while len(best) >= 1 and tries < max_tries and time.monotonic() < deadline:
        chunk = max(1, len(best) // n)
        reduced = False
        start = 0
        while start < len(best) and tries < max_tries and time.monotonic() < deadline:
            candidate = best[:start] + best[start + chunk :]
            tries += 1
            if still_fails(candidate):
                best = candidate
                reduced = True
            else:
                start += chunk
        if not reduced:
            if chunk == 1:
                break
            n = min(len(best), n * 2)
    for i in range(len(best)):  # simplify: zero what need not be anything else
        if tries >= max_tries or time.monotonic() >= deadline:
            break
        if best[i] != 0:
            candidate = best[:i] + b"\x00" + best[i + 1 :]
            tries += 1
            if still_fails(candidate):
                best = candidate
    return best


def sealed(data: bytes, *, refit: bool = False) -> bytes:
    """``data`` with the checksum of every batch the memory splitter finds recomputed (v2:
    CRC-32C, lengths kept; v0/v1: CRC-32), so a byte changed inside one is read, not
    refused for its checksum; ``refit``: bytes after the last batch that start as a v2 batch
    are made one, their length and checksum those of what is there (a byte removed from
    the last batch then leaves a shorter batch, not a tail)."""
    entries, tail = split(data)
    out = []
    for raw in entries:
        if len(raw) >= RECORD_BATCH_OVERHEAD and raw[MAGIC_OFFSET] == MAGIC_VALUE_V2:
            raw = seal_v2(raw, length=False)
        elif len(raw) > MAGIC_OFFSET and raw[MAGIC_OFFSET] in (0, 1):
            raw = seal_legacy(raw)
        out.append(raw)
    if refit and len(tail) >= RECORD_BATCH_OVERHEAD and tail[MAGIC_OFFSET] == MAGIC_VALUE_V2:
        tail = seal_v2(tail)
    return b"".join(out) + tail


def ddmin_stream(
    data: bytes,
    still_fails: Callable[[bytes], bool],
    *,
    max_tries: int = 20_000,
    seconds: float = 60.0,
) -> bytes:
    """:func:`ddmin` for a record stream: whole batches dropped first, then bytes, each
    candidate tried as it is, :func:`sealed` (a change inside a batch is then read, not
    refused for its checksum) and refitted (a byte removed from the last batch); the result
    still fails (``data`` if nothing smaller does)."""
    deadline = time.monotonic() + seconds
    best = data
    entries, tail = split(data)
    parts = [*entries, tail] if tail else entries
    i = 0
    while len(parts) > 1 and i < len(parts) and time.monotonic() < deadline:
        candidate = b"".join(parts[:i] + parts[i + 1 :])
        if still_fails(candidate):
            parts.pop(i)
            best = candidate
        else:
            i += 1

    def forms(candidate: bytes) -> list[bytes]:
        return [candidate, sealed(candidate), sealed(candidate, refit=True)]

    def either(candidate: bytes) -> bool:
        return any(still_fails(f) for f in dict.fromkeys(forms(candidate)))

    left = max(0.0, deadline - time.monotonic())
    small = ddmin(best, either, max_tries=max_tries, seconds=left)
    if small == best:
        return small
    return next((f for f in dict.fromkeys(forms(small)) if still_fails(f)), best)


def crash_predicate(target_name: str, signature: str) -> Callable[[bytes], bool]:
    target = get(target_name)

    def fails(data: bytes) -> bool:
        try:
            target.run(data)
        except DecodeError:
            return False
        except Exception as exc:  # noqa: BLE001
            return crash_signature(exc) == signature
        return False

    return fails


def divergence_predicate(
    target_name: str, kind: str, signature: str, differential: Any
) -> Callable[[bytes], bool]:
    target = get(target_name)

    def fails(data: bytes) -> bool:
        wire = target.wire_bytes(data)
        if wire is None:
            return False
        if kind == "kafka-python":
            from conformance.fuzz.differential import kp_signature

            o = differential.run(wire)
            return bool(o.kp_differences) and kp_signature(o.kp_differences) == signature
        return bool(differential.divergence_signature(wire) == signature)

    return fails


def minimize(
    finding: FuzzFinding, *, differential: Any = None, seconds: float = 60.0
) -> bytes | None:
    """Write ``input.min.bin`` for a crash or divergence; None when the kind is not minimized
    (timeouts and memory blow-ups: replaying them is the slow part) or it no longer fails."""
    data = (finding.path / "input.bin").read_bytes()
    if finding.kind == "crash":
        fails = crash_predicate(finding.target, finding.signature)
    elif finding.kind in ("divergence", "kafka-python") and differential is not None:
        fails = divergence_predicate(finding.target, finding.kind, finding.signature, differential)
    else:
        return None
    if not fails(data):
        return None
    small = ddmin(data, fails, seconds=seconds)
    (finding.path / "input.min.bin").write_bytes(small)
    return small


__all__ = ["crash_predicate", "ddmin", "ddmin_stream", "divergence_predicate", "minimize", "sealed"]
