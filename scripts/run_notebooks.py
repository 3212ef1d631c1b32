"""Execute the notebooks in place, in a fresh kernel each, and regenerate the modules exported from them.

    python scripts/run_notebooks.py                 # all notebooks
    python scripts/run_notebooks.py 03_gate.ipynb   # some of them

Each notebook runs top to bottom in its own kernel, in notebooks/, so the committed outputs carry execution counts
1..N. The modules are exported after each notebook, so a later notebook imports what an earlier one just defined.
Offline (no TYPESAFE_API_KEY) every call is replayed from json_cache.json; a call it lacks fails the run.
"""

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the repository root, for cookbook_tools
import nbformat  # noqa: E402
from cookbook_tools.execution import execute  # noqa: E402
from cookbook_tools.export import module_sources, write_modules  # noqa: E402
from cookbook_tools.paths import CHINESE_NOTEBOOKS, ENGLISH_NOTEBOOKS, NOTEBOOKS  # noqa: E402


def run(notebook_path):
    """Execute one notebook in place, then rewrite the modules from the notebooks as they now are."""
    notebook = nbformat.read(notebook_path, as_version=4)
    started = time.monotonic()
    execute(notebook)
    nbformat.write(notebook, notebook_path)
    write_modules(module_sources())
    print(f"ran {notebook_path.relative_to(ROOT)} in {time.monotonic() - started:.1f} s", flush=True)


def main():
    write_modules(module_sources())
    for notebook_path in [NOTEBOOKS / name for name in sys.argv[1:]] or [*ENGLISH_NOTEBOOKS, *CHINESE_NOTEBOOKS]:
        run(notebook_path)


if __name__ == "__main__":
    main()
