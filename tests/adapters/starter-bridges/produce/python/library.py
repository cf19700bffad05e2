"""Test bridge for the Python producer starter (tests/test_init_adapter.py): a replacement of
the hook that writes the plan the starter read back as lines to Kafka's own producer and batch
builder (tests/adapters/starter_bridge.py produce|encode, its docstring gives the line format)
and fills the starter's structures from the answer, so that the starter's protocol side (the
plan it reads, the document it writes) is what the test exercises."""

import os
import subprocess
from typing import Any

from plan import Delivery, Plan, Produced

NAME: str = "python-produce-starter-bridge"
VERSION: str = ""
PRODUCE: dict[str, Any] | None = {
    "codecs": ["none", "gzip", "snappy", "lz4", "zstd"],
    "idempotence": True,
    "transactions": True,
    "headers": True,
    "magics": [2],
    "partitioner": "java",
    "defaults": {"idempotence": True, "acks": -1, "linger_ms": 5, "batch_size": 16384},
}
ENCODE: dict[str, Any] | None = {
    "codecs": ["none", "gzip", "snappy", "lz4", "zstd"],
    "idempotence": True,
    "transactions": True,
    "headers": True,
    "magics": [2],
}


def _hex(data: bytes | None) -> str:
    return "-" if data is None else (data.hex() or "~")


def _text(text: str | None) -> str:
    return _hex(None if text is None else text.encode("utf-8"))


def _lines(plan: Plan) -> str:
    s = plan.settings
    txn = s.transaction
    out = [
        f"P {_text(plan.scenario)} {_text(plan.topic)} {plan.partitions}",
        f"S {s.codec} {int(s.idempotence)} {s.acks} {s.linger_ms} {s.batch_size} "
        f"{s.max_request_size} {s.timeout_ms} {_text(txn and txn.id)} {txn.end if txn else '-'}",
    ]
    for r in plan.records:
        line = [
            "R", _hex(r.key), _hex(r.value),
            "-" if r.timestamp is None else str(r.timestamp),
            "-" if r.partition is None else str(r.partition),
            str(len(r.headers)),
        ]  # fmt: skip
        for h in r.headers:
            line += [_text(h.key), _hex(h.value)]
        out.append(" ".join(line))
    b = plan.batch
    if b is not None:
        out.append(
            f"B {b.magic} {b.base_offset} {b.producer_id} {b.producer_epoch} {b.base_sequence} "
            f"{int(b.transactional)} {b.partition_leader_epoch}"
        )
    return "".join(line + "\n" for line in out)


def _bridge(*args: str, plan: Plan) -> list[list[str]]:
    argv = [os.environ["STARTER_BRIDGE_PYTHON"], os.environ["STARTER_BRIDGE_SCRIPT"], *args]
    proc = subprocess.run(argv, input=_lines(plan), capture_output=True, text=True, check=True)
    return [line.split(" ") for line in proc.stdout.splitlines()]


def _text_of(field: str) -> str | None:
    return None if field == "-" else "" if field == "~" else bytes.fromhex(field).decode()


def produce(bootstrap: str, plan: Plan) -> Produced:
    out = Produced()
    for f in _bridge("produce", bootstrap, plan=plan):
        if f[0] == "D":
            out.records.append(
                Delivery(
                    None if f[1] == "-" else int(f[1]),
                    None if f[2] == "-" else int(f[2]),
                    _text_of(f[3]),
                )
            )
        elif f[0] == "F":
            out.error = _text_of(f[1])
    return out


def encode(plan: Plan) -> bytes:
    [[tag, data]] = _bridge("encode", plan=plan)
    assert tag == "X"
    return bytes.fromhex(data)
