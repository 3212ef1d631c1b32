"""Which process owns a server folder or a kernel's file (memory_cookbook/processes.py)."""

import subprocess
import sys
import time

import psutil

from memory_cookbook.processes import process_alive, this_process


def test_a_process_is_alive_while_it_runs_and_not_once_it_has_ended_even_before_it_is_reaped():
    assert process_alive(*this_process())
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline()"], stdin=subprocess.PIPE)
    started = psutil.Process(child.pid).create_time()
    try:
        assert process_alive(child.pid, started) and not process_alive(child.pid, started + 1)  # a reused pid
        child.stdin.close()  # it ends; not waited for, it stays a zombie
        deadline = time.monotonic() + 10
        while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not process_alive(child.pid, started)
    finally:
        child.wait()
    assert not process_alive(child.pid, started)
