"""Differential fuzzing of other implementations (``kafka-conformance fuzz --against``): the
fuzzer's inputs through an adapter and through the kit, judged as ``check`` judges, each
difference confirmed by Kafka's classes, minimized, grouped, and written as a case."""
