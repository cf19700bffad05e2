#!/usr/bin/env python3
"""Deliberately partial adapters for tests/test_outside_adapters.py: the kit's reference
decoder with what a real library often does not expose taken away, declared (or not) with the
capabilities of docs/adapter-protocol.md. Every mode: capabilities, decode --as, serve.

    partial.py TRAITS [capabilities | decode --as MODE | serve]

TRAITS, comma-separated:
  no-failing-batch  the batch during which an error happens is not listed (the library returns
                    an error without that batch's header); declares lists_failing_batch false
  v2-only-header    v0/v1 entries have no header fields (only position, size and records);
                    declares them in omits per magic
  control-no-epoch  control records carry typeId and type, not coordinatorEpoch; declares
                    omits ["control.coordinatorEpoch"]
  bare-eof          every error is the library's bare EOF, mapped to CorruptRecordException;
                    declares error_classes none
  atomic            a batch in which an error happens delivers none of its records; declares
                    error_semantics atomic
  undeclared        declares none of the above, and error_classes "class" (as if its errors
                    were mapped to Kafka's classes)
"""

import json
import struct
import sys

from conformance import decode

traits = set(sys.argv[1].split(","))
command = sys.argv[2:3]
LEGACY_HEADER = [
    "magic",
    "crc",
    "attributes",
    "compression",
    "timestampType",
    "lastOffset",
    "maxTimestamp",
]


def capabilities() -> dict:
    caps: dict = {"name": "partial-" + "-".join(sorted(traits)), "version": "1", "persistent": True}
    if "undeclared" in traits:
        return {**caps, "error_classes": "class"}
    omits: dict = {"*": []}
    if "no-failing-batch" in traits:
        caps["lists_failing_batch"] = False
    if "v2-only-header" in traits:
        omits["0"] = omits["1"] = LEGACY_HEADER
    if "control-no-epoch" in traits:
        omits["*"] = ["control.coordinatorEpoch"]
    if "bare-eof" in traits:
        caps["error_classes"] = "none"
    else:
        caps["error_classes"] = "exact"
    if "atomic" in traits:
        caps["error_semantics"] = "atomic"
    caps["omits"] = omits
    return caps


def document(data: bytes, mode: str) -> bytes:
    doc = decode(data, mode=mode).to_dict()
    error = doc["error"]
    failing = error["batch_index"] if error else None
    batches = doc["batches"]
    if failing is not None and failing < len(batches):
        if "atomic" in traits:
            batches[failing]["records"] = []
        if "no-failing-batch" in traits:
            del batches[failing]
    for batch in batches:
        if "v2-only-header" in traits and batch["magic"] < 2:
            for key in LEGACY_HEADER:
                del batch[key]
        for record in batch["records"]:
            if "control-no-epoch" in traits and "control" in record:
                record["control"].pop("coordinatorEpoch", None)
    if error and "bare-eof" in traits:
        error["kafka_exception"] = "org.apache.kafka.common.errors.CorruptRecordException"
        error["message"] = "EOF"
    return json.dumps(doc).encode()


if command == ["capabilities"]:
    print(json.dumps(capabilities()))
elif command == ["decode"]:
    sys.stdout.buffer.write(document(sys.stdin.buffer.read(), sys.argv[sys.argv.index("--as") + 1]))
elif command == ["serve"]:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while len(head := stdin.read(5)) == 5:
        body = document(stdin.read(struct.unpack(">I", head[1:])[0]), ("memory", "file")[head[0]])
        stdout.write(struct.pack(">I", len(body)) + body)
        stdout.flush()
else:
    sys.exit(2)
