"""The native extension, chosen once at import: ``kafka_conformance_native`` or nothing.

The kit has one API and two implementations of its hot loops, as fastavro has: the pure-Python
reference (always there, the definition) and a Rust/PyO3 extension built from ``native/`` in
the repository (docs/native.md), which decides only inputs it is sure about and declines the
rest to the reference. This module is the one place that picks:

* ``KAFKA_CONFORMANCE_PURE=1`` (any value but ``0`` or empty): pure, whatever is installed;
* else ``kafka_conformance_native`` if it imports and speaks :data:`API`;
* else pure (a plain ``pip install`` without a Rust toolchain, or a stale build).

:data:`NATIVE` is the module or None; :func:`implementation` says which and why (shown by
``kafka-conformance --version``). The users (``primitives.crc``, ``wire._record_fast``) read
``native.NATIVE`` at call time, so a test can switch it off for one comparison.
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["API", "NATIVE", "choose", "implementation"]

#: the extension's API version this kit speaks (``kafka_conformance_native.API``)
API = 4


def choose(honour_pure: bool = True) -> tuple[ModuleType | None, str]:
    """The extension (or None) and why; ``honour_pure=False`` ignores
    ``KAFKA_CONFORMANCE_PURE`` (the fuzz target that compares the two paths)."""
    if honour_pure and os.environ.get("KAFKA_CONFORMANCE_PURE", "") not in ("", "0"):
        return None, "pure (KAFKA_CONFORMANCE_PURE is set)"
    try:
        import kafka_conformance_native as module
    except ImportError:
        return None, "pure (kafka_conformance_native is not installed)"
    api = getattr(module, "API", None)
    if api != API:
        return None, f"pure (kafka_conformance_native speaks API {api}, this kit {API})"
    return module, f"native (kafka_conformance_native {module.__version__})"


#: Process-wide, deliberately (docs/architecture.md, "Conventions: State"): the extension
#: module, or None for the pure path. Set at import; only tests change it
NATIVE, _WHY = choose()


def implementation() -> str:
    """``native (kafka_conformance_native X)`` or ``pure (why)``."""
    if NATIVE is None and _WHY.startswith("native"):
        return "pure (the native module is switched off)"
    return _WHY
