"""The batches as sent: the records of each plan group, read from the Produce requests the
producer sent (not from what the broker stored), and how many batches each group took.

A plan group (``Scenario.groups``) asks for its records in one batch; the adapter declares how
its library does it (``produce.batching`` of the capabilities: ``call``, its batch call;
``linger``, a linger that gathers records sent back to back). Every record of a group is found
in the batches the recording proxy saw (by key, value and headers, which no two plan records
share) and its absolute timestamp as decoded from that batch is held to the plan's: a builder
that writes the timestamp delta in 32 bits is caught in the batch it built, whatever the broker
then makes of it. A group sent in more batches than one is a ``wire`` difference when the
adapter claims its library's batch call, and a ``java`` one (a finding at the default level)
when a linger split it: Java's ``KafkaProducer`` gathers the records of a group in one batch.

The same batch sent twice (a retry repeats its bytes) counts once.
"""

from __future__ import annotations

import base64
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from conformance.levels import DELIVERY, JAVA, WIRE, Lines
from conformance.producer_check.plan import BATCH_CALL, PlanRecord, Scenario
from conformance.stream.compare import pair

__all__ = ["SentBatch", "content", "expected_record", "group_lines"]

#: a read-back record's identity: key, value and headers as the decode document has them
Content = tuple[Any, Any, tuple[tuple[Any, Any], ...]]


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def expected_record(r: PlanRecord) -> dict[str, Any]:
    """A plan record as the decode document shows one: key, value, headers (base64)."""
    return {
        "key": _b64(r.key),
        "value": _b64(r.value),
        "headers": [{"key": k, "value": _b64(v)} for k, v in r.headers],
    }


def content(r: dict[str, Any]) -> Content:
    """A decoded (or :func:`expected_record`) record's key, value and headers."""
    return (r["key"], r["value"], tuple((h["key"], h["value"]) for h in r["headers"]))


@dataclass(frozen=True)
class SentBatch:
    """One batch of a Produce request as decoded (strict profile)."""

    where: str  # "request <n> partition <p> batch <k>"
    partition: int
    data: bytes  # its bytes: a retry repeats them
    records: list[dict[str, Any]]


def _runs(indices: list[int]) -> str:
    return f"{indices[0]}-{indices[-1]}" if len(indices) > 1 else str(indices[0])


def group_lines(
    s: Scenario,
    batching: str,
    batches: list[SentBatch],
    clock: tuple[int, int],
    lines: Lines,
) -> None:
    """The records of ``s``'s groups in ``batches`` as sent: each timestamp (explicit: the
    plan's; none: inside ``clock``, the producer's during the run), and how many batches each
    group took against what ``batching`` claims."""
    grouped = {i for g in s.grouped() for i in g}
    if not grouped:
        return
    index = {content(expected_record(r)): i for i, r in enumerate(s.records)}
    sent_in: dict[int, set[tuple[int, bytes]]] = defaultdict(set)
    seen: set[tuple[int, bytes]] = set()
    for b in batches:
        ident = (b.partition, b.data)
        if ident in seen:
            continue
        seen.add(ident)
        for r in b.records:
            i = index.get(content(r))
            if i is None or i not in grouped:
                continue
            sent_in[i].add(ident)
            planned, actual = s.records[i].timestamp, int(r["timestamp"])
            if planned is not None and actual != planned:
                change = pair(planned, actual, ("plan", "sent"))
                lines.add(DELIVERY, f"plan record {i} as sent ({b.where}) timestamp: {change}")
            elif planned is None and not clock[0] <= actual <= clock[1]:
                lines.add(
                    DELIVERY,
                    f"plan record {i} as sent ({b.where}) timestamp {actual}, expected the "
                    f"producer's clock during the run [{clock[0]}, {clock[1]}]",
                )
    for g in s.grouped():
        taken = set().union(*(sent_in[i] for i in g))
        if len(taken) <= 1:
            continue
        what = f"plan records {_runs(list(g))} (one plan group) sent in {len(taken)} batches"
        if batching == BATCH_CALL:
            lines.add(WIRE, f'{what}; the adapter\'s batch call (batching "call") claims one')
        else:
            lines.add(
                JAVA,
                f"{what}: the library's linger split them (batching {batching!r}); Java's "
                "KafkaProducer gathers them in one",
            )
