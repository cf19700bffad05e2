#!/usr/bin/env python3
"""atheris entry point for every fuzz target of the kit: a script, run by its path.

    python <this file> TARGET [--differential] [--findings DIR] [libFuzzer flags] [CORPUS...]

``kafka-conformance fuzz`` is the usual way in (it adds corpora, dictionaries, bounds,
restarts and the findings summary) and finds this file beside ``conformance.fuzz.runner``, so
it works the same in a checkout and in an installed wheel. In a checkout, ``fuzz/harness.py``
runs this file (OSS-Fuzz style direct use).

The kit's decoding modules are imported under atheris' instrumentation (coverage feedback for
libFuzzer); the fuzzing machinery itself (``conformance.fuzz``), the oracle client and the
CLI are not, so their branches do not pollute the feedback. That is why this is run as a
script and not with ``python -m conformance.fuzz.harness``: ``-m`` would import the package
(and with it the decoding core) before the instrumentation starts.
"""

import importlib.util
import os
import sys
from pathlib import Path

#: the shells around the decoding core (package prefixes): the fuzzing machinery, the JVM
#: edge, the CLI, the corpus builders and the writers give no useful feedback
_NOT_INSTRUMENTED = (
    "conformance.fuzz",
    "conformance.jvm",
    "conformance.cli",
    "conformance.corpus",
    "conformance.capture",
    "conformance.strategies",
    "conformance.wire.builder",
    "conformance.stream.compare",
)


def _excluded_modules() -> list[str]:
    """Every module of the shells, by exact name (atheris matches excluded names one by one)."""
    spec = importlib.util.find_spec("conformance")  # finds the package without importing it
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations)))
    names = []
    for f in root.rglob("*.py"):
        parts = ("conformance",) + f.relative_to(root).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            parts = parts[:-1]
        name = ".".join(parts)
        if any(name == p or name.startswith(p + ".") for p in _NOT_INSTRUMENTED):
            names.append(name)
    return names


def main(argv: list[str]) -> None:
    if "conformance.stream.decoder" in sys.modules:
        raise SystemExit(
            "conformance.fuzz.harness: the decoding core is already imported, so "
            "atheris cannot instrument it; run this file by its path"
        )
    import atheris

    with atheris.instrument_imports(include=["conformance"], exclude=_excluded_modules()):
        import conformance  # noqa: F401  (the decoding core, instrumented)
        from conformance.fuzz import worker
    worker.main(argv)


if __name__ == "__main__":
    # run as a script, Python puts this file's directory (conformance/fuzz/) first on
    # sys.path, where its modules would shadow top-level ones (coverage.py): take it off
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    main(sys.argv)
