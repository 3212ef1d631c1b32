"""What every pytest run of this project does first, whichever paths it is given (pytest.ini loads it with -p, so a
lone `pytest notebooks/05_probe_sequence.ipynb` gets it too, though it never reads tests/conftest.py):

- a developer's live settings (key, endpoint, another cache) are set aside for the session: nbval's kernels start
  later and inherit this environment, so a miss in nbval's run would otherwise go live and be recorded into the
  committed cache, and another cache would change what 02 prints (tests set their own with conftest.configure());
- the databases notebooks 07 and 10 write beside the notebooks during nbval's run are removed when the session ends,
  even one stopped early (-x, Ctrl-C) before the notebook's last cell deletes them, and so are notebooks 09's and 10's
  PostgreSQL servers (stopped, their folders removed); COOKBOOK_DATABASE_URL (and 09's other settings) is set aside
  too, so that 09 and 10 start their own servers, as committed;
- the session's imports, kernels and subprocesses write no __pycache__ (only this plugin's own packages,
  memory_cookbook/__pycache__ and tools/cookbook_tools/__pycache__, ignored by git, are written before the plugin
  runs, unless PYTHONDONTWRITEBYTECODE is set);
- nbval runs the English notebooks only: a Chinese twin (NN_name.zh.ipynb) is the English code and outputs, written
  by scripts/sync_chinese.py (tests/test_chinese_edition.py runs its check), so the English run already reproduces
  its outputs; a twin named on the command line is still run, its kernel started with JPY_SESSION_NAME naming it, as
  JupyterLab's server does, so that the cookbook prints its Chinese labels there as in JupyterLab;
- notebook cells are marked slow before `-m` deselects, whichever paths are given (a kernel per notebook);
- nbval compares an output that is JSON (notebook 10's memory card carries its data so) as its text, with
  tests/sanitize.cfg applied as to any text: nbval itself masks strings only, so a time the store's clock wrote would
  fail the comparison there and pass it in the card's text and HTML;
- tests marked `network` (the classroom kit's check, which downloads wheels) are skipped unless --run-network is
  given: a plain `pytest` passes with no network at all, and the README's test command asks for them; tests marked
  `scale` (a million memories) only with --run-scale;
- a run of a folder (or of none named: pytest.ini's testpaths, the whole suite) is spread over two pytest-xdist
  workers, one per core, each file's tests in one worker and in order (nbval's cells of a notebook share its kernel),
  unless the command line chooses (-n, --dist, -p no:xdist) or needs one process (--pdb, --trace, -s,
  --collect-only); files or tests named alone run in this process, with no worker to start. Only this process
  (xdist's controller, which outlives the workers) removes the notebooks' databases and servers at the end.
"""

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cookbook_tools.paths import NOTEBOOKS
from memory_cookbook.locations import NOTEBOOK_NAME_VARIABLE

sys.dont_write_bytecode = True  # from the start: pytest rewrites and caches conftest.py and the test modules on import
# TYPESAFE_BASE_URL: typesafe-sdk's own name for the endpoint, read when TYPESAFE_ENDPOINT is not set.
LIVE_SETTINGS = ("TYPESAFE_API_KEY", "TYPESAFE_ENDPOINT", "TYPESAFE_BASE_URL", "COOKBOOK_CACHE",
                 "COOKBOOK_DATABASE_URL", "COOKBOOK_APP_DATABASE_URL", "COOKBOOK_LESSON_SCHEMA")
NOTEBOOK_07_DATABASE = NOTEBOOKS / "memories.sqlite"  # 07's DB_PATH, relative to the kernel's folder
NOTEBOOK_09_SERVER = NOTEBOOKS / "postgres_data"  # 09's SERVER_FOLDER
NOTEBOOK_10_DATABASE = NOTEBOOKS / "desk_memories.sqlite"  # 10's DB_PATH
NOTEBOOK_10_SERVER = NOTEBOOKS / "desk_postgres_data"  # 10's SERVER_FOLDER
SERVERS = (NOTEBOOK_09_SERVER, NOTEBOOK_10_SERVER)
DATABASES_BEFORE = set()  # the session removes only what it wrote
SET_ASIDE = {}  # a developer's live settings, restored when the session ends


RUN_NETWORK, RUN_SCALE = "--run-network", "--run-scale"
WORKERS = 2  # one per core of the machine the suite's budgets are set on (docs/maintaining.md)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(RUN_NETWORK, action="store_true",
                     help="also run the tests marked network (the classroom kit's download and offline install)")
    parser.addoption(RUN_SCALE, action="store_true",
                     help="also run the tests marked scale (a million memories in PostgreSQL: minutes, GBs of disk)")


def network_asked(config: pytest.Config) -> bool:
    return config.getoption(RUN_NETWORK)


def is_worker(config: pytest.Config) -> bool:
    """Whether this process is one of xdist's workers (the controller, or a run without xdist, is not)."""
    return hasattr(config, "workerinput")


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Any:
    """Before xdist reads its options: two workers, a file each at a time, when the run may collect many files."""
    if spread_over_workers(config):
        config.option.numprocesses, config.option.dist = min(WORKERS, os.cpu_count() or 1), "loadfile"
        config.option.loadscopereorder = False  # in the order tests/conftest.py sorted them, longest first
    return (yield)


def spread_over_workers(config: pytest.Config) -> bool:
    option = config.option
    if (is_worker(config) or not config.pluginmanager.has_plugin("xdist") or (os.cpu_count() or 1) < 2
            or option.numprocesses is not None or option.dist != "no" or option.tx
            or option.collectonly or option.usepdb or option.trace or option.capture == "no"):
        return False
    return any((config.invocation_params.dir / arg.split("::")[0]).is_dir() for arg in config.args)


def sanitizing_json_too(sanitize: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """nbval's IPyNbCell.sanitize, which masks strings only, extended to a JSON output (a dict or a list): its text,
    keys sorted, masked by the same patterns."""
    def sanitized(cell: Any, value: Any) -> Any:
        return sanitize(cell, json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value)
    sanitized.__wrapped__ = sanitize  # type: ignore[attr-defined]
    return sanitized


def pytest_configure() -> None:
    from nbval.plugin import IPyNbCell

    if not hasattr(IPyNbCell.sanitize, "__wrapped__"):
        IPyNbCell.sanitize = sanitizing_json_too(IPyNbCell.sanitize)  # type: ignore[method-assign]
    DATABASES_BEFORE.update(path for path in database_files() if path.exists())
    for name in LIVE_SETTINGS:
        if name in os.environ:
            SET_ASIDE[name] = os.environ.pop(name)
    SET_ASIDE.setdefault("PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"))
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.name.endswith(".zh.ipynb") and collection_path not in named_paths(config):
        return True
    return None


def named_paths(config: pytest.Config) -> set[Path]:
    """The paths given on the command line, as absolute paths (without ::test parts)."""
    return {(config.invocation_params.dir / arg.split("::")[0]).resolve() for arg in config.args}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    offline = pytest.mark.skip(reason=f"needs the network: run pytest with {RUN_NETWORK}")
    small = pytest.mark.skip(reason=f"a desk's size, minutes: run pytest with {RUN_SCALE}")
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
        if "network" in item.keywords and not network_asked(config):
            item.add_marker(offline)
        if "scale" in item.keywords and not config.getoption(RUN_SCALE):
            item.add_marker(small)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """A notebook's kernel starts (nbval starts it as its first cell is set up) knowing which notebook it runs, as in
    JupyterLab: memory_cookbook.classroom.folded reads JPY_SESSION_NAME, which the kernel copies from this process as
    it starts, and prints Chinese labels for a .zh.ipynb twin only."""
    if item.path.suffix != ".ipynb":
        return (yield)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(NOTEBOOK_NAME_VARIABLE, str(item.path))
        return (yield)


def pytest_unconfigure() -> None:
    for name, value in SET_ASIDE.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    SET_ASIDE.clear()


def database_files() -> list[Path]:
    return [*(file for database in (NOTEBOOK_07_DATABASE, NOTEBOOK_10_DATABASE)
              for file in (database, database.with_name(database.name + "-journal"))), *SERVERS]


def pytest_sessionfinish(session: pytest.Session) -> None:
    if is_worker(session.config):  # another worker may still be running the notebook: xdist's controller removes them
        return
    for path in database_files():
        if path.exists() and path not in DATABASES_BEFORE:  # (importing the server's module takes a moment)
            if path in SERVERS:
                from memory_cookbook.postgres.server import stop_server_in
                stop_server_in(path)
            else:
                path.unlink(missing_ok=True)
