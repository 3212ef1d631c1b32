"""Shared test helpers: where things are, a fresh copy of the module, and the offline fixture."""

import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from jevcompat.mock import MockConfig, Running
from run_notebooks import NOTEBOOK_PATHS, executed_as_readers_do

ROOT = Path(__file__).resolve().parent.parent
CACHE_FILE = ROOT / "json_cache.json"
MODULE_FILE = ROOT / "notebooks" / "basic_memory.py"
# A recognisable fake key: no test may find it anywhere the cookbook writes or says.
CANARY_KEY = "tsk-canary-7f3a9c1e-do-not-leak"
FRESH_COUNT = itertools.count()


def fresh_module():
    """A new instance of basic_memory over a new instance of replay, both reading the environment as it is now
    (COOKBOOK_CACHE, the key)."""
    replay = load(f"replay_fresh_{next(FRESH_COUNT)}", MODULE_FILE.with_name("replay.py"))
    return replay.fresh_lesson_module()


def load(name, path):
    """Execute the module file at `path` as a new module called `name`, kept in sys.modules (replay finds itself
    there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def configured_module(monkeypatch, cache_path, key=None, endpoint=None):
    """A fresh basic_memory with COOKBOOK_CACHE, TYPESAFE_API_KEY and TYPESAFE_ENDPOINT set (or unset) as given."""
    for name, value in {"COOKBOOK_CACHE": cache_path, "TYPESAFE_API_KEY": key, "TYPESAFE_ENDPOINT": endpoint}.items():
        if value:
            monkeypatch.setenv(name, str(value))
        else:
            monkeypatch.delenv(name, raising=False)
    return fresh_module()


def requests_served(server):
    """How many requests a jevcompat fake server has answered."""
    return server.server.RequestHandlerClass.cfg.requests


def run_earlier_tickets(module):
    """The five earlier tickets through the wrapper, in order, as the published run sends them."""
    for ticket in module.EARLIER:
        module.ask_with_memory(module.ticket_state(ticket), module.ROUTE)


@pytest.fixture
def cache_copy(tmp_path):
    """A copy of the committed cache in a temporary folder."""
    copy = tmp_path / "json_cache.json"
    shutil.copyfile(CACHE_FILE, copy)
    return copy


@pytest.fixture
def memory(monkeypatch):
    """basic_memory with empty memories and call log, offline; restored afterwards."""
    import basic_memory
    import replay

    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    monkeypatch.setattr(replay, "LIVE_CALLS", [])
    monkeypatch.setattr(basic_memory, "MEMORIES", type(basic_memory.MEMORIES)(list))
    monkeypatch.setattr(basic_memory, "STORE", basic_memory.DictStore())
    for log in ("CALLS", "LEDGER"):
        monkeypatch.setattr(basic_memory, log, [])
    return basic_memory


@pytest.fixture
def jev_server():
    """jevcompat's fake Jev-compatible server on 127.0.0.1, requiring the canary key; stopped afterwards."""
    with Running(MockConfig(key=CANARY_KEY)) as server:
        yield server


@pytest.fixture(scope="session")
def second_run():
    """Every notebook run again beside nbval's run, the way readers do (each code cell twice in a row, then Run All
    again, in one kernel), with the canary key set and jevcompat's fake Jev on 127.0.0.1 as the endpoint: any call the
    cache lacked would reach the fake server (counted) instead of failing, so the audit sees it, and the key leak scan
    reads outputs made with a key. The committed cache is put back if the run changed it."""
    before = CACHE_FILE.read_bytes()
    with Running(MockConfig(key=CANARY_KEY)) as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("TYPESAFE_API_KEY", CANARY_KEY)
        patch.setenv("TYPESAFE_ENDPOINT", server.url)
        patch.delenv("COOKBOOK_CACHE", raising=False)
        try:
            runs = {path.name: executed_as_readers_do(path) for path in NOTEBOOK_PATHS}
        finally:
            after = CACHE_FILE.read_bytes()
            CACHE_FILE.write_bytes(before)
        requests = requests_served(server)
    return SimpleNamespace(runs=runs, cache_before=before, cache_after=after, requests=requests)


# The classroom kit's end-to-end check (tests/test_classroom_kit.py) builds a kit, installs it into a fresh venv and
# runs a notebook from it: about 45 s, mostly waiting on pip and a kernel. It starts in the background as soon as the
# session's tests are chosen, and its test runs last, so that the rest of the suite runs meanwhile.
KIT_TEST = "test_kit_installs_offline_and_runs_a_notebook"
KIT_NOTEBOOK = "06_final_comparison.ipynb"


class KitInstall(threading.Thread):
    """Build a kit for this machine in a temporary folder, install it into a fresh .venv inside it as a student
    would (pip --no-index, with no pip configuration and no reachable proxy: nothing can come from elsewhere), then
    execute a notebook of the kit with that venv's jupyter. `steps` records each command's result."""

    def __init__(self):
        super().__init__(daemon=True)
        self.folder = Path(tempfile.mkdtemp(prefix="classroom_kit_"))
        self.kit, self.executed = self.folder / "kit", self.folder / "executed"
        self.steps = []

    def offline_environment(self):
        """A student's shell: no pip configuration, no Jupyter or Python settings of this machine, an empty home,
        no key, and any network attempt sent to a closed local port."""
        kept = {name: value for name, value in os.environ.items()
                if not name.startswith(("PIP_", "JUPYTER", "PYTHON", "VIRTUAL_ENV", "TYPESAFE_", "COOKBOOK_"))}
        closed = "http://127.0.0.1:9"
        return kept | {"PIP_CONFIG_FILE": os.devnull, "HOME": str(self.folder / "home"), "http_proxy": closed,
                       "https_proxy": closed, "HTTP_PROXY": closed, "HTTPS_PROXY": closed, "no_proxy": ""}

    def step(self, name, command, **options):
        started = time.monotonic()
        # At low priority: the rest of the suite, running meanwhile on the same cores, goes first.
        result = subprocess.run(["nice", "-n", "15", *command], capture_output=True, text=True, **options)
        self.steps.append(SimpleNamespace(name=name, command=command, returncode=result.returncode,
                                          output=(result.stdout + result.stderr)[-3000:],
                                          seconds=time.monotonic() - started))
        return result.returncode == 0

    def run(self):
        venv_bin = self.kit / ".venv" / "bin"
        offline = {"cwd": self.kit, "env": self.offline_environment()}
        (self.folder / "home").mkdir()
        self.step("build", [sys.executable, str(ROOT / "scripts" / "classroom_kit.py"), "--out", str(self.kit)]) \
            and self.step("venv", [sys.executable, "-m", "venv", ".venv"], **offline) \
            and self.step("install", [str(venv_bin / "pip"), "install", "--no-index", "--find-links", "wheels",
                                      "-r", "requirements.txt", "--no-compile", "--disable-pip-version-check"],
                          **offline) \
            and self.step("notebook", [str(venv_bin / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                                       KIT_NOTEBOOK, "--output-dir", str(self.executed)],
                          cwd=self.kit / "notebooks", env=offline["env"])

    def cleanup(self):
        self.join(timeout=600)
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.name == KIT_TEST)  # stable: only the kit's test moves, to the end


def pytest_collection_finish(session):
    if any(item.name == KIT_TEST for item in session.items) and not session.config.option.collectonly:
        session.config.kit_install = KitInstall()
        session.config.add_cleanup(session.config.kit_install.cleanup)
        session.config.kit_install.start()


@pytest.fixture(scope="session")
def kit_install(pytestconfig):
    """The classroom kit's background check (KitInstall), finished."""
    pytestconfig.kit_install.join(timeout=600)
    return pytestconfig.kit_install
