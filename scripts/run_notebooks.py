"""Execute the English notebooks in place, in a fresh kernel each, regenerate the modules exported from them, and
write the Chinese edition from them (scripts/sync_chinese.py).

    python scripts/run_notebooks.py                 # all notebooks
    python scripts/run_notebooks.py 03_gate.ipynb   # some of them (their Chinese twins follow)

Each notebook runs top to bottom in its own kernel, in notebooks/, so the committed outputs carry execution counts
1..N. The modules are exported after each notebook, so a later notebook imports what an earlier one just defined.
Offline (no TYPESAFE_API_KEY) every call is replayed from json_cache.json; a call it lacks fails the run.
"""

from cookbook_tools.execution import run_notebooks

if __name__ == "__main__":
    run_notebooks()
