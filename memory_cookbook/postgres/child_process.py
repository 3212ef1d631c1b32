"""Plumbing for notebook 09's app servers, which are child processes: a child's stderr read as it comes, so that a
chatty child never blocks on a full pipe and its last words are there when it stops."""

import collections
import threading
from typing import TextIO

__all__ = ["StderrReader"]

class StderrReader:
    """A thread that reads a process's stderr line by line as it comes, keeping the last `keep` lines."""

    def __init__(self, stream: TextIO, keep: int = 200) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=keep)
        self.thread = threading.Thread(target=self.read, args=(stream,), daemon=True)
        self.thread.start()

    def read(self, stream: TextIO) -> None:
        for line in stream:
            self.lines.append(line)
        stream.close()

    def text(self, wait: float = 5) -> str:
        """What the process wrote last; once it has exited, waits (at most `wait` s) for the end of the pipe."""
        self.thread.join(timeout=wait)
        return "".join(self.lines)
