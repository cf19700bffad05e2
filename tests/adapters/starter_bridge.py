#!/usr/bin/env python3
"""A correct decoder for the starter adapters' tests (tests/test_init_adapter.py): the kit's
reference decoder, printed as lines any language can parse without a JSON library.

    starter_bridge.py memory|file  < input bytes

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
"""

import sys

from conformance import decode


def _hex(data: bytes | None) -> str:
    if data is None:
        return "-"
    return data.hex() or "~"


def _text(text: str | None) -> str:
    return "-" if text is None else (text.encode("utf-8").hex() or "~")


def main() -> int:
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
