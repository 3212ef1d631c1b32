"""Running every notebook uses all 32 recorded calls, makes no other call, and leaves json_cache.json as it was."""

import json

import nbformat
import pytest
from conftest import CACHE_FILE, NOTEBOOK_PATHS, cache_keys
from run_notebooks import execute

# Appended to each notebook: print every call the kernel's ask() made, from the notebook's own CALLS (notebook 02
# defines ask itself) and from the module's.
REPORT_CALLS = """\
import json as _json, basic_memory as _module
_logs = {id(log): log for log in (globals().get("CALLS", []), _module.CALLS)}
print(_json.dumps([call for log in _logs.values() for call in log]))"""


@pytest.fixture(scope="module")
def notebook_calls(monkeypatch_module):
    """{notebook name: [(model, state_json, questions_json), ...]} from a fresh run of every notebook, offline."""
    calls = {}
    for path in NOTEBOOK_PATHS:
        notebook = nbformat.read(path, as_version=4)
        notebook.cells.append(nbformat.v4.new_code_cell(REPORT_CALLS))
        execute(notebook)
        calls[path.name] = [tuple(call) for call in json.loads(notebook.cells[-1].outputs[0]["text"])]
    return calls


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TYPESAFE_API_KEY", raising=False)
        patch.delenv("COOKBOOK_CACHE", raising=False)
        yield patch


@pytest.fixture(scope="module")
def cache_before():
    return CACHE_FILE.read_bytes()


def test_notebooks_use_every_recorded_call_and_no_other(cache_before, notebook_calls):
    recorded = set(json.loads(cache_before))
    used = cache_keys([call for calls in notebook_calls.values() for call in calls])
    assert used - recorded == set(), "calls the cache does not hold"
    assert recorded - used == set(), "recorded calls no notebook makes"
    assert len(used) == 32


def test_every_routing_and_gate_notebook_makes_calls(notebook_calls):
    assert notebook_calls["01_tickets.ipynb"] == []
    assert all(notebook_calls[name] for name in list(notebook_calls)[1:])


def test_running_the_notebooks_leaves_the_cache_byte_identical(cache_before, notebook_calls):
    assert CACHE_FILE.read_bytes() == cache_before
