#!/usr/bin/env python3
"""Producer adapters with a planted fault, for ``check-producer``'s tests
(tests/test_producer_check.py).

    producer_faults.py BEHAVIOUR [capabilities | produce --bootstrap H:P --plan F | encode --plan F]

A small producer written on the kit's own writers (``write_record_v2``, ``write_batch_v2``;
the fault is a knob of the real writer, never a private copy) that sends one v2 batch per
partition in one Produce request (v3, acks=all, kafka-python's protocol classes) and reports
the broker's offsets; ``encode`` writes the same batch. A plan group (records to send as one
batch) is so in that one batch: the capabilities declare ``batching`` "call". BEHAVIOUR:

  ok                  correct (a non-Java producer that must pass)
  epoch0              lenient but correct: partitionLeaderEpoch 0 (the broker assigns it)
  seq0                lenient but correct: producerEpoch 0 and baseSequence 0 without a
                      producer id (the broker checks neither then)
  smallest-base       lenient but correct: baseTimestamp the smallest record timestamp, not
                      the first record's (the records' timestamps are unchanged)
  lose                the last record of the first partition's batch is left out, yet
                      reported as sent (at the offset it would have had)
  reorder             the first two records of each batch exchanged (offsets reported as
                      planned)
  swap-kv             key and value of each batch's last keyed record exchanged
  last-offset-delta   lastOffsetDelta 0 whatever the count (sarama#1026)
  max-timestamp       maxTimestamp -1 (sarama#3108: the zero time written as -1)
  bad-crc             the stored CRC off by one
  no-compression      ignores the codec asked for (writes uncompressed)
  null-header-empty   a null header value written as an empty one
  duplicate           sends its request twice (no idempotence: the records are stored twice)
  fnv-partitioner     keyed records placed by FNV-1a while declaring Java's partitioner
  murmur2-unsigned    correct for its own rule: keyed records placed by
                      (murmur2(key) >>> 0) % n (@platformatic/kafka's default), declaring
                      that composition (murmur2|unsigned|mod), which the kit has no name for
  declares-java       declares Java's partitioner (with murmur2-unsigned: a wrong declaration)
  lie-offsets         reports every offset one too high
  ts-delta-32         each record's timestamp delta written in 32 bits (its low 32 bits, as
                      an int32: a builder that keeps the delta in an int), on the real writer
  split               every record in a batch (and a request) of its own, claiming "call"
  linger              declares batching "linger" (with split: a linger that split a group)
  no-batching         declares batching "none" (a plan group is unsupported)
  hang, crash, exit3, flood, garbage, wrong   hostile processes (as tests/adapters/broken.py)

Faults combine with ``+`` (``epoch0+lose``: a lenient producer that also loses a record).

Every process's command line carries ``kafka-conformance-broken-adapter`` (the tests check
none is left behind).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from typing import Any

from conformance.codecs import CODECS
from conformance.partitioners import PARTITIONERS, fnv1a_32, murmur2
from conformance.primitives.java import wrap32
from conformance.wire.batch import v2_attributes, write_batch_v2
from conformance.wire.layout import TimestampType
from conformance.wire.record import write_record_v2

MARK = "kafka-conformance-broken-adapter"
behaviour, command = sys.argv[1], sys.argv[2:]
faults = set(behaviour.split("+"))
HOSTILE = ("hang", "crash", "exit3", "flood", "garbage", "wrong")


def _arg(name: str) -> str:
    return command[command.index(name) + 1]


def _b(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def _sent(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as this behaviour sends them (in the batch's order)."""
    out = list(records)
    if "reorder" in faults and len(out) > 1:
        out[0], out[1] = out[1], out[0]
    if "swap-kv" in faults:
        keyed = [i for i, r in enumerate(out) if r["key"] is not None]
        if keyed:
            r = out[keyed[-1]]
            out[keyed[-1]] = {**r, "key": r["value"], "value": r["key"]}
    return out


def batch(plan: dict[str, Any], records: list[dict[str, Any]], **fields: int) -> bytes:
    """One v2 batch of ``records`` as the plan's settings ask, with this behaviour's fault."""
    now = time.time_ns() // 1_000_000
    records = _sent(records)
    stamps = [r["timestamp"] if r["timestamp"] is not None else now for r in records]
    base = min(stamps) if "smallest-base" in faults else stamps[0]
    body = [
        write_record_v2(
            i,
            wrap32(t - base) if "ts-delta-32" in faults else t - base,
            _b(r["key"]),
            _b(r["value"]),
            [
                (
                    h["key"],
                    b"" if "null-header-empty" in faults and h["value"] is None else _b(h["value"]),
                )
                for h in r["headers"]
            ],
        )
        for i, (r, t) in enumerate(zip(records, stamps, strict=True))
    ]
    codec = {c.name: cid for cid, c in CODECS.items()}[plan["settings"]["codec"]]
    if "no-compression" in faults:
        codec = 0
    knobs: dict[str, Any] = {}
    if "last-offset-delta" in faults:
        knobs["last_offset_delta"] = 0
    if "epoch0" in faults:
        knobs["partition_leader_epoch"] = 0
    if "seq0" in faults:
        knobs |= {"producer_epoch": 0, "base_sequence": 0}
    knobs["max_timestamp"] = -1 if "max-timestamp" in faults else max(stamps)
    data = write_batch_v2(
        body,
        attributes=v2_attributes(codec, TimestampType.CREATE_TIME, False, False, False),
        base_timestamp=base,
        **knobs,
        **fields,
    )
    if "bad-crc" in faults:
        crc = struct.unpack_from(">I", data, 17)[0]
        data = data[:17] + struct.pack(">I", (crc + 1) & 0xFFFFFFFF) + data[21:]
    return data


def encode(plan: dict[str, Any]) -> None:
    b = plan["batch"]
    fields = {
        "base_offset": b["base_offset"],
        "partition_leader_epoch": b["partition_leader_epoch"],
        "producer_id": b["producer_id"],
        "producer_epoch": b["producer_epoch"],
        "base_sequence": b["base_sequence"],
    }
    if "epoch0" in faults:
        del fields["partition_leader_epoch"]
    if "seq0" in faults:
        del fields["producer_epoch"], fields["base_sequence"]
    data = batch(plan, plan["records"], **fields)
    sys.stdout.buffer.write(data)


def _partition(r: dict[str, Any], n: int) -> int:
    if r["partition"] is not None:
        return int(r["partition"])
    key = _b(r["key"])
    if key is None or n == 1:
        return 0
    if "murmur2-unsigned" in faults:  # JavaScript's >>> 0: the 32 bits as uint32
        return (murmur2(key) & 0xFFFFFFFF) % n
    if "fnv-partitioner" in faults:
        return fnv1a_32(key) % n
    part = PARTITIONERS["java"].partition(key, n)
    assert part is not None
    return part


def produce(plan: dict[str, Any], bootstrap: str) -> dict[str, Any]:
    from kafka.protocol.producer import ProduceRequest, ProduceResponse

    n = plan["partitions"]
    groups: dict[int, list[int]] = {}
    for i, r in enumerate(plan["records"]):
        groups.setdefault(_partition(r, n), []).append(i)
    lost = None
    if "lose" in faults:  # the first partition's last record: reported, never sent
        lost = groups[min(groups)][-1]
    req_class = ProduceRequest[3]
    # one request, one batch per partition; ``split``: a request per record (Produce v3+
    # carries exactly one batch per partition)
    requests = [groups]
    if "split" in faults:
        requests = [{p: [i]} for p, idx in sorted(groups.items()) for i in idx]
    host, _, port = bootstrap.rpartition(":")
    out: list[dict[str, Any]] = [
        {"partition": None, "offset": None, "error": None} for _ in plan["records"]
    ]
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        for n, sent in enumerate(requests):
            topic = req_class.TopicProduceData(
                name=plan["topic"],
                partition_data=[
                    req_class.TopicProduceData.PartitionProduceData(
                        index=p, records=batch(plan, [plan["records"][i] for i in idx if i != lost])
                    )
                    for p, idx in sorted(sent.items())
                ],
            )
            for attempt in range(2 if "duplicate" in faults else 1):
                request = req_class(
                    transactional_id=None, acks=-1, timeout_ms=30_000, topic_data=[topic]
                )
                request.with_header(correlation_id=2 * n + attempt + 1, client_id="producer-faults")
                frame = bytes(request.encode(header=True))
                sock.sendall(struct.pack(">i", len(frame)) + frame)
                size = struct.unpack(">i", _recv(sock, 4))[0]
                response = ProduceResponse.decode(_recv(sock, size), version=3, header=True)
            for t in response.responses:
                for p in t.partition_responses:
                    for k, i in enumerate(sent[p.index]):
                        if p.error_code:
                            out[i]["error"] = f"error code {p.error_code}"
                        else:
                            lie = 1 if "lie-offsets" in faults else 0
                            out[i] |= {"partition": p.index, "offset": p.base_offset + k + lie}
    return {"format": "kafka-conformance/produce-result/1", "records": out, "error": None}


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def hostile() -> None:
    if behaviour == "hang":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", MARK])
        time.sleep(3600)
    if behaviour == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if behaviour == "exit3":
        sys.exit(3)
    if behaviour == "flood":
        while True:
            sys.stdout.write("x" * 65536)
    if behaviour == "garbage":
        print("this is not JSON")
    if behaviour == "wrong":
        print(json.dumps({"format": "kafka-conformance/produce-result/1", "records": 3}))
    sys.exit(0)


if __name__ == "__main__":
    if command[:1] == ["capabilities"]:
        side = {
            "codecs": [c.name for c in CODECS.values()],
            "idempotence": False,
            "transactions": False,
            "headers": True,
            "magics": [2],
        }
        batching = "none" if "no-batching" in faults else "call"
        produce_side = side | {
            "partitioner": (
                "murmur2|unsigned|mod"
                if "murmur2-unsigned" in faults and "declares-java" not in faults
                else "java"
            ),
            "batching": "linger" if "linger" in faults else batching,
        }
        doc = {"name": f"faulty-{behaviour}", "version": "0", "produce": produce_side}
        print(json.dumps(doc | {"encode": side}))
        sys.exit(0)
    if behaviour in HOSTILE:
        hostile()
    plan_doc = json.loads(open(_arg("--plan"), encoding="utf-8").read())
    if command[:1] == ["encode"]:
        encode(plan_doc)
    else:
        print(json.dumps(produce(plan_doc, _arg("--bootstrap"))))
