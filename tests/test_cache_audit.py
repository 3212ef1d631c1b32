"""The readers' run of every notebook (beside nbval's; each cell twice in a row, then Run All again in the same kernel,
in a copy of the repository): it uses all 32 recorded calls and no other, leaves the cache as it was, and reproduces
the committed outputs every time."""

import configparser
import copy
import json
import re

import conftest
import nbformat
import pytest
from nbval.plugin import coalesce_streams
from conftest import CACHE_FILE, ROOT, cache_keys
from cookbook_tools.paths import ENGLISH_NOTEBOOKS

pytestmark = pytest.mark.slow  # the readers' run


def test_the_readers_runs_cache_before_is_the_committed_cache_before_the_run(tmp_path):
    committed = tmp_path / "json_cache.json"
    committed.write_text("{}")

    def a_run_during_which_the_committed_cache_changes(path, folder, env):
        committed.write_text('{"written": "during the run"}')

    (tmp_path / "checkout").mkdir()
    # Given as arguments, not patched into the modules: the readers' run itself goes on in the background meanwhile.
    assert conftest.run_as_readers(tmp_path / "checkout", ENGLISH_NOTEBOOKS[:1], committed_cache=committed,
                                   run_notebook=a_run_during_which_the_committed_cache_changes).cache_before == b"{}"


def test_notebooks_use_every_recorded_call_and_no_other(readers_run):
    recorded = set(json.loads(readers_run.cache_before))
    used = cache_keys([call for run in readers_run.runs.values() for call in run.calls])
    assert readers_run.requests == 0, "calls the cache does not hold went to the (fake) server"
    assert used - recorded == set(), "calls the cache does not hold"
    assert recorded - used == set(), "recorded calls no notebook makes"
    assert len(used) == 32


def test_only_notebook_01_makes_no_call(readers_run):
    assert [name for name, run in readers_run.runs.items() if not run.calls] == ["01_tickets.ipynb"]


def test_running_the_notebooks_leaves_the_cache_byte_identical(readers_run):
    assert readers_run.cache_after == readers_run.cache_before == CACHE_FILE.read_bytes()


# In one kernel each memory explorer takes the next model id (memory-explorer-1, -2, ...): a cell run twice, or Run All
# again, shows a later one. A fresh kernel (nbval's run, Restart and Run All) shows memory-explorer-1, as committed.
EXPLORER_IN_ONE_KERNEL = (r'"model_id": "memory-explorer-\d+"', '"model_id": "memory-explorer-<n>"')


def sanitized_outputs(notebook):
    """Each code cell's outputs as text, with tests/sanitize.cfg applied, images left out and stream pieces joined (as
    nbval does: under load the kernel may flush one print() in two pieces)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "sanitize.cfg")
    patterns = [(config[section]["regex"], config[section]["replace"]) for section in config.sections()]
    patterns.append(EXPLORER_IN_ONE_KERNEL)
    cells = []
    for cell in notebook.cells:
        if cell.cell_type == "code":
            outputs = [{key: value for key, value in output.get("data", {}).items() if not key.startswith("image/")}
                       | {"text": output.get("text", "")} for output in coalesce_streams(copy.deepcopy(cell.outputs))]
            text = json.dumps(outputs, sort_keys=True)
            for regex, replace in patterns:
                text = re.sub(regex, replace, text)
            cells.append(text)
    return cells


@pytest.mark.parametrize("path", ENGLISH_NOTEBOOKS, ids=lambda path: path.name)
def test_every_cell_run_twice_in_a_row_gives_the_committed_outputs(readers_run, path):
    assert sanitized_outputs(readers_run.runs[path.name].twice) == sanitized_outputs(nbformat.read(path, as_version=4))


@pytest.mark.parametrize("path", ENGLISH_NOTEBOOKS, ids=lambda path: path.name)
def test_run_all_again_in_the_same_kernel_gives_the_committed_outputs(readers_run, path):
    assert sanitized_outputs(readers_run.runs[path.name].again) == sanitized_outputs(nbformat.read(path, as_version=4))
