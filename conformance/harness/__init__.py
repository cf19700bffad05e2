"""``kafka-conformance check``: third-party decoders against Kafka's verdicts.

A thin shell over the core and the corpora (docs/adapter-protocol.md, docs/adapters.md):

* ``cases``: the corpora's inputs with the Java oracle's documents, case ids and groups;
* ``judge``: capabilities, what is unsupported, the comparison rules -> a verdict per case;
* ``process``: adapter processes with deadlines, output limits and process-group kills;
* ``registry``: the built-in adapters (``adapters/*/adapter.toml``), built on demand, cached;
* ``runner``: one implementation over many cases, in parallel, with progress;
* ``divergences``: the known divergences of the built-in adapters, classified;
* ``report/``: terminal table, JSON, JUnit XML, the HTML matrix, the Markdown matrix.
"""
