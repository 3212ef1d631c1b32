"""A file a notebook makes beside itself for its kernel: 07's memories.sqlite, 10's desk_memories.sqlite. Two kernels of
one notebook (its English and Chinese editions, or a second tab) would share the file: each begins by deleting it and
ends by deleting it, and meanwhile each sees the other's memories. So the kernel that makes the file names itself in a
marker (in the temporary folder, not beside the notebooks); another kernel is refused the file while that kernel is
alive and the file is there, with what to do. Hand-written, tested in tests/test_kernel_files.py."""

import getpass
import hashlib
import json
import tempfile
from pathlib import Path

from filelock import FileLock

from memory_cookbook.processes import process_alive, this_process
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["FileInUse", "maker_of", "marker_of", "new_file_for_this_kernel"]


class FileInUse(ShownAsMessage, RuntimeError):
    """Another live kernel made this file and is using it."""


def marker_of(path: Path) -> Path:
    """Where the kernel that made `path` is named: one marker per file, per user."""
    folder = Path(tempfile.gettempdir()) / f"memory_cookbook-kernel-files-{getpass.getuser()}"
    folder.mkdir(exist_ok=True)
    return folder / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24] + ".json")


def maker_of(marker: Path) -> tuple[int, float] | None:
    """The (pid, start time) the marker names; None for no marker, or one that names nothing (cut short, damaged)."""
    try:
        named = json.loads(marker.read_text())
        return int(named["pid"]), float(named["started"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def new_file_for_this_kernel(path: str | Path) -> Path:
    """`path`, made free for this kernel: a file an earlier run left there is deleted (a new store starts empty), and
    this kernel is named its maker. If another kernel that is still running made the file, and it is still there,
    FileInUse says so and nothing is touched."""
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
        path.unlink(missing_ok=True)
        marker.write_text(json.dumps({"pid": me[0], "started": me[1], "file": str(path.resolve())}))
    return path
