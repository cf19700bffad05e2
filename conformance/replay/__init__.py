"""``kafka-conformance replay``: Kafka's verdict on corpora of any size, with Spark
(docs/replay.md).

A thin shell over the core's walk (``stream.scan``): ``inputs`` finds the files, ``plan`` cuts
them into batch-aligned byte ranges, ``task`` replays one range into rows and a range summary
(no Spark in it), ``summary`` merges the range summaries, ``job`` runs the tasks (Spark's
``mapInArrow``, or a plain loop), ``standalone`` starts a real Spark standalone cluster.
"""
