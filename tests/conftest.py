"""Shared test helpers: where things are, and the cache key as cooksafe itself computes it."""

import json
import tempfile
from pathlib import Path

import pytest
from cooksafe import JsonCache

ROOT = Path(__file__).resolve().parent.parent
CACHE_FILE = ROOT / "json_cache.json"
NOTEBOOK_PATHS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def cache_keys(calls):
    """The keys cooksafe.JsonCache files these (model, state_json, questions_json) calls under, via JsonCache itself."""
    with tempfile.TemporaryDirectory() as folder:
        cache = JsonCache(Path(folder) / "keys.json")

        @cache
        def _system_one(model, state_json, questions_json):
            return None

        for call in calls:
            _system_one(*call)
        return set(json.loads((Path(folder) / "keys.json").read_text())) if calls else set()


@pytest.fixture
def memory(monkeypatch):
    """basic_memory with empty memories and call log, offline; restored afterwards."""
    import basic_memory

    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    monkeypatch.setattr(basic_memory, "MEMORIES", type(basic_memory.MEMORIES)(list))
    monkeypatch.setattr(basic_memory, "CALLS", [])
    return basic_memory
