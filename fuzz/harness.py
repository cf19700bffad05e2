#!/usr/bin/env python3
"""atheris entry point for every fuzz target of the kit.

    python fuzz/harness.py TARGET [--differential] [--findings DIR] [libFuzzer flags] [CORPUS...]

The kit's decoding modules are imported under atheris' instrumentation (coverage feedback for
libFuzzer); the fuzzing machinery itself (``conformance.fuzz``), the oracle client and the
CLI are not, so their branches do not pollute the feedback. ``kafka-conformance fuzz`` is the
usual way in (it adds corpora, dictionaries, bounds, restarts and the findings summary).
"""

import sys

import atheris

with atheris.instrument_imports(
    include=["conformance"],
    # exact module names (atheris matches them one by one): the fuzzing shell and the
    # test-data builders give no useful feedback
    exclude=[f"conformance.{m}" for m in (
        "fuzz", "fuzz.worker", "fuzz.store", "fuzz.targets", "fuzz.mutator", "fuzz.differential",
        "oracle", "jvm", "cli", "crafted", "compare", "canonical", "encoder", "strategies")],
):
    import conformance  # noqa: F401  (the decoding core, instrumented)
    from conformance.fuzz import worker

if __name__ == "__main__":
    worker.main(sys.argv)
