"""The JVM edge (a shell): the Java runtime and Maven plumbing (``runtime``), Kafka
distributions from Maven Central (``kafka_jars``) and the Java oracle (``oracle``) that
produces every golden expectation from Kafka's own classes. Nothing in the core imports it.
"""
