"""memory_cookbook/postgres/server.py: the kernel's own server touches nothing else. It refuses a folder holding other
files (and leaves them), never removes a folder it did not create, refuses a folder where another live process's server
runs (and leaves that server running), and keeps the data of a server whose owner, or which itself, was killed. A copy
of a running server's folder is refused untouched, and stopping it stops nothing; a process may open again the folder
of the server it runs."""

import json
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import psutil
import psycopg
import pytest

from memory_cookbook.postgres import server as postgres_server
from memory_cookbook.postgres.server import (MARKER, EmbeddedServer, ServerFolderError, ServerTakenOver,
                                             memory_database, stop_server_in)


@pytest.fixture(autouse=True)
def no_database_url(monkeypatch):
    monkeypatch.delenv(postgres_server.DATABASE_URL_VARIABLE, raising=False)


def test_a_folder_holding_other_files_is_refused_and_left_as_it_was(tmp_path):
    (tmp_path / "my_notes").mkdir()
    (tmp_path / "my_notes" / "keep.txt").write_text("a reader's notes")
    with pytest.raises(ServerFolderError, match="holds files that are not a memory_cookbook server's"):
        memory_database(tmp_path / "my_notes")
    assert [path.name for path in (tmp_path / "my_notes").iterdir()] == ["keep.txt"]


def test_a_file_is_refused_as_a_server_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("kept")
    with pytest.raises(ServerFolderError, match="is a file"):
        memory_database(tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_text() == "kept"


def owned_by(folder, pid, started):
    marker = json.loads((folder / MARKER).read_text())
    (folder / MARKER).write_text(json.dumps({**marker, "owner_pid": pid, "owner_started": started}))


@pytest.fixture
def readable_folder():
    """A temporary folder the server's user can reach (as root it runs as another user, who cannot enter pytest's)."""
    folder = Path(tempfile.mkdtemp(prefix="cookbook-server-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def rows_kept(server):
    with psycopg.connect(server.url) as db:
        return db.execute("SELECT note FROM kept").fetchall()


@pytest.mark.slow
def test_another_live_owners_server_is_refused_and_a_killed_one_keeps_its_data(readable_folder):
    """One folder, made by the test (so not the server's to remove): a server starts in it and holds a row; marked as
    another live process's, it is refused and keeps running; marked as a killed process's, this process takes it over
    with its row; killed itself (-9), it is started again on its files, the row still there."""
    folder = readable_folder / "postgres_data"
    folder.mkdir()
    first = EmbeddedServer(folder)
    try:
        with psycopg.connect(first.url, autocommit=True) as db:
            db.execute("CREATE TABLE kept AS SELECT 'a memory' AS note")
        parent = psutil.Process().parent()
        owned_by(folder, parent.pid, parent.create_time())  # a live process that is not this one
        with pytest.raises(ServerFolderError, match=f"another live process \\(pid {parent.pid}"):
            EmbeddedServer(folder)
        assert first.running()
        killed = subprocess.Popen([sys.executable, "-c", "pass"])
        killed_started = psutil.Process(killed.pid).create_time()
        killed.wait()
        owned_by(folder, killed.pid, killed_started)
        postmaster = psutil.Process(int((folder / "postmaster.pid").read_text().split()[0]))
        with pytest.warns(ServerTakenOver, match=f"a kernel that stopped without stopping it \\(pid {killed.pid}\\)"):
            second = EmbeddedServer(folder)
        assert second.running() and rows_kept(second) == [("a memory",)]
        assert (folder / "postmaster.pid").read_text().split()[0] == str(postmaster.pid)  # the same server
        postmaster.kill()
        postmaster.wait(timeout=10)
        with pytest.warns(ServerTakenOver, match="this kernel's server, which had stopped"):
            third = EmbeddedServer(folder)
        assert third.running() and rows_kept(third) == [("a memory",)]
        third.stop()
    finally:
        postgres_server.stop_server_in(folder)
    assert folder.is_dir() and list(folder.iterdir()) == []  # emptied, not removed: the test made it


@pytest.mark.slow
def test_a_copy_of_a_running_servers_folder_is_refused_untouched_and_its_stop_stops_nothing(postgres_server,
                                                                                          readable_folder):
    """As a kernel that copies its running folder A to B, then opens B: B's files name A's server (postmaster.pid)
    and this kernel (the marker). The same after that kernel is gone."""
    copy = readable_folder / "copy"
    copy.mkdir()
    for name in ("PG_VERSION", "postmaster.pid", MARKER):
        shutil.copyfile(postgres_server.folder / name, copy / name)
    before = {path.name: path.read_bytes() for path in copy.iterdir()}
    postmaster = (postgres_server.folder / "postmaster.pid").read_text().split()[0]
    for owner in [None, (1, 0.0)]:  # this kernel (it started A); a kernel that is gone
        if owner:
            owned_by(copy, *owner)
            before[MARKER] = (copy / MARKER).read_bytes()
        with pytest.raises(ServerFolderError, match=f"a copy of the folder of a running PostgreSQL server,"
                                                    f" {postgres_server.folder} \\(pid {postmaster}\\)"):
            memory_database(copy)
        stop_server_in(copy)
        assert postgres_server.running() and {path.name: path.read_bytes() for path in copy.iterdir()} == before


@pytest.mark.slow
def test_a_process_is_not_refused_the_folder_of_the_server_it_runs_itself(postgres_server):
    again = EmbeddedServer.__new__(EmbeddedServer)  # claiming the folder again, as EmbeddedServer() does first
    again.folder = postgres_server.folder
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nor warned that it takes it over
        assert again.claim()[1] is True  # its server's data kept
    assert postgres_server.running()
