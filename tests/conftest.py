"""Shared test helpers: where things are, a fresh copy of the module, and the offline fixture."""

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHE_FILE = ROOT / "json_cache.json"
MODULE_FILE = ROOT / "notebooks" / "basic_memory.py"
# A recognisable fake key: no test may find it anywhere the cookbook writes or says.
CANARY_KEY = "tsk-canary-7f3a9c1e-do-not-leak"


def fresh_module(name="basic_memory_fresh"):
    """A new instance of basic_memory, reading the environment as it is now (COOKBOOK_CACHE, the key)."""
    spec = importlib.util.spec_from_file_location(name, MODULE_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


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

    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    monkeypatch.setattr(basic_memory, "MEMORIES", type(basic_memory.MEMORIES)(list))
    monkeypatch.setattr(basic_memory, "STORE", basic_memory.DictStore())
    for log in ("CALLS", "LIVE_CALLS", "LEDGER"):
        monkeypatch.setattr(basic_memory, log, [])
    return basic_memory
