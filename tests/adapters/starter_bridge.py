#!/usr/bin/env python3
"""A correct implementation of each side for the starter adapters' tests
(tests/test_init_adapter.py), spoken to in lines any language can parse without a JSON library:

    starter_bridge.py memory|file  < input bytes      the kit's reference decoder
    starter_bridge.py consume --bootstrap ... (the protocol's consume options)
                                                      Kafka's KafkaConsumer (the kit's oracle)
    starter_bridge.py produce BOOTSTRAP  < plan lines  Kafka's KafkaProducer (built-in java)
    starter_bridge.py encode  < plan lines             Kafka's MemoryRecordsBuilder (the same)

The starters' library hook (the one file a user edits) is replaced in the test by a small
per-language bridge (tests/adapters/starter-bridges/) that runs this script and turns its lines
into the starter's own structures, so the starter's protocol code (capabilities, decode, serve,
the canonical JSON it writes) is what is tested. One line per item, fields separated by one
space; bytes are lowercase hex ("" is written as "~", null as "-"); strings are hex of UTF-8:

    B position sizeInBytes magic crc attributes compression timestampType lastOffset maxTimestamp
      (magic 2 only, continuing the line:) baseOffset lastOffsetDelta partitionLeaderEpoch
      baseTimestamp deleteHorizonMs(- for null) isTransactional(0|1) isControl(0|1) producerId
      producerEpoch baseSequence lastSequence recordsCount
    R offset timestamp key value headerCount (headerKeyHex headerValue)*
    C typeId typeHex coordinatorEpoch(- when absent)       (the control part of the last R)
    E kafkaExceptionHex messageHex(- for null) batchIndex position

A `B` line opens a batch; `R` lines belong to the last `B`; `E`, if any, is the last line.

`consume` prints what Kafka's consumer delivered, one line per record, then the error, if any:

    R offset timestamp timestampType key value headerCount (headerKeyHex headerValue)*
    E classHex messageHex(- for null)

`produce` and `encode` read the plan the starter's protocol code parsed, as the hook writes it
back on stdin (so that the starter's plan reading is what is tested), one line per item:

    P scenarioHex topicHex partitions
    S codec idempotence(0|1) acks lingerMs batchSize maxRequestSize timeoutMs
      transactionIdHex(- for none) transactionEnd(commit|abort|- for none)
    R key value timestamp(- for null) partition(- for null) headerCount (headerKeyHex headerValue)*
    B magic baseOffset producerId producerEpoch baseSequence transactional(0|1)
      partitionLeaderEpoch                                   (encode plans only)

`produce` prints one line per plan record, then the failure outside any record, if any;
`encode` prints the batch's bytes as one line of hex:

    D partition(- for null) offset(- for null) errorHex(- for null)
    F errorHex
    X batchHex
"""

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from conformance import decode


def _hex(data: bytes | None) -> str:
    if data is None:
        return "-"
    return data.hex() or "~"


def _text(text: str | None) -> str:
    return "-" if text is None else (text.encode("utf-8").hex() or "~")


def _from_hex(field: str) -> bytes | None:
    return None if field == "-" else b"" if field == "~" else bytes.fromhex(field)


def _from_text(field: str) -> str | None:
    data = _from_hex(field)
    return None if data is None else data.decode("utf-8")


def _b64_text(data: bytes | None) -> str | None:
    import base64

    return None if data is None else base64.b64encode(data).decode("ascii")


def consume(argv: list[str]) -> int:
    from conformance.jvm import oracle

    proc = subprocess.run(
        [sys.executable, "-m", "conformance.jvm.oracle", *argv], capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        return proc.returncode
    doc = json.loads(proc.stdout)
    assert doc["format"] == oracle.CONSUME_FORMAT, doc
    out = []
    for r in doc["records"]:
        line = [
            "R",
            r["offset"],
            r["timestamp"],
            r["timestampType"],
            _hex(None if r["key"] is None else _b64(r["key"])),
            _hex(None if r["value"] is None else _b64(r["value"])),
            len(r["headers"]),
        ]
        for h in r["headers"]:
            line += [_text(h["key"]), _hex(None if h["value"] is None else _b64(h["value"]))]
        out.append(" ".join(map(str, line)))
    error = doc["error"]
    if error is not None:
        out.append(f"E {_text(error['class'])} {_text(error.get('message'))}")
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


def _read_plan_lines(text: str) -> dict[str, Any]:
    """The plan document from the lines a bridge hook wrote (the module docstring)."""
    plan: dict[str, Any] = {"format": "kafka-conformance/produce-plan/1", "records": []}
    for line in text.splitlines():
        f = line.split(" ")
        if f[0] == "P":
            plan.update(scenario=_from_text(f[1]), topic=_from_text(f[2]), partitions=int(f[3]))
        elif f[0] == "S":
            txn = None if f[8] == "-" else {"id": _from_text(f[8]), "end": f[9]}
            plan["settings"] = {
                "codec": f[1],
                "idempotence": f[2] == "1",
                "acks": int(f[3]),
                "linger_ms": int(f[4]),
                "batch_size": int(f[5]),
                "max_request_size": int(f[6]),
                "timeout_ms": int(f[7]),
                "transaction": txn,
            }
        elif f[0] == "R":
            n = int(f[5])
            plan["records"].append(
                {
                    "key": _b64_text(_from_hex(f[1])),
                    "value": _b64_text(_from_hex(f[2])),
                    "timestamp": None if f[3] == "-" else int(f[3]),
                    "partition": None if f[4] == "-" else int(f[4]),
                    "headers": [
                        {
                            "key": _from_text(f[6 + 2 * i]),
                            "value": _b64_text(_from_hex(f[7 + 2 * i])),
                        }
                        for i in range(n)
                    ],
                }
            )
        elif f[0] == "B":
            keys = ("magic", "base_offset", "producer_id", "producer_epoch", "base_sequence")
            batch: dict[str, Any] = dict(zip(keys, map(int, f[1:6])))
            batch["transactional"] = f[6] == "1"
            batch["partition_leader_epoch"] = int(f[7])
            plan["batch"] = batch
        elif line.strip():
            raise SystemExit(f"starter_bridge.py: not a plan line: {line!r}")
    return plan


def _java_producer() -> list[str]:
    """The command of the built-in java producer adapter (adapters/java-producer), built."""
    from conformance.harness import registry

    [adapter] = [a for a in registry.adapters(side="produce") if a.name == "java"]
    return registry.build(adapter).argv


def produce_or_encode(command: str, argv: list[str]) -> int:
    plan = _read_plan_lines(sys.stdin.read())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "plan.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(plan, f)
        extra = ["--bootstrap", argv[0]] if command == "produce" else []
        proc = subprocess.run(
            [*_java_producer(), command, *extra, "--plan", path], capture_output=True
        )
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.decode(errors="replace"))
        return proc.returncode
    if command == "encode":
        sys.stdout.write(f"X {proc.stdout.hex()}\n")
        return 0
    doc = json.loads(proc.stdout)
    out = []
    for r in doc["records"]:
        partition = "-" if r["partition"] is None else r["partition"]
        offset = "-" if r["offset"] is None else r["offset"]
        out.append(f"D {partition} {offset} {_text(r['error'])}")
    if doc.get("error") is not None:
        out.append(f"F {_text(doc['error'])}")
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


def main() -> int:
    if sys.argv[1:2] == ["consume"]:
        return consume(sys.argv[1:])
    if sys.argv[1:2] in (["produce"], ["encode"]):
        return produce_or_encode(sys.argv[1], sys.argv[2:])
    mode = sys.argv[1] if len(sys.argv) > 1 else "memory"
    doc = decode(sys.stdin.buffer.read(), mode=mode).to_dict()
    out: list[str] = []
    for b in doc["batches"]:
        fields = [
            "B",
            b["position"],
            b["sizeInBytes"],
            b["magic"],
            b["crc"],
            b["attributes"],
            b["compression"],
            b["timestampType"],
            b["lastOffset"],
            b["maxTimestamp"],
        ]
        if b["magic"] >= 2:
            fields += [
                b["baseOffset"],
                b["lastOffsetDelta"],
                b["partitionLeaderEpoch"],
                b["baseTimestamp"],
                "-" if b["deleteHorizonMs"] is None else b["deleteHorizonMs"],
                int(b["isTransactional"]),
                int(b["isControl"]),
                b["producerId"],
                b["producerEpoch"],
                b["baseSequence"],
                b["lastSequence"],
                b["recordsCount"],
            ]
        out.append(" ".join(map(str, fields)))
        for r in b["records"]:
            key = None if r["key"] is None else _b64(r["key"])
            value = None if r["value"] is None else _b64(r["value"])
            line = ["R", r["offset"], r["timestamp"], _hex(key), _hex(value), len(r["headers"])]
            for h in r["headers"]:
                hv = None if h["value"] is None else _b64(h["value"])
                line += [_text(h["key"]), _hex(hv)]
            out.append(" ".join(map(str, line)))
            control = r.get("control")
            if control is not None:
                epoch = control.get("coordinatorEpoch")
                out.append(
                    f"C {control['typeId']} {_text(control['type'])} "
                    f"{'-' if epoch is None else epoch}"
                )
    error = doc["error"]
    if error is not None:
        out.append(
            f"E {_text(error['kafka_exception'])} {_text(error['message'])} "
            f"{error['batch_index']} {error['position']}"
        )
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


def _b64(text: str) -> bytes:
    import base64

    return base64.b64decode(text)


if __name__ == "__main__":
    sys.exit(main())
