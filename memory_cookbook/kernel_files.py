"""A file a notebook makes beside itself for its kernel: 07's memories.sqlite, 10's desk_memories.sqlite. Two kernels of
one notebook (its English and Chinese editions, or a second tab) would share the file: each begins by deleting it and
ends by deleting it, and meanwhile each sees the other's memories. So the kernel that makes the file names itself in a
marker (in a folder of this user's own under the temporary folder, not beside the notebooks); another kernel is refused
the file while that kernel is alive and the file is there, with what to do. Hand-written, tested in
tests/test_kernel_files.py."""

import getpass
import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

from filelock import FileLock

from memory_cookbook.processes import process_alive, this_process
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["FileInUse", "LEFT_BESIDE", "MarkerFolderNotOwn", "maker_of", "marker_folder", "marker_of",
           "new_file_for_this_kernel", "user_name"]

LEFT_BESIDE = ("-journal", "-wal", "-shm")  # what SQLite may leave beside a file, which it would roll into a new one


class FileInUse(ShownAsMessage, RuntimeError):
    """Another live kernel made this file and is using it."""


class MarkerFolderNotOwn(ShownAsMessage, RuntimeError):
    """The folder the markers go in is not this user's own: another user could read or replace what is written there."""


def user_name() -> str:
    """This user's name, or their id where the system names none (a container's user with no entry in /etc/passwd)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # pwd's KeyError, or getpass's OSError from Python 3.13 on
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def marker_folder() -> Path:
    """This user's folder for the markers, which only they may enter; one someone else made, or a link, is refused."""
    folder = Path(tempfile.gettempdir()) / f"memory_cookbook-kernel-files-{user_name()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    found = folder.lstat()
    if not stat.S_ISDIR(found.st_mode) or (hasattr(os, "getuid") and found.st_uid != os.getuid()):
        raise MarkerFolderNotOwn(f"{folder} is not a folder of this user's own: delete it (or set TMPDIR to a folder"
                                 " of your own), then run this cell again.")
    if os.name == "posix" and found.st_mode & 0o077:
        folder.chmod(0o700)  # this user's, but others could enter it (made before the cookbook set its mode)
    return folder


def marker_of(path: Path) -> Path:
    """Where the kernel that made `path` is named: one marker per file."""
    return marker_folder() / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24] + ".json")


def maker_of(marker: Path) -> tuple[int, float] | None:
    """The (pid, start time) the marker names; None for no marker, or one that names nothing (cut short, damaged)."""
    try:
        named = json.loads(marker.read_text())
        return int(named["pid"]), float(named["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def new_file_for_this_kernel(path: str | Path) -> Path:
    """`path`, made anew for this kernel: what an earlier run left there is deleted (a new store starts empty), an
    empty file is made in its place, and this kernel is named its maker. If another kernel that is still running made
    the file, and it is still there, FileInUse says so and nothing is touched."""
    path, me = Path(path), this_process()
    marker = marker_of(path)
    with FileLock(marker.with_suffix(".lock")):
        maker = maker_of(marker)
        if maker is not None and maker != me and process_alive(*maker) and path.exists():
            raise FileInUse(
                f"{path} is in use by another kernel (pid {maker[0]}): this notebook's other edition (English or"
                " Chinese), or the same notebook in a second tab. Two kernels sharing it would see each other's"
                " memories and delete each other's file. Shut that kernel down (Kernel → Shut Down Kernel) or run its"
                " last cell, which deletes the file; then run this cell again.")
        for leftover in (path, *(path.with_name(path.name + ending) for ending in LEFT_BESIDE)):
            leftover.unlink(missing_ok=True)
        path.touch()  # there before the lock is let go: a kernel that comes next finds it, and its maker named
        written = marker.with_suffix(".partial")
        # "file" is for a person who opens the marker: the marker's name is a digest of the file's path
        written.write_text(json.dumps({"pid": me[0], "started": me[1], "file": str(path.resolve())}))
        os.replace(written, marker)
    return path
