"""Layer 6 — logdir: the files of a Kafka log directory.

Readers and writers of ``.index``/``.timeindex`` (``index``), ``.txnindex`` (``txnindex``),
producer ``.snapshot`` (``snapshot``), checkpoint and metadata files (``checkpoint``); a
partition writer that lays files out as a broker does (``writer``); the broker's lookups
(``lookup``); DumpLogSegments' output (``dump``) and the directory checker (``verify``).
Files are read through :mod:`conformance.fileio`.
"""
