"""Coverage-guided fuzzing of the kit (atheris / libFuzzer): targets, structure-aware
mutation, differential comparison against Kafka's Java classes, and the runner behind
``kafka-conformance fuzz``. A thin shell over the core: every byte is parsed by the core's
one parser per structure. See ``fuzz/README.md`` for operations.
"""
