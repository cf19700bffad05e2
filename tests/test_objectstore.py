"""The real S3-compatible object store of ``conformance.host.objectstore`` (versitygw, built
from the Go module proxy by scripts/fetch-s3-server into .cache/tools/), driven through
``pyarrow.fs`` as ``replay`` drives it: ranged reads, signature checks, missing buckets,
``s3://`` URIs with the key pair from the environment, and a stop that leaves nothing running.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from conformance.host import objectstore
from conformance.host.objectstore import ObjectStore, ObjectStoreError, object_store

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "segments"
KEY = "topic-0/00000000000000000000.log"
SIZE = 4 << 20


@pytest.fixture
def binary(s3_server_binary: Path) -> Path:
    return s3_server_binary


@pytest.fixture(autouse=True)
def _no_metadata(no_instance_metadata: None) -> None:
    """Every test here: no instance metadata lookups (conftest)."""


@pytest.fixture
def store(binary: Path, tmp_path: Path) -> Iterator[ObjectStore]:
    with object_store(binary, tmp_path) as s:
        yield s


def _fs(
    store: ObjectStore, secret: str | None = None, access: str | None = None
) -> pafs.FileSystem:
    return pafs.S3FileSystem(
        access_key=access or store.access_key,
        secret_key=secret or store.secret_key,
        endpoint_override=store.address,
        scheme="http",
        region="us-east-1",
        allow_bucket_creation=True,
    )


def _payload() -> bytes:
    return bytes((i * 7 + (i >> 10)) & 0xFF for i in range(SIZE))


def _put(store: ObjectStore, data: bytes) -> pafs.FileSystem:
    s3 = _fs(store)
    s3.create_dir(BUCKET)
    with s3.open_output_stream(f"{BUCKET}/{KEY}") as out:
        out.write(data)
    return s3


def _server_pids(marker: str) -> list[int]:
    """Live processes whose command line names ``marker``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read().decode("utf-8", "replace")
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                state = f.read().decode("ascii", "replace").rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return not os.path.exists(f"/proc/{pid}")
    return False


def test_whole_and_ranged_reads(store: ObjectStore) -> None:
    data = _payload()
    s3 = _put(store, data)
    assert (store.root / BUCKET / KEY).stat().st_size == SIZE  # the POSIX backend's file
    assert s3.get_file_info(f"{BUCKET}/{KEY}").size == SIZE
    with s3.open_input_stream(f"{BUCKET}/{KEY}") as f:
        assert f.read() == data

    before = len(store.requests())
    offset = 3 * SIZE // 4 + 123
    with s3.open_input_file(f"{BUCKET}/{KEY}") as f:
        assert f.read_at(1024, offset) == data[offset : offset + 1024]
    new = store.requests()[before:]
    gets = objectstore.split_gets(new, f"/{BUCKET}/{KEY}")
    assert len(gets.ranged) == 1, new
    assert gets.whole == (), new
    assert [r.method for r in new if r.path == f"/{BUCKET}/{KEY}"] == ["HEAD", "GET"], new

    # the readiness probe is the one GET without a Range header so far: the log tells it apart
    probe = store.gets(objectstore.HEALTH_PATH)
    assert probe.ranged == () and [r.status for r in probe.whole] == [200]


def test_wrong_secret_is_refused(store: ObjectStore) -> None:
    _put(store, b"x" * 1000)
    before = len(store.requests())
    bad = _fs(store, secret=store.secret_key + "-wrong")
    with pytest.raises(OSError, match="ACCESS_DENIED"):  # HEAD: a 403 without a body
        bad.get_file_info(f"{BUCKET}/{KEY}")
    with pytest.raises(OSError, match="signature"):  # GET: the error document says why
        bad.get_file_info(pafs.FileSelector(BUCKET))
    with pytest.raises(OSError, match="ACCESS_DENIED"):
        bad.open_input_file(f"{BUCKET}/{KEY}")
    refused = [(r.method, r.status) for r in store.requests()[before:]]
    assert refused == [("HEAD", 403), ("GET", 403), ("HEAD", 403)], store.requests()
    # an unknown access key: versitygw answers 404 XAdminUserNotFound (S3 says 403)
    unknown = _fs(store, access="nobody")
    with pytest.raises(OSError, match="No user exists with the provided access key"):
        unknown.get_file_info(pafs.FileSelector(BUCKET))


def test_missing_bucket_is_an_error(store: ObjectStore) -> None:
    s3 = _fs(store)
    assert s3.get_file_info("absent/key").type == pafs.FileType.NotFound
    with pytest.raises(FileNotFoundError):
        s3.open_input_file("absent/key")
    with pytest.raises(OSError, match="NoSuchBucket|NO_SUCH_BUCKET|does not exist"):
        s3.get_file_info(pafs.FileSelector("absent"))
    strict = pafs.S3FileSystem(
        access_key=store.access_key,
        secret_key=store.secret_key,
        endpoint_override=store.address,
        scheme="http",
        region="us-east-1",
    )
    with pytest.raises(OSError, match="NO_SUCH_BUCKET"):
        strict.open_output_stream("absent/key").close()
    assert [r.status for r in store.requests() if r.path.startswith("/absent")][:1] == [404]


def test_from_uri_with_credentials_from_the_environment(
    store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _payload()[:100_000]
    _put(store, data)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", store.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", store.secret_key)
    uris = [
        store.uri(f"{BUCKET}/{KEY}"),
        f"s3://{BUCKET}/{KEY}?endpoint_override={store.address}&scheme=http",
        f"s3://{BUCKET}/{KEY}?endpoint_override={store.endpoint}",
    ]
    for uri in uris:
        fs, path = pafs.FileSystem.from_uri(uri)
        assert path == f"{BUCKET}/{KEY}"
        with fs.open_input_file(path) as f:
            assert f.read_at(1000, 5000) == data[5000:6000], uri
    for name, value in store.client_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    fs, path = pafs.FileSystem.from_uri(store.uri(f"{BUCKET}/{KEY}"))
    with pytest.raises(OSError, match="ACCESS_DENIED"):
        fs.open_input_file(path)


def test_stopped_on_exit_exception_and_interrupt(binary: Path, tmp_path: Path) -> None:
    with object_store(binary, tmp_path / "a") as s:
        pid = s.pid
        assert _server_pids(str(tmp_path / "a")) == [pid]
    assert _gone(pid)

    with pytest.raises(RuntimeError, match="boom"), object_store(binary, tmp_path / "b") as s:
        pid = s.pid
        raise RuntimeError("boom")
    assert _gone(pid)

    with pytest.raises(KeyboardInterrupt), object_store(binary, tmp_path / "c") as s:
        pid = s.pid
        raise KeyboardInterrupt
    assert _gone(pid)
    assert _server_pids(str(tmp_path)) == []


def test_not_ready_in_time_is_an_error_and_stops_it(binary: Path, tmp_path: Path) -> None:
    with (
        pytest.raises(ObjectStoreError, match="did not answer") as err,
        object_store(binary, tmp_path, ready_timeout=0.0),
    ):
        pytest.fail("not ready, yet yielded")
    assert str(tmp_path / "versitygw.log") in str(err.value)
    assert _server_pids(str(tmp_path)) == []
