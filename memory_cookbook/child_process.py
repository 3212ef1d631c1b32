"""Plumbing for notebook 09's app servers, which are child processes: finding the lesson module by its file (the
runtime package never imports the lesson by name), and reading a child's stderr as it comes, so that a chatty child
never blocks on a full pipe and its last words are there when it stops."""

import collections
import importlib.util
import sys
import threading
from pathlib import Path

import memory_cookbook

LESSON_FILE_VARIABLE = "APP_SERVER_LESSON_FILE"
# Where the lesson module is in this repository (until memory_cookbook/locations.py says it).
DEFAULT_LESSON_FILE = Path(memory_cookbook.__file__).resolve().parents[1] / "notebooks" / "basic_memory.py"


def load_lesson(path):
    """The lesson module from its file, registered as sys.modules["basic_memory"] (so that what it imports from
    itself, and pickles of its objects, find it); the one already loaded if there is one."""
    if "basic_memory" in sys.modules:
        return sys.modules["basic_memory"]
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no lesson module at {path}: set {LESSON_FILE_VARIABLE} to notebooks/basic_memory.py")
    spec = importlib.util.spec_from_file_location("basic_memory", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["basic_memory"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["basic_memory"]
        raise
    return module


class StderrReader:
    """A thread that reads a process's stderr line by line as it comes, keeping the last `keep` lines."""

    def __init__(self, stream, keep=200):
        self.lines = collections.deque(maxlen=keep)
        self.thread = threading.Thread(target=self.read, args=(stream,), daemon=True)
        self.thread.start()

    def read(self, stream):
        for line in stream:
            self.lines.append(line)
        stream.close()

    def text(self, wait=5):
        """What the process wrote last; once it has exited, waits (at most `wait` s) for the end of the pipe."""
        self.thread.join(timeout=wait)
        return "".join(self.lines)
