"""``kafka-conformance check-producer`` (docs/producer-check.md): third-party producers and
encoders judged by a real broker, the kit's broker model and Kafka's consumer.

* ``plan``: the plan model (records, the groups to send as one batch, settings) and document;
* ``scenarios``: what each implementation is asked to write (the plans);
* ``judge``: one implementation on one scenario, from what crossed the wire;
* ``sent``: the records of each plan group in the batches as sent, and the batches it took;
* ``run``: brokers, the recording proxy, every adapter over every scenario.

It sits above ``capture`` (brokers, the proxy, the Produce wire) and ``harness`` (adapter
processes, the built-in adapters, reports), which do not import each other.
"""
