"""Test bridge for the Python starter (tests/test_init_adapter.py): a replacement of the hook
whose ``decode`` runs the kit's reference decoder (tests/adapters/starter_bridge.py, its
docstring gives the line format) and fills the starter's structures from its lines, so that
the starter's protocol side is what the test exercises."""

import os
import subprocess

from decoded import Batch, Control, Decoded, Error, Header, Record

NAME: str = "python-starter-bridge"
VERSION: str = ""
MAGICS: list[int] = [0, 1, 2]
CODECS: list[str] = ["none", "gzip", "snappy", "lz4", "zstd"]
CHECKS_CRC: bool = True
ERROR_SEMANTICS: str = "streaming"
FILE_SEMANTICS: bool = True
ERROR_CLASSES: str = "class"
LISTS_FAILING_BATCH: bool = True
OMITS: list[str] = []
NOTES: str = ""


def _bytes(field: str) -> bytes | None:
    return None if field == "-" else b"" if field == "~" else bytes.fromhex(field)


def _text(field: str) -> str | None:
    data = _bytes(field)
    return None if data is None else data.decode("utf-8")


def _read_batch(f: list[str]) -> Batch:
    batch = Batch(*map(int, f[1:6]), f[6], f[7], int(f[8]), int(f[9]))
    if batch.magic >= 2:
        batch.base_offset, batch.last_offset_delta, batch.partition_leader_epoch = map(
            int, f[10:13]
        )
        batch.base_timestamp = int(f[13])
        batch.delete_horizon_ms = None if f[14] == "-" else int(f[14])
        batch.is_transactional, batch.is_control = f[15] == "1", f[16] == "1"
        (
            batch.producer_id,
            batch.producer_epoch,
            batch.base_sequence,
            batch.last_sequence,
            batch.records_count,
        ) = map(int, f[17:22])
    return batch


def _read_record(f: list[str]) -> Record:
    pairs = f[6 : 6 + 2 * int(f[5])]
    headers = [Header(_text(k) or "", _bytes(v)) for k, v in zip(pairs[::2], pairs[1::2])]
    return Record(int(f[1]), int(f[2]), _bytes(f[3]), _bytes(f[4]), headers)


def decode(data: bytes, mode: str) -> Decoded:
    argv = [os.environ["STARTER_BRIDGE_PYTHON"], os.environ["STARTER_BRIDGE_SCRIPT"], mode]
    run = subprocess.run(argv, input=data, capture_output=True, check=False)
    if run.returncode != 0:
        raise RuntimeError(f"starter_bridge.py failed: {run.stderr.decode(errors='replace')}")
    decoded = Decoded()
    for line in run.stdout.decode("ascii").splitlines():
        f = line.split(" ")
        if f[0] == "B":
            decoded.batches.append(_read_batch(f))
        elif f[0] == "R":
            decoded.batches[-1].records.append(_read_record(f))
        elif f[0] == "C":
            epoch = None if f[3] == "-" else int(f[3])
            decoded.batches[-1].records[-1].control = Control(int(f[1]), _text(f[2]) or "", epoch)
        elif f[0] == "E":
            decoded.error = Error(_text(f[1]) or "", _text(f[2]), int(f[3]), int(f[4]))
    return decoded
