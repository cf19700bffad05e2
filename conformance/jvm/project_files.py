"""Which files of the repository's JVM projects an installed kit carries.

The JVM side builds from directories of the repository: ``jvm/kafka-classpath`` (the POM that
resolves a Kafka distribution's jars, ``kafka_jars``), ``jvm/producer`` (the capture
scenarios' Java producer), ``oracle`` (the consumer oracle's Maven project and the broker
oracle's source sets, ``oracle`` and ``broker_oracle``), ``adapters/java`` and
``adapters/java-producer`` (the built-in ``java`` adapters, ``harness.registry``). The wheel
and the sdist carry a copy of exactly :func:`source_files` (setup.py), under
``conformance/jvm/projects/<directory>/`` in the wheel; ``runtime.project_dir`` decides which
copy a command uses (the checkout's when there is one).

Standard library only, and no import of the package: setup.py loads this file by its path.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGED_DIR", "PROJECTS", "source_files"]

#: each project's directory (relative to a checkout) and the globs of its sources: what its
#: build reads, never what a build writes (``target/``, classes, jars)
PROJECTS: dict[str, tuple[str, ...]] = {
    "jvm/kafka-classpath": ("pom.xml",),
    "jvm/producer": ("*.java",),
    "oracle": ("pom.xml", "src/**/*.java", "broker/**/*.java"),
    "adapters/java": ("adapter.toml",),
    "adapters/java-producer": ("adapter.toml", "*.java", "*.properties"),
}

#: where the wheel carries them, relative to the package's ``jvm/`` folder
PACKAGED_DIR = "projects"


def source_files(root: Path) -> list[str]:
    """The files of every project under ``root`` (a checkout or an unpacked sdist), as POSIX
    paths relative to ``root``, sorted."""
    found: set[str] = set()
    for directory, globs in PROJECTS.items():
        base = root / directory
        for pattern in globs:
            found.update(p.relative_to(root).as_posix() for p in base.glob(pattern) if p.is_file())
    return sorted(found)
