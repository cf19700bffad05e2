"""Test bridge for the Python consumer starter (tests/test_init_adapter.py): a replacement of
the hook whose ``consume`` runs Kafka's own consumer (tests/adapters/starter_bridge.py consume,
its docstring gives the line format) and fills the starter's structures from its lines, so
that the starter's protocol side is what the test exercises."""

import os
import subprocess

from consumed import Consumed, Error, Header, Options, Record

NAME: str = "python-consume-starter-bridge"
VERSION: str = ""
MAGICS: list[int] = [0, 1, 2]
CODECS: list[str] = ["none", "gzip", "snappy", "lz4", "zstd"]
CHECKS_CRC: bool = True
ERROR_SEMANTICS: str = "streaming"
ERROR_CLASSES: str = "class"
OMITS: list[str] = []
NOTES: str = ""


def _bytes(field: str) -> bytes | None:
    return None if field == "-" else b"" if field == "~" else bytes.fromhex(field)


def _text(field: str) -> str | None:
    data = _bytes(field)
    return None if data is None else data.decode("utf-8")


def consume(options: Options) -> Consumed:
    argv = [
        os.environ["STARTER_BRIDGE_PYTHON"], os.environ["STARTER_BRIDGE_SCRIPT"], "consume",
        "--bootstrap", options.bootstrap, "--topic", options.topic,
        "--partition", str(options.partition), "--from", options.start,
        "--isolation", options.isolation, "--timeout-ms", str(options.timeout_ms),
    ]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    out = Consumed()
    for line in proc.stdout.splitlines():
        f = line.split(" ")
        if f[0] == "R":
            headers = [Header(_text(f[7 + 2 * i]), _bytes(f[8 + 2 * i])) for i in range(int(f[6]))]
            out.records.append(
                Record(int(f[1]), int(f[2]), f[3], _bytes(f[4]), _bytes(f[5]), headers)
            )
        elif f[0] == "E":
            out.error = Error(_text(f[1]), _text(f[2]))
    return out
