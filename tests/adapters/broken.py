#!/usr/bin/env python3
"""Deliberately broken adapters for the runner's tests (tests/test_harness.py).

    broken.py BEHAVIOUR [decode --as MODE | capabilities | serve]

BEHAVIOUR (one-shot unless said): hang (sleeps, and so does a child it starts, holding the
pipes), crash (SIGSEGV), exit3, flood (endless output), stderr-flood (100 MiB on stderr,
then a correct answer), garbage (not JSON), wrong (a JSON object that is no decode
document), slow-then-ok (every third case hangs), serve-hang (persistent: the third request
hangs), serve-die (persistent: exits after one answer), serve-huge (persistent: announces a
2 GiB response), serve-ok (persistent, correct: the kit's reference decoder),
v2-only-lenient (declares magic 2 only, and turns every error into `ok`: it accepts what
Kafka rejects), nested (prints `[` a million times), nested-caps (its `capabilities` does),
serve-nested (persistent: answers with it), setsid-child (starts a sleeping child in a
session of its own, then answers correctly), panic (a Go-style panic: its message, then 300
lines of goroutine stack, exit 2). Every process's command line carries the marker
`kafka-conformance-broken-adapter`, so the tests can see none is left behind.
"""

import json
import os
import signal
import struct
import subprocess
import sys
import time

MARK = "kafka-conformance-broken-adapter"
behaviour, command = sys.argv[1], sys.argv[2:3]


def reference(data: bytes, mode: str) -> bytes:
    from conformance import decode

    return decode(data, mode=mode).to_json().encode()


def hang() -> None:
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", MARK])
    time.sleep(3600)


NESTED = b"[" * 1_000_000

if command == ["capabilities"]:
    if behaviour == "nested-caps":
        sys.stdout.buffer.write(NESTED)
        sys.exit(0)
    caps = {"name": f"broken-{behaviour}", "version": "0"}
    if behaviour.startswith("serve-"):
        caps["persistent"] = True
    if behaviour == "v2-only-lenient":
        caps["magics"] = [2]
    print(json.dumps(caps))
    sys.exit(0)

if command == ["serve"]:
    count = 0
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = stdin.read(5)
        if len(head) < 5:
            sys.exit(0)
        mode = "memory" if head[0] == 0 else "file"
        data = stdin.read(struct.unpack(">I", head[1:])[0])
        count += 1
        if behaviour == "serve-hang" and count == 3:
            hang()
        if behaviour == "serve-nested":
            stdout.write(struct.pack(">I", len(NESTED)) + NESTED)
            stdout.flush()
            continue
        if behaviour == "serve-huge":
            stdout.write(struct.pack(">I", (2 << 30) - 1) + b"{")
            stdout.flush()
            time.sleep(3600)
        body = reference(data, mode)
        stdout.write(struct.pack(">I", len(body)) + body)
        stdout.flush()
        if behaviour == "serve-die":
            os._exit(0)

data = sys.stdin.buffer.read()
mode = sys.argv[sys.argv.index("--as") + 1]
if behaviour == "hang":
    hang()
elif behaviour == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
elif behaviour == "exit3":
    print("something went wrong", file=sys.stderr)
    sys.exit(3)
elif behaviour == "flood":
    block = b"x" * 65536
    while True:
        sys.stdout.buffer.write(block)
elif behaviour == "stderr-flood":
    for _ in range(1600):
        sys.stderr.buffer.write(b"e" * 65536)
    sys.stdout.buffer.write(reference(data, mode))
elif behaviour == "nested":
    sys.stdout.buffer.write(NESTED)
elif behaviour == "setsid-child":
    code = "import time; time.sleep(3600)"
    subprocess.Popen([sys.executable, "-c", code, MARK], start_new_session=True)
    sys.stdout.buffer.write(reference(data, mode))
elif behaviour == "panic":
    print("panic: runtime error: index out of range [7] with length 3", file=sys.stderr)
    print("\ngoroutine 1 [running]:", file=sys.stderr)
    for i in range(300):
        print(f"main.decode{i}(...)\n\t/src/adapter/main.go:{i + 10} +0x1d", file=sys.stderr)
    sys.exit(2)
elif behaviour == "garbage":
    print("this is not JSON {")
elif behaviour == "wrong":
    print(json.dumps({"records": []}))
elif behaviour == "v2-only-lenient":
    doc = json.loads(reference(data, mode))
    doc["outcome"], doc["error"] = "ok", None
    print(json.dumps(doc))
elif behaviour == "slow-then-ok":
    if len(data) % 3 == 0:
        hang()
    sys.stdout.buffer.write(reference(data, mode))
