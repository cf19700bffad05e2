"""Layer 4 — stream: a byte stream of batches and Kafka's verdict on it.

``splitter`` cuts batches with ``MemoryRecords`` or ``FileRecords`` semantics; ``decoder``
walks them as Kafka's consumer does (``decode``, ``StreamDecoder``); ``findings`` adds the
strict profile's anomalies; ``result`` holds the verdict and its canonical JSON; ``compare``
diffs two canonical documents with Kafka's message-matching rules. Sans-IO: it reads ``bytes``
or any sliceable source (``splitter.ByteSource``), never a file.
"""
