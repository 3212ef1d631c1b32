"""Which process owns something: a pid and its start time, since a pid alone could name a later process that got the
same number (after a reboot or a crash). The embedded server's folder and a kernel's files (kernel_files) use it.
Hand-written."""

import os

import psutil

__all__ = ["process_alive", "this_process"]


def this_process() -> tuple[int, float]:
    """(pid, start time) of this process."""
    return os.getpid(), psutil.Process().create_time()


def process_alive(pid: int, started: float) -> bool:
    """Whether the process `pid` that started at `started` is still running."""
    try:
        process = psutil.Process(pid)
        return process.create_time() == started and process.status() != psutil.STATUS_ZOMBIE  # a zombie has ended
    except psutil.Error:  # no such process, or one we may not look at
        return False
