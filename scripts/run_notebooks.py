"""Execute the notebooks in place, in a fresh kernel each, and regenerate basic_memory.py.

    python scripts/run_notebooks.py                 # all notebooks
    python scripts/run_notebooks.py 03_gate.ipynb   # some of them

Each notebook runs top to bottom in its own kernel, in notebooks/, so the committed outputs carry execution counts
1..N. The module is exported after each notebook, so a later notebook imports what an earlier one just defined.
Offline (no TYPESAFE_API_KEY) every call is replayed from json_cache.json; a call it lacks fails the run.
"""

import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
from cooksafe import JsonCache
from export_module import CHINESE_NOTEBOOKS, ENGLISH_NOTEBOOKS, MODULE, NOTEBOOKS, ROOT, module_source
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

NOTEBOOK_PATHS = ENGLISH_NOTEBOOKS  # the code's notebooks; the Chinese edition runs the same code cells

# Appended to a notebook to print every call its kernel's ask() answered: from the notebook's own CALLS (notebook 02
# defines ask itself) and from the module's.
REPORT_CALLS = """\
import json as _json, basic_memory as _module
_logs = {id(log): log for log in (globals().get("CALLS", []), _module.CALLS)}
print(_json.dumps([call for log in _logs.values() for call in log]))"""


def execute(notebook, allow_errors=False):
    """Run a notebook object top to bottom in a fresh kernel of this Python environment, in notebooks/."""
    kernel = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(notebook, km=kernel, timeout=600, record_timing=False, allow_errors=allow_errors,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    return client.execute()


def executed_with_calls(notebook_path):
    """(the notebook as a fresh run left it, [(model, state_json, questions_json), ...] that its ask() answered)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(REPORT_CALLS))
    execute(notebook)
    report = notebook.cells.pop()
    return notebook, [tuple(call) for call in json.loads(report.outputs[0]["text"])]


def executed_as_readers_do(notebook_path):
    """Run a notebook the way readers do, in one kernel: each code cell twice in a row, then Run All again.
    Returns .twice (the second run of each cell), .again (the notebook as Run All again left it) and .calls (what
    its ask() answered)."""
    cells = nbformat.read(notebook_path, as_version=4).cells
    twice, second_runs = [], []
    for cell in cells:
        copies = [fresh_copy(cell) for _ in range(2 if cell.cell_type == "code" else 1)]
        twice += copies
        second_runs.append(copies[-1])
    again = [fresh_copy(cell) for cell in cells]
    notebook = nbformat.v4.new_notebook(cells=[*twice, *again, nbformat.v4.new_code_cell(REPORT_CALLS)])
    execute(notebook)
    calls = [tuple(call) for call in json.loads(notebook.cells[-1].outputs[0]["text"])]
    return SimpleNamespace(twice=nbformat.v4.new_notebook(cells=second_runs),
                           again=nbformat.v4.new_notebook(cells=again), calls=calls)


def fresh_copy(cell):
    """A new cell with this cell's type and source (and no outputs, ids or counts)."""
    make = nbformat.v4.new_code_cell if cell.cell_type == "code" else nbformat.v4.new_markdown_cell
    return make(cell.source)


def cache_keys(calls):
    """The keys cooksafe.JsonCache files these calls under, computed by JsonCache itself."""
    with tempfile.TemporaryDirectory() as folder:
        keys_file = Path(folder) / "keys.json"
        cache = JsonCache(keys_file)

        @cache
        def _system_one(model, state_json, questions_json):
            return None

        for call in calls:
            _system_one(*call)
        return set(json.loads(keys_file.read_text())) if keys_file.exists() else set()


def run(notebook_path):
    """Execute one notebook in place and rewrite the module from the notebooks as they now are."""
    notebook = nbformat.read(notebook_path, as_version=4)
    started = time.monotonic()
    execute(notebook)
    nbformat.write(notebook, notebook_path)
    MODULE.write_text(module_source())
    print(f"ran {notebook_path.relative_to(ROOT)} in {time.monotonic() - started:.1f} s", flush=True)


def main():
    paths = [NOTEBOOKS / name for name in sys.argv[1:]] or [*NOTEBOOK_PATHS, *CHINESE_NOTEBOOKS]
    MODULE.write_text(module_source())
    for notebook_path in paths:
        run(notebook_path)


if __name__ == "__main__":
    main()
