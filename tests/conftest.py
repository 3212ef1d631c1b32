"""Shared test helpers: where things are, a fresh copy of the module, and the offline fixture."""

import importlib.util
import itertools
import shutil
import sys
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
