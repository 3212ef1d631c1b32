"""The session's background work (the readers' run, mypy, the pages and the classroom kit's check) is done once a
session, by the process that starts it, and read by the tests wherever they run. A plain run does it in pytest's own
process. A run spread over xdist's workers does it in xdist's controller, which runs no test but outlives the workers:
the controller hands each outcome over in a file of a folder it made for the session, and a worker's test waits for
that file. (tests/conftest.py says what each piece of work is; this module only hands outcomes over.)"""

import pickle
import shutil
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FOLDER = "cookbook_handover"  # the folder's key in each worker's workerinput


def controller_folder(config: pytest.Config) -> Path:
    """The session's handover folder, made by xdist's controller on first use and removed when the session ends."""
    if getattr(config, "handover_folder", None) is None:
        # Not under pytest's temporary folder, which the workers' basetemp lives in: see conftest's postgres_server.
        folder = Path(tempfile.mkdtemp(prefix="cookbook-handover-"))
        config.handover_folder = folder  # type: ignore[attr-defined]
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    return config.handover_folder  # type: ignore[attr-defined]


def worker_folder(config: pytest.Config) -> Path | None:
    """In one of xdist's workers, the controller's handover folder; None in a run without workers."""
    workerinput = getattr(config, "workerinput", None)
    return Path(workerinput[FOLDER]) if workerinput and FOLDER in workerinput else None


def hand_over_when_done(folder: Path, name: str, wait: Callable[[], Any], outcome: Callable[[], Any]) -> None:
    """In xdist's controller: note now that `name` is under way (before any test is sent to a worker), then, in a
    thread, wait (`wait()` returns once it is done) and write `outcome()` to the folder whole (a temporary file
    renamed)."""
    (folder / f"{name}.started").touch()

    def write() -> None:
        wait()
        try:
            data = pickle.dumps(outcome())
        except BaseException:  # an error that cannot be pickled still reaches the test, as its traceback
            data = pickle.dumps(RuntimeError(f"{name}: {traceback.format_exc()}"))
        partial = folder / f"{name}.pickle.partial"
        partial.write_bytes(data)
        partial.replace(folder / f"{name}.pickle")

    threading.Thread(target=write, daemon=True, name=f"hand over {name}").start()


def handed_over(config: pytest.Config, name: str, timeout: float = 600) -> Any:
    """In one of xdist's workers, the outcome of the controller's `name`, once written (an exception written in its
    place is raised here); None in a run without workers, or when the controller does not do `name` (the test then
    does it itself)."""
    folder = worker_folder(config)
    if folder is None or not (folder / f"{name}.started").exists():
        return None
    result, deadline = folder / f"{name}.pickle", time.monotonic() + timeout
    while not result.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"{name} did not finish within {timeout} s")
        time.sleep(0.05)
    outcome = pickle.loads(result.read_bytes())
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome
