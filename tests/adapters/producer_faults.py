#!/usr/bin/env python3
"""Producer adapters with a planted fault, for ``check-producer``'s tests
(tests/test_producer_check.py).

    producer_faults.py BEHAVIOUR [capabilities | produce --bootstrap H:P --plan F | encode --plan F]

A small producer written on the kit's own writers (``write_record_v2``, ``write_batch_v2``;
the fault is a knob of the real writer, never a private copy) that sends one v2 batch per
partition in one Produce request (v3, acks=all, kafka-python's protocol classes) and reports
the broker's offsets; ``encode`` writes the same batch. BEHAVIOUR:

  ok                  correct (a non-Java producer that must pass)
  last-offset-delta   lastOffsetDelta 0 whatever the count (sarama#1026)
  max-timestamp       maxTimestamp -1 (sarama#3108: the zero time written as -1)
  bad-crc             the stored CRC off by one
  no-compression      ignores the codec asked for (writes uncompressed)
  null-header-empty   a null header value written as an empty one
  duplicate           sends its request twice (no idempotence: the records are stored twice)
  fnv-partitioner     keyed records placed by FNV-1a while declaring Java's partitioner
  lie-offsets         reports every offset one too high
  hang, crash, exit3, flood, garbage, wrong   hostile processes (as tests/adapters/broken.py)

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
from conformance.partitioners import PARTITIONERS, fnv1a_32
from conformance.wire.batch import v2_attributes, write_batch_v2
from conformance.wire.layout import TimestampType
from conformance.wire.record import write_record_v2

MARK = "kafka-conformance-broken-adapter"
behaviour, command = sys.argv[1], sys.argv[2:]
HOSTILE = ("hang", "crash", "exit3", "flood", "garbage", "wrong")


def _arg(name: str) -> str:
    return command[command.index(name) + 1]


def _b(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def batch(plan: dict[str, Any], records: list[dict[str, Any]], **fields: int) -> bytes:
    """One v2 batch of ``records`` as the plan's settings ask, with this behaviour's fault."""
    now = time.time_ns() // 1_000_000
    stamps = [r["timestamp"] if r["timestamp"] is not None else now for r in records]
    base = stamps[0]
    body = [
        write_record_v2(
            i,
            t - base,
            _b(r["key"]),
            _b(r["value"]),
            [
                (
                    h["key"],
                    b""
                    if behaviour == "null-header-empty" and h["value"] is None
                    else _b(h["value"]),
                )
                for h in r["headers"]
            ],
        )
        for i, (r, t) in enumerate(zip(records, stamps, strict=True))
    ]
    codec = {c.name: cid for cid, c in CODECS.items()}[plan["settings"]["codec"]]
    if behaviour == "no-compression":
        codec = 0
    knobs: dict[str, Any] = {}
    if behaviour == "last-offset-delta":
        knobs["last_offset_delta"] = 0
    knobs["max_timestamp"] = -1 if behaviour == "max-timestamp" else max(stamps)
    data = write_batch_v2(
        body,
        attributes=v2_attributes(codec, TimestampType.CREATE_TIME, False, False, False),
        base_timestamp=base,
        **knobs,
        **fields,
    )
    if behaviour == "bad-crc":
        crc = struct.unpack_from(">I", data, 17)[0]
        data = data[:17] + struct.pack(">I", (crc + 1) & 0xFFFFFFFF) + data[21:]
    return data


def encode(plan: dict[str, Any]) -> None:
    b = plan["batch"]
    data = batch(
        plan,
        plan["records"],
        base_offset=b["base_offset"],
        partition_leader_epoch=b["partition_leader_epoch"],
        producer_id=b["producer_id"],
        producer_epoch=b["producer_epoch"],
        base_sequence=b["base_sequence"],
    )
    sys.stdout.buffer.write(data)


def _partition(r: dict[str, Any], n: int) -> int:
    if r["partition"] is not None:
        return int(r["partition"])
    key = _b(r["key"])
    if key is None or n == 1:
        return 0
    if behaviour == "fnv-partitioner":
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
    req_class = ProduceRequest[3]
    topic = req_class.TopicProduceData(
        name=plan["topic"],
        partition_data=[
            req_class.TopicProduceData.PartitionProduceData(
                index=p, records=batch(plan, [plan["records"][i] for i in idx])
            )
            for p, idx in sorted(groups.items())
        ],
    )
    host, _, port = bootstrap.rpartition(":")
    out: list[dict[str, Any]] = [
        {"partition": None, "offset": None, "error": None} for _ in plan["records"]
    ]
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        for attempt in range(2 if behaviour == "duplicate" else 1):
            request = req_class(
                transactional_id=None, acks=-1, timeout_ms=30_000, topic_data=[topic]
            )
            request.with_header(correlation_id=attempt + 1, client_id="producer-faults")
            frame = bytes(request.encode(header=True))
            sock.sendall(struct.pack(">i", len(frame)) + frame)
            size = struct.unpack(">i", _recv(sock, 4))[0]
            response = ProduceResponse.decode(_recv(sock, size), version=3, header=True)
    for t in response.responses:
        for p in t.partition_responses:
            for k, i in enumerate(groups[p.index]):
                if p.error_code:
                    out[i]["error"] = f"error code {p.error_code}"
                else:
                    lie = 1 if behaviour == "lie-offsets" else 0
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
            "partitioner": "java",
        }
        print(
            json.dumps(
                {"name": f"faulty-{behaviour}", "version": "0", "produce": side, "encode": side}
            )
        )
        sys.exit(0)
    if behaviour in HOSTILE:
        hostile()
    plan_doc = json.loads(open(_arg("--plan"), encoding="utf-8").read())
    if command[:1] == ["encode"]:
        encode(plan_doc)
    else:
        print(json.dumps(produce(plan_doc, _arg("--bootstrap"))))
