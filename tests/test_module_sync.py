"""The module is generated from the notebooks' `#| export` cells: a stale or hand-edited module fails here."""

import shutil
import subprocess
import sys

from conftest import ROOT
from export_module import ENGLISH_NOTEBOOKS, MODULE, exported_cells, module_source


def test_module_matches_the_notebooks():
    assert MODULE.read_text() == module_source(), "stale module: run python scripts/export_module.py"


def check(checkout):
    return subprocess.run([sys.executable, "scripts/export_module.py", "--check"], cwd=checkout, capture_output=True,
                          text=True, timeout=60)


def test_check_mode_fails_on_a_hand_edit(tmp_path):
    for folder in ("scripts", "notebooks"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    module = tmp_path / "notebooks" / "basic_memory.py"
    module.write_text(module.read_text().replace("REMEMBER_AT = 0.5", "REMEMBER_AT = 0.6"))
    result = check(tmp_path)
    assert result.returncode == 1 and "stale" in result.stderr


def test_every_exported_cell_lands_in_the_module():
    text = MODULE.read_text()
    for notebook_path in ENGLISH_NOTEBOOKS:
        for source in exported_cells(notebook_path):
            body = [line for line in source.splitlines() if not line.startswith(("import ", "from "))]
            assert "\n".join(body).strip() in text, f"{notebook_path.name}: {source[:60]}"
