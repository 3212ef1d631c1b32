"""Notebook 09's server folder rules (memory_cookbook/postgres/server.py), with no server started: a folder holding
this store's own kind of server is taken, not refused as foreign; a damaged marker file is noticed, and the folder is
refused, untouched; a server is stopped only by the process that owns it."""

import json
import os

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
                                    '{"owner_pid": "1", "owner_started": 0.0, "made_folder": true}'])
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
