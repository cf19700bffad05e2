"""The container side of capture: an engine to talk to, and broker images built locally.

* :mod:`.engine`: finds a Docker-compatible daemon that answers, or starts Podman's socket
  service with ``engine.sh`` (``scripts/container-engine``), and gives the environment the
  ``testcontainers`` package needs;
* :mod:`.images`: ``kafka-conformance/jre:<java>`` from this machine's JDK and
  ``kafka-conformance/kafka:<version>`` from the Kafka jars the jvm backend resolves, built
  through the Docker API (no registry), rebuilt only when their inputs change;
* ``kafka-start.sh``: the images' entry point (ZooKeeper or KRaft format, then the broker).

The testcontainers backend (:mod:`conformance.capture.testcontainers_backend`) uses both.
"""
