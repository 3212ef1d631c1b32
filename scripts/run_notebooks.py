"""Execute the notebooks in place, in a fresh kernel each, and regenerate basic_memory.py.

    python scripts/run_notebooks.py                 # all notebooks
    python scripts/run_notebooks.py 03_gate.ipynb   # some of them

Each notebook runs top to bottom in its own kernel, in notebooks/, so the committed outputs carry execution counts
1..N. The module is exported after each notebook, so a later notebook imports what an earlier one just defined.
Offline (no TYPESAFE_API_KEY) every call is replayed from json_cache.json; a call it lacks fails the run.
"""

import sys
import time

import nbformat
from export_module import MODULE, NOTEBOOKS, ROOT, module_source
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager


def execute(notebook):
    """Run a notebook object top to bottom in a fresh kernel of this Python environment, in notebooks/."""
    kernel = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    client = NotebookClient(notebook, km=kernel, timeout=600, record_timing=False,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    return client.execute()


def run(notebook_path):
    """Execute one notebook in place and rewrite the module from the notebooks as they now are."""
    notebook = nbformat.read(notebook_path, as_version=4)
    started = time.monotonic()
    execute(notebook)
    nbformat.write(notebook, notebook_path)
    MODULE.write_text(module_source())
    print(f"ran {notebook_path.relative_to(ROOT)} in {time.monotonic() - started:.1f} s", flush=True)


def main():
    names = sys.argv[1:]
    paths = [NOTEBOOKS / name for name in names] or sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    MODULE.write_text(module_source())
    for notebook_path in paths:
        run(notebook_path)


if __name__ == "__main__":
    main()
