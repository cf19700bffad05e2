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

from conformance.host.postgres import PostgresError, PostgresServer, binaries, postgres_server

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


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands the server to another user")
def test_programs_out_of_the_servers_reach_run_from_a_copy(tmp_path: Path) -> None:
    # a checkout inside a directory only root may enter (a mkdtemp clone): nobody, who runs
    # the server, cannot reach the unpacked programs there
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    hidden = binaries(ROOT).copied_to(private / "postgres")
    with PostgresServer(hidden, database=None) as server:
        assert server.programs.bin_dir != hidden.bin_dir
        copy = server.programs.root
        assert copy is not None and server.workdir in copy.parents
        out = server.psql("postgres", "--tuples-only", "--command", "SELECT 6 * 7")
        assert out.strip() == "42"
    assert copy is not None and not copy.exists()
    assert server.programs == hidden
