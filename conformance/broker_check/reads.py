"""Scenario 3 of ``check-broker``: Fetch and ListOffsets on what a session produced, judged
against what Kafka serves from those bytes (``broker.fetch.FetchLog``: the target's partition
as fetched whole, its high watermark the log end, its last stable offset and aborted
transactions what its batches and markers say).

The partition holds an aborted transaction, a committed one, a plain batch and a transaction
left open (``session``), so the bounds differ: the last stable offset is the open
transaction's first offset, the high watermark the log end.

=========================  =========  =====================================================
read                       isolation  asks
=========================  =========  =====================================================
fetch-read-uncommitted     0          Fetch from 0: every batch up to the high watermark
fetch-read-committed       1          Fetch from 0: up to the last stable offset, with the
                                      aborted transaction
fetch-inside-a-batch       0          Fetch from the second record of the first batch: the
                                      whole batch from its start
fetch-kip-74               0          Fetch from 0 with 1 byte of partition max bytes: the
                                      first batch whole (KIP-74)
fetch-at-high-watermark    0          Fetch at the high watermark: nothing, no error
fetch-committed-at-lso     1          Fetch at the last stable offset: nothing, an empty
                                      aborted list
fetch-out-of-range         0          Fetch past the log end: OFFSET_OUT_OF_RANGE
offsets-earliest           0          ListOffsets -2: the log start offset
offsets-latest             0          ListOffsets -1: the high watermark
offsets-latest-committed   1          ListOffsets -1: the last stable offset (v2+)
offsets-by-timestamp       0          ListOffsets, the committed transaction's first
                                      record's timestamp: its offset
offsets-open-committed     1          ListOffsets, the open transaction's record's
                                      timestamp: none below the bound, -1 (v2+)
offsets-after-last         0          ListOffsets, after every timestamp: -1
=========================  =========  =====================================================

Each read is sent at one version (:func:`run_reads`); Fetch from v4 (isolation levels, the
last stable offset; older versions down-convert, which the kit does not model), by topic id
from v13; ListOffsets from v1. What differs is filed at ``delivery`` (the error, the records
a consumer reads, the aborted transactions it filters with, the offset ListOffsets answers) or
``wire`` (the high watermark, last stable offset and log start offset, the timestamp and
leader epoch ListOffsets answers (the leader's epoch, 0: the run's topics never change
leader), a null list of aborted transactions for an empty one, more batches after Kafka's
than the size asked, and batch bytes a consumer does not see).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.broker.codes import CODES
from conformance.broker.compare import stored_differences
from conformance.broker.exchange import LEADER_EPOCH
from conformance.broker.fetch import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    READ_COMMITTED,
    READ_UNCOMMITTED,
    FetchLog,
    Segment,
    transactions,
)
from conformance.capture.produce_wire import WireClient
from conformance.capture.session_wire import fetch_read, list_offsets
from conformance.corpus.produce.golden import stored_b64
from conformance.levels import DELIVERY, WIRE, Difference
from conformance.stream.splitter import Splitter
from conformance.wire.batch import RecordBatchV2

__all__ = [
    "FETCH",
    "LIST_OFFSETS",
    "READS",
    "Answered",
    "Facts",
    "Read",
    "facts",
    "judge_read",
    "read_reads",
    "run_reads",
    "write_reads",
]

FETCH = "Fetch"
LIST_OFFSETS = "ListOffsets"
#: the first version of each API the reads are sent at
MIN_VERSION = {FETCH: 4, LIST_OFFSETS: 1}
#: partition max bytes of a read that takes everything
ALL = 1 << 20
_NAMES = {v: k for k, v in CODES.items()}


@dataclass(frozen=True)
class Facts:
    """What the reads are chosen from and judged by: the target's partition as fetched."""

    log: FetchLog
    batches: list[RecordBatchV2]

    def data(self) -> list[RecordBatchV2]:
        """The data (not control) batches: the session's A, B, C and D."""
        return [b for b in self.batches if not b.is_control]


def facts(data: bytes) -> Facts:
    """The facts of a partition whose whole log is ``data``."""
    aborted, open_first = transactions(data)
    log = FetchLog([Segment(0, data, (), aborted)], last_stable_offset=open_first)
    batches = [b for b in Splitter(data, "memory") if isinstance(b, RecordBatchV2)]
    return Facts(log, batches)


@dataclass(frozen=True)
class Read:
    name: str
    api: str
    isolation: int
    #: (fetch offset or timestamp, partition max bytes) chosen from the facts
    choose: Callable[[Facts], tuple[int, int]]
    min_version: int = 0
    about: str = ""


def _hw(f: Facts) -> int:
    assert f.log.high_watermark is not None
    return f.log.high_watermark


def _lso(f: Facts) -> int:
    assert f.log.last_stable_offset is not None
    return f.log.last_stable_offset


def _first_ts(batches: Sequence[RecordBatchV2], i: int) -> int:
    return next(iter(batches[i])).timestamp if len(batches) > i else 0


READS: tuple[Read, ...] = (
    Read("fetch-read-uncommitted", FETCH, READ_UNCOMMITTED, lambda f: (0, ALL), 0,
         "Fetch from 0, read_uncommitted: every batch up to the high watermark"),
    Read("fetch-read-committed", FETCH, READ_COMMITTED, lambda f: (0, ALL), 0,
         "Fetch from 0, read_committed: up to the last stable offset, the aborted "
         "transaction listed"),
    Read("fetch-inside-a-batch", FETCH, READ_UNCOMMITTED, lambda f: (1, ALL), 0,
         "Fetch from the first batch's second record: that batch whole, from its start"),
    Read("fetch-kip-74", FETCH, READ_UNCOMMITTED, lambda f: (0, 1), 0,
         "Fetch with 1 byte of partition max bytes: the first batch whole, no more (KIP-74)"),
    Read("fetch-at-high-watermark", FETCH, READ_UNCOMMITTED, lambda f: (_hw(f), ALL), 0,
         "Fetch at the high watermark: nothing, no error"),
    Read("fetch-committed-at-lso", FETCH, READ_COMMITTED, lambda f: (_lso(f), ALL), 0,
         "Fetch at the last stable offset, read_committed: nothing, an empty aborted list"),
    Read("fetch-out-of-range", FETCH, READ_UNCOMMITTED, lambda f: (_hw(f) + 1, ALL), 0,
         "Fetch past the log end: OFFSET_OUT_OF_RANGE, offsets -1"),
    Read("offsets-earliest", LIST_OFFSETS, READ_UNCOMMITTED,
         lambda f: (EARLIEST_TIMESTAMP, 0), 0, "ListOffsets -2: the log start offset"),
    Read("offsets-latest", LIST_OFFSETS, READ_UNCOMMITTED,
         lambda f: (LATEST_TIMESTAMP, 0), 0, "ListOffsets -1: the high watermark"),
    Read("offsets-latest-committed", LIST_OFFSETS, READ_COMMITTED,
         lambda f: (LATEST_TIMESTAMP, 0), 2,
         "ListOffsets -1, read_committed: the last stable offset"),
    Read("offsets-by-timestamp", LIST_OFFSETS, READ_UNCOMMITTED,
         lambda f: (_first_ts(f.data(), 1), 0), 0,
         "ListOffsets at the committed transaction's first timestamp: its offset"),
    Read("offsets-open-committed", LIST_OFFSETS, READ_COMMITTED,
         lambda f: (_first_ts(f.data(), 3), 0), 2,
         "ListOffsets at the open transaction's timestamp, read_committed: none (-1)"),
    Read("offsets-after-last", LIST_OFFSETS, READ_UNCOMMITTED,
         lambda f: (max((b.max_timestamp for b in f.batches), default=0) + 1, 0), 0,
         "ListOffsets after every timestamp: none (-1)"),
)  # fmt: skip


#: one read sent: the read, its version, what was asked, the answer
Answered = tuple[Read, int, tuple[int, int], dict[str, Any]]


def run_reads(
    client: WireClient,
    topic: str,
    reads: Sequence[Read],
    versions: dict[str, int],
    f: Facts,
    topic_uuid: Any = None,
) -> list[Answered]:
    """Each read at ``versions[read.api]``: (read, version, what was asked, the answer)."""
    out = []
    for read in reads:
        version = versions[read.api]
        asked = read.choose(f)
        if read.api == FETCH:
            iso = read.isolation
            answer = fetch_read(client, topic, version, asked[0], asked[1], iso, topic_uuid)
        else:
            answer = list_offsets(client, topic, version, asked[0], read.isolation)
        out.append((read, version, asked, answer))
    return out


def _expected(read: Read, version: int, asked: tuple[int, int], f: Facts) -> dict[str, Any]:
    if read.api == LIST_OFFSETS:
        ts, offset = f.log.list_offset(asked[0], read.isolation if version >= 2 else None)
        epoch = -1 if offset < 0 or version < 4 else LEADER_EPOCH
        return {"errorCode": 0, "timestamp": ts, "offset": offset, "leaderEpoch": epoch}
    r = f.log.read(
        asked[0],
        asked[1],
        min_one_message=True,
        isolation=read.isolation,
        hard_max_bytes_limit=False,
    )
    return {
        "errorCode": r.error,
        "highWatermark": r.high_watermark,
        "lastStableOffset": r.last_stable_offset,
        "logStartOffset": r.log_start_offset if version >= 5 else -1,
        "abortedTransactions": None
        if r.aborted is None
        else [[a.producer_id, a.first_offset] for a in r.aborted],
        "records": r.records,
    }


#: the level of a difference in each answer field (others: ``wire``; the aborted
#: transactions: ``delivery`` when a ``read_committed`` consumer would filter other records)
_FIELD_LEVELS = {"errorCode": DELIVERY, "offset": DELIVERY}


def judge_read(
    read: Read, version: int, asked: tuple[int, int], answer: dict[str, Any], f: Facts
) -> list[Difference]:
    """What differs between ``answer`` and Kafka's to ``read`` at ``version``."""
    what = "offset" if read.api == FETCH else "timestamp"
    where = f"{read.name} ({read.api} v{version}, {what} {asked[0]})"
    kafka = _expected(read, version, asked, f)
    if answer.get("scope") == "request":
        code = answer["errorCode"]
        return [Difference(DELIVERY, f"{where}: the request failed with {_NAMES.get(code, code)}")]
    out: list[Difference] = []
    for name, want in kafka.items():
        got = answer.get(name)
        if name == "records":
            if want and got and len(got) > len(want) and got.startswith(want):
                # Kafka's batches, then more: a consumer reads the same records in the same
                # order (the rest it would have fetched next), past the size it asked for
                more = len(list(Splitter(got[len(want) :], "memory")))
                text = f"Kafka's {len(want)} bytes, then {more} more batches past the size asked"
                out.append(Difference(WIRE, f"{where}: records: {text}"))
                continue
            for d in stored_differences(stored_b64(want) if want else None,
                                        stored_b64(got) if got else None):  # fmt: skip
                out.append(Difference(d.level, f"{where}: records: {d.text}"))
            continue
        if got != want:
            if name == "errorCode":
                want, got = _NAMES.get(want, want), _NAMES.get(got, got)
            level = _FIELD_LEVELS.get(name, WIRE)
            if name == "abortedTransactions" and read.isolation == READ_COMMITTED:
                level = DELIVERY if (want or []) != (got or []) else WIRE
            out.append(Difference(level, f"{where}: {name}: kafka={want} target={got}"))
    return out


def write_reads(root: Path, log: bytes, answered: Sequence[Answered], meta: dict[str, Any]) -> None:
    """The evidence of reads in ``root``: ``partition.bin`` (the partition they were chosen
    from, readable by ``decode``) and ``reads.json`` (``meta``, then each read: its name,
    API, version, what was asked and the answer, records as hex)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "partition.bin").write_bytes(log)
    doc = {
        **meta,
        "reads": [
            {"read": r.name, "api": r.api, "version": v, "asked": list(asked),
             "answer": {k: (x.hex() if isinstance(x, bytes) else x) for k, x in answer.items()}}
            for r, v, asked, answer in answered
        ],
    }  # fmt: skip
    (root / "reads.json").write_text(json.dumps(doc, indent=2) + "\n")


def read_reads(root: Path) -> tuple[bytes, list[Answered], dict[str, Any]]:
    """What :func:`write_reads` wrote: (the partition, the reads answered, the meta)."""
    doc = json.loads((root / "reads.json").read_text())
    by_name = {r.name: r for r in READS}
    answered: list[Answered] = []
    for entry in doc.pop("reads"):
        answer = dict(entry["answer"])
        if "records" in answer:
            answer["records"] = bytes.fromhex(answer["records"])
        asked = (int(entry["asked"][0]), int(entry["asked"][1]))
        answered.append((by_name[entry["read"]], int(entry["version"]), asked, answer))
    return (root / "partition.bin").read_bytes(), answered, doc
