"""A second run of every notebook (beside nbval's), as readers run them (each cell twice in a row, then Run All again
in the same kernel): it uses all 32 recorded calls and no other, leaves json_cache.json as it was, and reproduces the
committed outputs every time."""

import configparser
import json
import re

import nbformat
import pytest
from conftest import CACHE_FILE, ROOT
from run_notebooks import NOTEBOOK_PATHS, cache_keys


def test_notebooks_use_every_recorded_call_and_no_other(second_run):
    recorded = set(json.loads(second_run.cache_before))
    used = cache_keys([call for run in second_run.runs.values() for call in run.calls])
    assert second_run.requests == 0, "calls the cache does not hold went to the (fake) server"
    assert used - recorded == set(), "calls the cache does not hold"
    assert recorded - used == set(), "recorded calls no notebook makes"
    assert len(used) == 32


def test_only_notebook_01_makes_no_call(second_run):
    assert [name for name, run in second_run.runs.items() if not run.calls] == ["01_tickets.ipynb"]


def test_running_the_notebooks_leaves_the_cache_byte_identical(second_run):
    assert second_run.cache_after == second_run.cache_before == CACHE_FILE.read_bytes()


def coalesced_streams(outputs):
    """The outputs with consecutive pieces of one stream joined, as nbval joins them: a busy kernel may send one
    print's text in two messages."""
    joined = []
    for output in outputs:
        if output.get("output_type") == "stream" and joined and joined[-1].get("output_type") == "stream" \
                and joined[-1].get("name") == output.get("name"):
            joined[-1] = joined[-1] | {"text": joined[-1]["text"] + output["text"]}
        else:
            joined.append(output)
    return joined


def sanitized_outputs(notebook):
    """Each code cell's outputs as text, with tests/sanitize.cfg applied and images left out (as nbval does)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "sanitize.cfg")
    patterns = [(config[section]["regex"], config[section]["replace"]) for section in config.sections()]
    cells = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            outputs = [{key: value for key, value in output.get("data", {}).items() if not key.startswith("image/")}
                       | {"text": output.get("text", "")} for output in coalesced_streams(cell.outputs)]
            text = json.dumps(outputs, sort_keys=True)
            for regex, replace in patterns:
                text = re.sub(regex, replace, text)
            cells.append(text)
    return cells


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=lambda path: path.name)
def test_every_cell_run_twice_in_a_row_gives_the_committed_outputs(second_run, path):
    assert sanitized_outputs(second_run.runs[path.name].twice) == sanitized_outputs(nbformat.read(path, as_version=4))


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=lambda path: path.name)
def test_run_all_again_in_the_same_kernel_gives_the_committed_outputs(second_run, path):
    assert sanitized_outputs(second_run.runs[path.name].again) == sanitized_outputs(nbformat.read(path, as_version=4))
