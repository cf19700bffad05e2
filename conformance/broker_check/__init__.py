"""``kafka-conformance check-broker``: Kafka-compatible brokers judged against Kafka's answers
(docs/broker-check.md): ``scenarios`` (what is sent: the produce corpus's cases), ``targets``
(the brokers: Apache Kafka started by the kit, built-in Kafka-compatible brokers, any running
broker by its bootstrap address), ``judge`` (one answer against the kit's broker model, every
difference at its level), ``run`` (per target: topics under a prefix, each case sent raw and
fetched back, judged, the topics deleted)."""
