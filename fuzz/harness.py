#!/usr/bin/env python3
"""atheris entry point, checkout form: runs the package's harness, ``conformance/fuzz/harness.py``.

    python fuzz/harness.py TARGET [--differential] [--findings DIR] [libFuzzer flags] [CORPUS...]

The harness lives in the package so that an installed wheel has it too (``kafka-conformance
fuzz`` starts it from there). This file keeps the direct, OSS-Fuzz style use from a checkout
working; it must not import ``conformance`` itself (the harness imports the decoding core
under atheris' instrumentation).
"""

import importlib.util
import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    spec = importlib.util.find_spec("conformance")  # locates the package, imports nothing
    if spec is None or not spec.submodule_search_locations:
        sys.exit(
            "fuzz/harness.py: the conformance package is not installed "
            "(scripts/bootstrap, or pip install -e '.[fuzz]')"
        )
    harness = Path(next(iter(spec.submodule_search_locations))) / "fuzz" / "harness.py"
    runpy.run_path(str(harness), run_name="__main__")
