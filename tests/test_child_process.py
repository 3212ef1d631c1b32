"""An app server's stderr is read as it comes (memory_cookbook/postgres/child_process.py): a child that writes more
than a pipe holds never blocks on it, and its last words are there when it stops."""

import subprocess
import sys

from memory_cookbook.postgres.child_process import StderrReader

CHATTY = "import sys\nfor n in range(20000):\n    print(f'line {n}', file=sys.stderr)\nprint('done', flush=True)"


def test_a_child_writing_more_than_a_pipe_holds_to_stderr_finishes_and_its_last_lines_are_kept():
    child = subprocess.Popen([sys.executable, "-c", CHATTY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stderr = StderrReader(child.stderr, keep=3)
    try:
        # ~200 kB to stderr: with nobody reading the pipe (64 kB here) the child would block before it ends
        assert child.wait(timeout=20) == 0
    finally:
        child.kill()
    assert child.stdout.read() == "done\n"
    assert stderr.text() == "line 19997\nline 19998\nline 19999\n"
    child.stdout.close()
