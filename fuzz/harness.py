#!/usr/bin/env python3
"""atheris entry point for every fuzz target of the kit.

    python fuzz/harness.py TARGET [--differential] [--findings DIR] [libFuzzer flags] [CORPUS...]

The kit's decoding modules are imported under atheris' instrumentation (coverage feedback for
libFuzzer); the fuzzing machinery itself (``conformance.fuzz``), the oracle client and the
CLI are not, so their branches do not pollute the feedback. ``kafka-conformance fuzz`` is the
usual way in (it adds corpora, dictionaries, bounds, restarts and the findings summary).
"""

import importlib.util
import sys
from pathlib import Path

import atheris

#: the shells around the decoding core (package prefixes): the fuzzing machinery, the JVM
#: edge, the CLI, the corpus builders and the writers give no useful feedback
_NOT_INSTRUMENTED = ("conformance.fuzz", "conformance.jvm", "conformance.cli", "conformance.corpus",
                     "conformance.capture", "conformance.strategies", "conformance.wire.builder",
                     "conformance.stream.compare")


def _excluded_modules() -> list[str]:
    """Every module of the shells, by exact name (atheris matches excluded names one by one)."""
    spec = importlib.util.find_spec("conformance")
    assert spec is not None and spec.submodule_search_locations
    root = Path(list(spec.submodule_search_locations)[0])
    names = []
    for f in root.rglob("*.py"):
        parts = ("conformance",) + f.relative_to(root).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            parts = parts[:-1]
        name = ".".join(parts)
        if any(name == p or name.startswith(p + ".") for p in _NOT_INSTRUMENTED):
            names.append(name)
    return names


with atheris.instrument_imports(include=["conformance"], exclude=_excluded_modules()):
    import conformance  # noqa: F401  (the decoding core, instrumented)
    from conformance.fuzz import worker

if __name__ == "__main__":
    worker.main(sys.argv)
