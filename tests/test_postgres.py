"""``conformance.host.postgres``: a real PostgreSQL server (Debian's packages, unpacked by
``scripts/fetch-postgres``) for the length of a ``with`` block, the service ``check-broker``
starts for a broker target that ``needs = ["postgresql"]``.

It answers SQL on 127.0.0.1 at its URL, applies an init file to a database, and nothing of it
(no process, no directory) is left once the block ends, also when the block raises.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from conftest import wait_until_gone

from conformance.host.postgres import PostgresError, postgres_server

ROOT = Path(__file__).resolve().parents[1]


def test_a_server_answers_and_leaves_nothing(tmp_path: Path) -> None:
    init = tmp_path / "init.sql"
    init.write_text("CREATE TABLE t (k int PRIMARY KEY, v text); INSERT INTO t VALUES (7, 'x');\n")
    with postgres_server(ROOT, tmp_path) as server:
        assert server.url.startswith("postgres://") and "@127.0.0.1:" in server.url
        url = server.create_database("kc", [init])
        assert url.endswith("/kc")
        out = server.psql("kc", "--tuples-only", "--command", "SELECT v FROM t WHERE k = 7")
        assert out.strip() == "x"
        user = server.psql("kc", "--tuples-only", "--command", "SELECT current_user")
        assert user.strip() == "postgres"
        with socket.create_connection(("127.0.0.1", server.port), timeout=5):
            pass
        data_dir = server._dir
        pid = server.pid
        if os.geteuid() == 0:  # the server runs as nobody: postgres refuses root
            assert os.stat(f"/proc/{pid}").st_uid != 0
        with pytest.raises(PostgresError):
            server.psql("kc", "--command", "SELECT * FROM no_such_table")
    assert not data_dir.exists()
    assert not wait_until_gone((str(data_dir),), 10)
    assert (tmp_path / "postgres.log").is_file()


def test_an_error_in_the_block_still_stops_the_server(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="boom"), postgres_server(ROOT, tmp_path) as server:
        data_dir = server._dir
        raise RuntimeError("boom")
    assert not data_dir.exists()
    assert not wait_until_gone((str(data_dir),), 10)
