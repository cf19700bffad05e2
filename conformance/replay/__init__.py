"""``kafka-conformance replay``: Kafka's verdict on corpora of any size, with Spark
(docs/replay.md).

A thin shell over the core's walk (``stream.scan``): ``inputs`` finds the files, ``plan`` cuts
them into batch-aligned byte ranges, ``task`` replays a task's ranges into Parquet rows and
range summaries (no Spark in it), ``counts`` is the range summary and how counts combine,
``summary`` merges the range summaries into ``summary.json`` and its table, ``job`` runs the
tasks (Spark's ``mapInArrow``, or a plain loop), ``cluster`` starts a real Spark standalone
cluster on 127.0.0.1 and runs ``spark-submit`` (its processes supervised by
``host.sessions``; ``kafka-conformance spark-cluster`` for humans).
"""
