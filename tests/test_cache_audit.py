"""A fresh, offline run of every notebook: it uses all 32 recorded calls and no other, leaves json_cache.json as it
was, and reproduces the committed outputs (the second run beside nbval's, so two runs agree)."""

import configparser
import json
import re

import nbformat
import pytest
from conftest import CACHE_FILE, ROOT
from run_notebooks import NOTEBOOK_PATHS, cache_keys, executed_with_calls


@pytest.fixture(scope="module")
def offline_run():
    """{notebook name: (executed notebook, calls)} from a fresh offline run, and the cache's bytes before it."""
    before = CACHE_FILE.read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TYPESAFE_API_KEY", raising=False)
        patch.delenv("COOKBOOK_CACHE", raising=False)
        runs = {path.name: executed_with_calls(path) for path in NOTEBOOK_PATHS}
    return runs, before


def test_notebooks_use_every_recorded_call_and_no_other(offline_run):
    runs, before = offline_run
    recorded = set(json.loads(before))
    used = cache_keys([call for _, calls in runs.values() for call in calls])
    assert used - recorded == set(), "calls the cache does not hold"
    assert recorded - used == set(), "recorded calls no notebook makes"
    assert len(used) == 32


def test_only_notebook_01_makes_no_call(offline_run):
    runs, _ = offline_run
    assert [name for name, (_, calls) in runs.items() if not calls] == ["01_tickets.ipynb"]


def test_running_the_notebooks_leaves_the_cache_byte_identical(offline_run):
    _, before = offline_run
    assert CACHE_FILE.read_bytes() == before


def sanitized_outputs(notebook):
    """Each code cell's outputs as text, with tests/sanitize.cfg applied and images left out (as nbval does)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "sanitize.cfg")
    patterns = [(config[section]["regex"], config[section]["replace"]) for section in config.sections()]
    cells = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            outputs = [{key: value for key, value in output.get("data", {}).items() if not key.startswith("image/")}
                       | {"text": output.get("text", "")} for output in cell.outputs]
            text = json.dumps(outputs, sort_keys=True)
            for regex, replace in patterns:
                text = re.sub(regex, replace, text)
            cells.append(text)
    return cells


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=lambda path: path.name)
def test_a_second_run_reproduces_the_committed_outputs(offline_run, path):
    runs, _ = offline_run
    assert sanitized_outputs(runs[path.name][0]) == sanitized_outputs(nbformat.read(path, as_version=4))
