"""Corpora (a shell): the crafted edge cases (``crafted``: bytes built with the kit's own
writers plus fault knobs) and the golden corpora of real brokers (``golden``: manifests,
expectations written by the oracle and DumpLogSegments, and ``kafka-conformance verify``).
"""
