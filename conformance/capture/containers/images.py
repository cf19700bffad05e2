"""Broker images built on this machine, with no registry: a JRE image, then one per Kafka version.

==========================================  ================================================
``kafka-conformance/jre:<java.version>``    ``FROM scratch``: this machine's JDK (``bin``,
                                            ``conf``, ``lib``, ``release``; no desktop
                                            libraries) under ``/opt/java``, the C libraries
                                            ``ldd`` names, a shell (static busybox, else
                                            the host's ``sh`` and its libraries), ``/tmp``
``kafka-conformance/kafka:<kafka version>`` ``FROM`` the JRE image: the jars the jvm backend
                                            runs (``conformance.jvm.kafka_jars.classpath``)
                                            in ``/opt/kafka/libs``, ``kafka-start.sh``, and
                                            the C libraries the jars' JNI libraries load
                                            (zstd-jni needs ``libpthread.so.0``)
==========================================  ================================================

Both are built through the Docker API (``docker`` package: Docker or Podman's compatible
service) from a build context made here. Each carries the label :data:`INPUTS_LABEL`, the
SHA-256 of everything that went in (file paths, modes and contents; the Containerfile); an
image whose label matches is used as it is, so images are rebuilt only when an input changes
(a new JDK update, other jars, an edited start script).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.host.progress import Status
from conformance.jvm import kafka_jars
from conformance.jvm import runtime as jvm

__all__ = [
    "INPUTS_LABEL",
    "JRE_REPOSITORY",
    "KAFKA_REPOSITORY",
    "Image",
    "ImageBuildError",
    "jre_image",
    "kafka_image",
    "kafka_tag",
]

JRE_REPOSITORY = "kafka-conformance/jre"
KAFKA_REPOSITORY = "kafka-conformance/kafka"
INPUTS_LABEL = "org.kafka-conformance.inputs"
JAVA_HOME_IN_IMAGE = "/opt/java"
START_SCRIPT = Path(__file__).with_name("kafka-start.sh")
#: JDK libraries a headless broker never loads (they would pull X11/GTK into the image)
_DESKTOP_LIBS = frozenset(
    {"libawt_xawt.so", "libatk-wrapper.so", "libsplashscreen.so", "libjawt.so", "libjsound.so"}
)
_SKIP_JDK = frozenset({"src.zip", "ct.sym"})
_SHELL_TOOLS = ("sh", "sleep", "mkdir", "cat", "ls")
_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x")


class ImageBuildError(RuntimeError):
    """An image could not be built (the message carries the builder's last output)."""


@dataclass(frozen=True)
class Image:
    """An image the backend runs: its tag, id and (when the engine reports one) digest."""

    tag: str
    id: str
    digest: str | None
    built: bool  # built by this call (False: an up-to-date image was reused)


def kafka_tag(version: str) -> str:
    return f"{KAFKA_REPOSITORY}:{version}"


# --------------------------------------------------------------------------------------------
# build contexts: (path in the context, source file or bytes, mode)


@dataclass(frozen=True)
class _Entry:
    path: str  # inside the context, POSIX
    source: Path | bytes | None  # a file to copy, the content, or None (directory or link)
    mode: int = 0o644
    link: str | None = None  # symbolic link target


def _java_home() -> Path:
    return Path(os.path.realpath(jvm.java_executable())).parent.parent


def _ldd(paths: Iterable[Path]) -> set[Path]:
    deps: set[Path] = set()
    for p in paths:
        proc = subprocess.run(["ldd", str(p)], capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            m = _LDD_PATH.search(line)
            if m:
                deps.add(Path(m.group(1)))
    return deps


def _jre_entries() -> list[_Entry]:
    home = _java_home()
    entries: list[_Entry] = [
        _Entry("rootfs/tmp", None, 0o1777),
        _Entry("rootfs/etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n"),
        _Entry("rootfs/etc/group", b"root:x:0:\n"),
        _Entry("rootfs/root", None, 0o700),
        _Entry("rootfs/lib", None, link="usr/lib"),
        _Entry("rootfs/lib64", None, link="usr/lib64"),
    ]
    native: list[Path] = []
    for part in ("bin", "conf", "lib", "release"):
        top = home / part
        files = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for f in files:
            if f.name in _SKIP_JDK or f.name in _DESKTOP_LIBS or not f.exists():
                continue
            rel = f.relative_to(home).as_posix()
            entries.append(_Entry(f"rootfs{JAVA_HOME_IN_IMAGE}/{rel}", f, _mode(f)))
            if f.suffix == ".so" or f.parent.name == "bin":
                native.append(f)
    busybox = Path("/bin/busybox")
    if busybox.is_file() and "statically linked" in _file_kind(busybox):
        entries.append(_Entry("rootfs/bin/busybox", busybox, 0o755))
        entries += [_Entry(f"rootfs/bin/{t}", None, link="busybox") for t in _SHELL_TOOLS]
    else:  # the host's tools and their libraries
        for tool in _SHELL_TOOLS:
            found = shutil.which(tool)
            if found is None:
                raise ImageBuildError(
                    f"no {tool} on this machine for the image's shell (install busybox-static)"
                )
            real = Path(os.path.realpath(found))
            entries.append(_Entry(f"rootfs/bin/{tool}", real, 0o755))
            native.append(real)
    entries += _library_entries(native, home)
    return entries


def _library_entries(binaries: Iterable[Path], skip_under: Path | None = None) -> list[_Entry]:
    """The shared libraries ``binaries`` load (``ldd``), at their paths in the image (merged
    ``/usr``: ``/lib`` and ``/lib64`` are links to ``usr/lib`` and ``usr/lib64`` there)."""
    entries = []
    for lib in sorted(_ldd(binaries)):
        if skip_under is not None and str(lib).startswith(str(skip_under)):
            continue
        target = lib.as_posix()
        if not target.startswith("/usr/"):
            target = "/usr" + target
        entries.append(_Entry(f"rootfs{target}", Path(os.path.realpath(lib)), 0o755))
    return entries


def _jar_native_libraries(jars: Iterable[Path], into: Path) -> list[Path]:
    """Linux x86-64 JNI libraries inside ``jars`` (zstd-jni, snappy-java, lz4-java ...),
    extracted into ``into`` so ``ldd`` can name what they load."""
    out = []
    for jar in jars:
        try:
            with zipfile.ZipFile(jar) as z:
                for name in z.namelist():
                    low = name.lower()
                    if (
                        low.endswith(".so")
                        and "linux" in low
                        and ("amd64" in low or "x86_64" in low)
                    ):
                        target = into / jar.name / name
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(z.read(name))
                        out.append(target)
        except (OSError, zipfile.BadZipFile):
            continue
    return out


def _file_kind(path: Path) -> str:
    try:
        head = path.read_bytes()[:4096]
    except OSError:
        return ""
    # a static ELF has no PT_INTERP: no "ld-linux" loader path in its first page
    return "statically linked" if head[:4] == b"\x7fELF" and b"ld-linux" not in head else ""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode) | 0o444


def _digest(entries: list[_Entry], containerfile: str) -> str:
    h = hashlib.sha256(containerfile.encode())
    for e in sorted(entries, key=lambda e: e.path):
        h.update(f"\0{e.path}\0{e.mode:o}\0{e.link or ''}\0".encode())
        if isinstance(e.source, bytes):
            h.update(e.source)
        elif isinstance(e.source, Path):
            with open(e.source, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


def _write_context(path: Path, entries: list[_Entry], containerfile: str) -> None:
    with tarfile.open(path, "w") as tar:
        data = containerfile.encode()
        info = tarfile.TarInfo("Containerfile")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        dirs: set[str] = set()
        for e in sorted(entries, key=lambda e: e.path):
            parent = e.path.rsplit("/", 1)[0]
            chain = []
            while parent and parent not in dirs:
                chain.append(parent)
                dirs.add(parent)
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
            for d in reversed(chain):
                info = tarfile.TarInfo(d)
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            info = tarfile.TarInfo(e.path)
            info.mode = e.mode
            if e.link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, e.link
                tar.addfile(info)
            elif e.source is None:
                info.type = tarfile.DIRTYPE
                dirs.add(e.path)
                tar.addfile(info)
            elif isinstance(e.source, bytes):
                info.size = len(e.source)
                tar.addfile(info, io.BytesIO(e.source))
            else:
                info.size = e.source.stat().st_size
                with open(e.source, "rb") as f:
                    tar.addfile(info, f)


# --------------------------------------------------------------------------------------------
# building


def _existing(client: Any, tag: str, inputs: str) -> Any | None:
    import docker  # type: ignore[import-not-found]

    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None
    return image if (image.labels or {}).get(INPUTS_LABEL) == inputs else None


def _image(image: Any, tag: str, built: bool) -> Image:
    digests = image.attrs.get("RepoDigests") or []
    digest = image.attrs.get("Digest") or (digests[0].rsplit("@", 1)[-1] if digests else None)
    return Image(tag, image.id, digest, built)


def _build(
    client: Any, tag: str, entries: list[_Entry], containerfile: str, progress: Status
) -> Image:
    import docker  # type: ignore[import-not-found]

    inputs = _digest(entries, containerfile)
    found = _existing(client, tag, inputs)
    if found is not None:
        return _image(found, tag, built=False)
    try:
        previous = client.images.get(tag).id
    except docker.errors.ImageNotFound:
        previous = None
    progress(f"building image {tag} ({len(entries)} files)")
    with tempfile.TemporaryDirectory(prefix="kc-image-") as tmp:
        context = Path(tmp) / "context.tar"
        _write_context(context, entries, containerfile)
        with open(context, "rb") as f:
            try:
                image, _log = client.images.build(
                    fileobj=f,
                    custom_context=True,
                    dockerfile="Containerfile",
                    tag=tag,
                    labels={INPUTS_LABEL: inputs},
                    rm=True,
                    forcerm=True,
                    pull=False,
                )
            except docker.errors.BuildError as exc:
                lines = [str(c.get("stream") or c.get("error") or "") for c in exc.build_log]
                raise ImageBuildError(
                    f"building {tag} failed: {exc}\n" + "".join(lines)[-3000:]
                ) from exc
            except docker.errors.APIError as exc:
                raise ImageBuildError(f"building {tag} failed: {exc}") from exc
    image = client.images.get(tag)
    if (image.labels or {}).get(INPUTS_LABEL) != inputs:
        raise ImageBuildError(f"{tag} was built but does not carry its inputs label")
    if previous is not None and previous != image.id:
        try:  # the image this one replaces, unless something still uses it
            client.images.remove(previous)
        except docker.errors.APIError:
            pass
    return _image(image, tag, built=True)


def jre_image(client: Any, progress: Status = lambda m: None) -> Image:
    """``kafka-conformance/jre:<java.version>`` from this machine's JDK (built if needed)."""
    from conformance.capture.jvm import java_version

    containerfile = (
        "FROM scratch\n"
        "COPY rootfs/ /\n"
        f"ENV JAVA_HOME={JAVA_HOME_IN_IMAGE} PATH={JAVA_HOME_IN_IMAGE}/bin:/bin\n"
        'CMD ["java", "-version"]\n'
    )
    return _build(
        client, f"{JRE_REPOSITORY}:{java_version()}", _jre_entries(), containerfile, progress
    )


def kafka_image(client: Any, version: str, progress: Status = lambda m: None) -> Image:
    """``kafka-conformance/kafka:<version>``: the JRE image plus Kafka ``version``'s jars
    (resolved from Maven Central on first use, as for the jvm backend) and the start script."""
    base = jre_image(client, progress)
    jars = kafka_jars.classpath(version)
    entries = [_Entry(f"libs/{j.name}", j) for j in jars]
    entries.append(_Entry("kafka-start.sh", START_SCRIPT, 0o755))
    # what the jars' JNI libraries load beyond the JRE image (zstd-jni: libpthread.so.0)
    in_jre = {e.path for e in _jre_entries()}
    with tempfile.TemporaryDirectory(prefix="kc-jni-") as tmp:
        extra = [
            e
            for e in _library_entries(_jar_native_libraries(jars, Path(tmp)))
            if e.path not in in_jre
        ]
    entries += extra or [_Entry("rootfs/opt/kafka", None)]
    containerfile = (
        f"FROM {base.tag}\n"
        f"LABEL org.kafka-conformance.jre={base.id}\n"
        "COPY rootfs/ /\n"
        "COPY libs/ /opt/kafka/libs/\n"
        "COPY kafka-start.sh /opt/kafka/start.sh\n"
        "WORKDIR /opt/kafka\n"
        "EXPOSE 9092\n"
        'CMD ["/bin/sh", "/opt/kafka/start.sh"]\n'
    )
    return _build(client, kafka_tag(version), entries, containerfile, progress)
