"""kafka-conformance adapter for the kit's own decoder on its native fast path.

API under test: `conformance.decode(data, mode="memory"|"file")` with the kit's defaults (its
decompression and record limits), whose canonical document (`DecodeResult.to_json()`) is
already the protocol's (docs/canonical-json.md). Its records regions are decoded by the Rust/PyO3
extension `kafka_conformance_native` (built from native/ and installed into the kit's venv by
scripts/build-native) wherever the extension is sure, and by the pure-Python reference where it
declines, so the verdicts must be the reference's: this row of the matrix is that claim, checked
against Kafka's own classes like any third-party decoder. Unlike the third-party adapters this
one imports the kit: it runs with the kit's own interpreter (`{python}`), nothing is built.

It refuses to run pure: when `conformance.primitives.native.NATIVE` is None (the extension is
not installed, speaks another API, or KAFKA_CONFORMANCE_PURE is set) every subcommand prints
`native.implementation()` (why) to stderr and exits 3, so every case is an `error` of this
row instead of a pass earned by the reference alone.

Declared: what the kit's decoder does, as the `java` adapter declares for Kafka's classes:
magics 0-2, all five codecs, CRCs checked, streaming error semantics (Kafka's
`streamingIterator`), FileRecords semantics for `--as file`, exact error classes (class and
message), nothing omitted, persistent (`serve`).

A decode that raises is a crash of the kit (it never raises for bad input), not a verdict: the
traceback goes to stderr and the process exits 1 (in `serve` too), so the runner shows it.

Usage: adapter.py capabilities | decode --as memory|file | serve   (docs/adapter-protocol.md)
"""

import struct
import sys
import traceback

import conformance
from conformance.jsondoc import json_text
from conformance.primitives import native

MODES = ("memory", "file")  # `decode --as` values; a `serve` request's mode byte indexes it
FRAME = struct.Struct(">I")  # the 4-byte big-endian length framing `serve` requests/responses
USAGE = "usage: adapter.py capabilities | decode --as memory|file | serve\n"
REFUSED = 3  # exit status when the kit would decode pure


def capabilities():
    extension = native.NATIVE.__version__
    return {
        "name": "kit-native",
        "version": f"{conformance.__version__} (kafka_conformance_native {extension})",
        "magics": [0, 1, 2],
        "codecs": ["none", "gzip", "snappy", "lz4", "zstd"],
        "checks_crc": True,
        "error_semantics": "streaming",
        "lists_failing_batch": True,
        "file_semantics": True,
        "error_classes": "exact",
        "omits": [],
        "persistent": True,
        "notes": "the kit's own decoder, conformance.decode with its defaults, on the native "
        "fast path (kafka_conformance_native; the pure reference for regions it declines); "
        "refuses to run pure",
    }


def decode(data, mode):
    """The canonical JSON document (UTF-8 bytes, one line) of `data` decoded in `mode`."""
    return conformance.decode(data, mode=mode).to_json().encode("utf-8")


def _read_exactly(stream, size):
    chunks = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def serve(stdin, stdout):
    """Requests (1 byte mode + 4-byte big-endian length + input) until EOF, each answered with a
    4-byte big-endian length + the JSON document, then a flush."""
    while True:
        head = _read_exactly(stdin, 1 + FRAME.size)
        if not head:
            return 0  # EOF between requests: done
        if len(head) < 1 + FRAME.size or head[0] >= len(MODES):
            sys.stderr.write(f"serve: bad request header {head.hex()}\n")
            return 2
        (length,) = FRAME.unpack_from(head, 1)
        data = _read_exactly(stdin, length)
        if len(data) < length:
            sys.stderr.write(f"serve: input cut short ({len(data)} of {length} bytes)\n")
            return 2
        answer = decode(data, MODES[head[0]])
        stdout.write(FRAME.pack(len(answer)) + answer)
        stdout.flush()


def main(argv):
    if native.NATIVE is None:  # before anything else: this row is the native path or nothing
        sys.stderr.write(f"kit-native: the kit would decode {native.implementation()}\n")
        return REFUSED
    command = argv[0] if argv else ""
    try:
        if command == "capabilities" and len(argv) == 1:
            sys.stdout.buffer.write(json_text(capabilities()).encode() + b"\n")
            return 0
        if command == "decode" and len(argv) == 3 and argv[1] == "--as" and argv[2] in MODES:
            answer = decode(sys.stdin.buffer.read(), argv[2])
            sys.stdout.buffer.write(answer + b"\n")
            sys.stdout.buffer.flush()
            return 0
        if command == "serve" and len(argv) == 1:
            return serve(sys.stdin.buffer, sys.stdout.buffer)
    except Exception:  # the kit raised: a crash, never a verdict
        traceback.print_exc()
        return 1
    sys.stderr.write(USAGE)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
