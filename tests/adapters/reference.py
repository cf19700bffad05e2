#!/usr/bin/env python3
"""The five-line adapter of docs/adapter-protocol.md: the kit's reference decoder, one-shot
mode only, no `capabilities` (so the protocol's defaults apply)."""

import sys

from conformance import decode

if sys.argv[1:2] != ["decode"]:
    sys.exit(2)
print(decode(sys.stdin.buffer.read(), mode=sys.argv[sys.argv.index("--as") + 1]).to_json())
