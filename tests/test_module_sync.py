"""Generated files are honest: every module matches the notebooks' export cells, and recorded_requests.json matches a
replay of the published run. Also the exporter's own rules, on small made-up notebooks."""

import sys

import nbformat
import pytest
from conftest import committed_entries, committed_requests
from memory_cookbook.tools import export
from memory_cookbook.tools.export import module_sources, stale_modules
from memory_cookbook.tools.paths import RECORDED_REQUESTS_FILE
from memory_cookbook.tools.recording import published_run_calls, requests_text


def test_every_generated_module_matches_the_notebooks():
    assert stale_modules(module_sources()) == [], "stale module: run python scripts/export_module.py"


def test_the_lesson_module_stays_small():
    assert len(module_sources()["basic_memory"].splitlines()) < 240


def test_recorded_requests_are_the_published_runs_requests(memory):
    assert requests_text(published_run_calls(), committed_entries()) == RECORDED_REQUESTS_FILE.read_text(), (
        "stale recorded_requests.json: re-record with scripts/record_cache.py")
    assert len(committed_requests()) == 32


def test_check_mode_fails_when_a_module_differs_from_the_notebooks(monkeypatch):
    edited = module_sources()
    edited["basic_memory"] = edited["basic_memory"].replace("REMEMBER_AT = 0.5", "REMEMBER_AT = 0.6")
    monkeypatch.setattr(export, "module_sources", lambda: edited)
    monkeypatch.setattr(sys, "argv", ["export_module.py", "--check"])
    with pytest.raises(SystemExit, match="stale: notebooks/basic_memory.py: run python scripts/export_module.py"):
        export.main()


def notebook_of(tmp_path, *sources, name="01_made_up.ipynb"):
    path = tmp_path / name
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources]), path)
    return path


def test_a_named_target_gets_its_own_module_and_imports_what_it_uses_from_the_lesson(tmp_path):
    path = notebook_of(tmp_path, "#| export\nimport json\n\nTABLE = {}", "#| export shelf\ndef put(key):\n"
                       "    TABLE[key] = json.dumps(key)", "print('not exported')")
    sources = module_sources([path])
    assert "def put" not in sources["basic_memory"] and "import json" not in sources["basic_memory"]
    assert "import json\nfrom basic_memory import TABLE\n" in sources["shelf"]
    assert "not exported" not in "".join(sources.values())


def test_a_multi_line_parenthesised_import_is_merged_whole(tmp_path):
    cell = "#| export\nfrom typesafe_sdk import (Choice,\n    Noul)\n\nQUESTIONS = (Choice, Noul)"
    text = module_sources([notebook_of(tmp_path, cell)])["basic_memory"]
    assert text.endswith("from typesafe_sdk import Choice, Noul\n\n\n# 01_made_up.ipynb\nQUESTIONS = (Choice, Noul)\n")


def test_a_name_no_cell_defines_is_an_error(tmp_path):
    with pytest.raises(NameError, match=r"basic_memory.py uses \['MISSING'\]"):
        module_sources([notebook_of(tmp_path, "#| export\nVALUE = MISSING + 1")])


def test_modules_that_would_import_each_other_are_an_error(tmp_path):
    path = notebook_of(tmp_path, "#| export\nA = 1\n\n\ndef a():\n    return B", "#| export other\nB = A")
    with pytest.raises(ImportError, match="would import each other"):
        module_sources([path])
