"""Running notebooks: in a fresh kernel of this Python environment, as readers run them, and what they asked Jev."""

import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager
from nbval.plugin import coalesce_streams

from cookbook_tools.export import module_sources, write_modules
from cookbook_tools.paths import ENGLISH_NOTEBOOKS, NOTEBOOKS, ROOT

# Appended to a notebook to print every request its kernel answered, from the one record of them.
REPORT_CALLS = """\
import json as _json
from memory_cookbook.replay.calls import CALLS as _calls
print(_json.dumps([call.request for call in _calls]))"""
KERNELS_STARTED = []  # the notebooks this process ran in a kernel, in order (the suite reports how many)


def execute(notebook: Any, allow_errors: bool = False, folder: Path = NOTEBOOKS, store_widget_state: bool = False,
            env: dict[str, str] | None = None) -> Any:
    """Run a notebook object top to bottom in a fresh kernel of this Python environment, in `folder` (notebooks/, or
    the notebooks of a copy of the repository). With store_widget_state, the widgets' last state goes into the
    notebook's metadata, where JupyterLab finds it to show a widget before the kernel runs. `env`: the kernel's
    environment, instead of this process's (which another thread may be using meanwhile)."""
    KERNELS_STARTED.append(notebook.metadata.get("name", "notebook"))
    kernel = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(notebook, km=kernel, timeout=600, record_timing=False, allow_errors=allow_errors,
                            store_widget_state=store_widget_state,
                            resources={"metadata": {"path": str(folder)}})
    try:
        return client.execute(**({"env": env} if env is not None else {}))
    finally:
        # nbclient leaves running a kernel whose manager it was given: shut down as JupyterLab does (the kernel's
        # atexit handlers run), not left idle until this process exits.
        if kernel.has_kernel:
            kernel.shutdown_kernel()


def reported_calls(notebook: Any) -> list[tuple[str, ...]]:
    """The calls the REPORT_CALLS cell at the end of an executed notebook printed, removing that cell."""
    report = notebook.cells.pop()
    return [tuple(call) for call in json.loads(report.outputs[0]["text"])]


def executed_with_calls(notebook_path: Path) -> tuple[Any, list[tuple[str, ...]]]:
    """(the notebook as a fresh run left it, [(model, state_json, questions_json), ...] that its ask() answered)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(REPORT_CALLS))
    execute(notebook)
    return notebook, reported_calls(notebook)


def executed_as_readers_do(notebook_path: Path, folder: Path = NOTEBOOKS,
                           env: dict[str, str] | None = None) -> SimpleNamespace:
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
    execute(notebook, folder=folder, env=env)
    calls = reported_calls(notebook)
    return SimpleNamespace(twice=nbformat.v4.new_notebook(cells=second_runs),
                           again=nbformat.v4.new_notebook(cells=again), calls=calls)


def fresh_copy(cell: Any) -> Any:
    """A new cell with this cell's type and source (and no outputs, ids or counts)."""
    make = nbformat.v4.new_code_cell if cell.cell_type == "code" else nbformat.v4.new_markdown_cell
    return make(cell.source)


def run_in_place(notebook_path: Path) -> None:
    """Execute one notebook in place, then rewrite the modules from the notebooks as they now are."""
    notebook = nbformat.read(notebook_path, as_version=4)
    started = time.monotonic()
    notebook.metadata.pop("widgets", None)  # only the state of this run's widgets
    execute(notebook, store_widget_state=True)
    for cell in notebook.cells:
        if cell.cell_type == "code":  # under load one print() can arrive in pieces: commit it whole, as it reads
            cell.outputs = coalesce_streams(cell.outputs)
    nbformat.write(notebook, notebook_path)
    write_modules(module_sources())
    print(f"ran {notebook_path.relative_to(ROOT)} in {time.monotonic() - started:.1f} s", flush=True)


def run_notebooks() -> None:
    """Run the English notebooks named (default: all), then write their Chinese twins from them."""
    from cookbook_tools import chinese_edition  # here: it imports matplotlib, which every test run would pay for

    chinese = [name for name in sys.argv[1:] if name.endswith(".zh.ipynb")]
    if chinese:
        sys.exit(f"{', '.join(chinese)}: a Chinese notebook's code and outputs are written from the English one by"
                 " scripts/sync_chinese.py: name the English notebook")
    write_modules(module_sources())
    for notebook_path in [NOTEBOOKS / name for name in sys.argv[1:]] or ENGLISH_NOTEBOOKS:
        run_in_place(notebook_path)
    for problem in chinese_edition.sync():
        print(f"to translate: {problem}")

