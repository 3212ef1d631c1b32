"""Generated files are honest: every module matches the notebooks' export cells, and recorded_requests.json matches a
replay of the published run. Also the exporter's own rules, on small made-up notebooks."""

import os
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import committed_entries, committed_requests
from cookbook_tools import export
from cookbook_tools.export import module_sources, stale_modules
from cookbook_tools.paths import RECORDED_REQUESTS_FILE
from cookbook_tools.recording import published_run_calls, requests_text


def test_every_generated_module_matches_the_notebooks():
    assert stale_modules(module_sources()) == [], "stale module: run python scripts/export_module.py"


def test_recorded_requests_are_the_published_runs_requests(lesson):
    assert requests_text(published_run_calls(), committed_entries()) == RECORDED_REQUESTS_FILE.read_text(), (
        "stale recorded_requests.json: re-record with scripts/record_cache.py")
    assert len(committed_requests()) == 32


def test_check_mode_fails_when_a_module_differs_from_the_notebooks(monkeypatch):
    edited = module_sources()
    edited["jev_memory_lesson"] = edited["jev_memory_lesson"].replace("REMEMBER_AT = 0.5", "REMEMBER_AT = 0.6")
    monkeypatch.setattr(export, "module_sources", lambda: edited)
    monkeypatch.setattr(sys, "argv", ["export_module.py", "--check"])
    with pytest.raises(SystemExit, match="stale: notebooks/jev_memory_lesson.py: run python scripts/export_module.py"):
        export.main()


def notebook_of(tmp_path, *sources, name="01_made_up.ipynb"):
    path = tmp_path / name
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources]), path)
    return path


def cell_ids(path):
    return [cell.id for cell in nbformat.read(path, as_version=4).cells]


def test_a_named_target_gets_its_own_module_with_its_own_cells_imports(tmp_path):
    path = notebook_of(tmp_path, "#| export\nimport json\n\nTABLE = {}", "#| export shelf\nimport pickle\n\n\n"
                       "def put(key):\n    return pickle.dumps(key)", "print('not exported')")
    sources = module_sources([path])
    assert "def put" not in sources["jev_memory_lesson"] and "import pickle" not in sources["jev_memory_lesson"]
    assert "import json" not in sources["shelf"] and "import pickle\n" in sources["shelf"]
    assert "not exported" not in "".join(sources.values())


def relative(path, target):
    """The notebook as the generated file of `target` names it: relative to that file's folder."""
    return Path(os.path.relpath(path, export.module_path(target).parent)).as_posix()


def test_each_block_names_the_notebook_and_cell_it_came_from(tmp_path):
    path = notebook_of(tmp_path, "#| export\nA = 1", "#| export shelf\nB = 2")
    sources, (lesson_cell, shelf_cell) = module_sources([path]), cell_ids(path)
    assert f"\n# %% {relative(path, 'jev_memory_lesson')} {lesson_cell}\nA = 1\n" in sources["jev_memory_lesson"]
    assert f"\n# %% {relative(path, 'shelf')} {shelf_cell}\nB = 2\n" in sources["shelf"]
    assert "# %% 01_tickets.ipynb " in module_sources()["jev_memory_lesson"]  # the lesson sits beside the notebooks
    assert "# %% ../../notebooks/01_tickets.ipynb " in module_sources()["tables"]


def test_an_import_another_modules_cell_wrote_is_not_borrowed(tmp_path):
    path = notebook_of(tmp_path, "#| export\nimport json\n\nA = json.dumps(1)", "#| export shelf\nB = json.dumps(2)")
    with pytest.raises(export.ExportError, match=r"shelf.py uses 'json' \(01_made_up.ipynb cell .*\), which none"):
        module_sources([path])


def test_two_imports_of_one_name_stop_the_export_naming_both_cells(tmp_path):
    path = notebook_of(tmp_path, "#| export\nfrom json import loads\n\nA = loads('1')",
                       "#| export\nfrom pickle import loads\n\nB = loads")
    first, second = cell_ids(path)
    with pytest.raises(export.ExportError, match=rf"'loads' is bound twice, by `from json import loads` in"
                                                 rf" 01_made_up.ipynb cell {first} and by `from pickle import loads` in"
                                                 rf" 01_made_up.ipynb cell {second}"):
        module_sources([path])


def test_another_targets_import_of_the_same_name_stays_in_its_own_module(tmp_path):
    path = notebook_of(tmp_path, "#| export\nfrom json import loads\n\nA = loads('1')",
                       "#| export other\nfrom pickle import loads\n\nB = loads")
    sources = module_sources([path])
    assert "from json import loads\n" in sources["jev_memory_lesson"] and "pickle" not in sources["jev_memory_lesson"]
    assert "from pickle import loads\n" in sources["other"] and "json" not in sources["other"]


def test_the_same_import_in_two_cells_is_one_binding(tmp_path):
    path = notebook_of(tmp_path, "#| export\nimport json\n\nA = json.dumps(1)", "#| export\nimport json\n\nB = 2")
    assert module_sources([path])["jev_memory_lesson"].count("import json\n") == 1


def test_an_import_and_a_definition_of_one_name_stop_the_export(tmp_path):
    path = notebook_of(tmp_path, "#| export\nfrom json import loads\n\nA = loads", "#| export\ndef loads():\n    pass")
    with pytest.raises(export.ExportError, match="'loads' is bound twice, by `from json import loads` in .* and by a"
                                                 " definition in"):
        module_sources([path])


def test_two_definitions_of_one_name_stop_the_export(tmp_path):
    path = notebook_of(tmp_path, "#| export\ndef route():\n    return 1", "#| export\nroute = 2")
    first, second = cell_ids(path)
    with pytest.raises(export.ExportError, match=f"'route' is bound twice, by a definition in 01_made_up.ipynb cell"
                                                 f" {first} and by a definition in 01_made_up.ipynb cell {second}"):
        module_sources([path])


@pytest.mark.parametrize("marker", ["#| exports", "#| export_all", "#| exported"])
def test_a_marker_that_only_begins_like_the_export_marker_exports_nothing(tmp_path, marker):
    path = notebook_of(tmp_path, "#| export\nA = 1", f"{marker}\nB = 2")
    assert "B = 2" not in "".join(module_sources([path]).values())


def test_an_import_no_cell_of_the_module_uses_is_left_out(tmp_path):
    path = notebook_of(tmp_path, "#| export\nimport json\nimport pickle\n\nA = json.dumps(1)")
    source = module_sources([path])["jev_memory_lesson"]
    assert "import json\n" in source and "pickle" not in source


def test_a_name_two_modules_define_and_a_third_uses_stops_the_export(tmp_path):
    path = notebook_of(tmp_path, "#| export one\nVALUE = 1", "#| export two\nVALUE = 2", "#| export three\nB = VALUE")
    with pytest.raises(export.ExportError, match="three.py uses 'VALUE' .*which two modules define"):
        module_sources([path])


def test_a_runtime_module_never_imports_the_lesson(tmp_path):
    path = notebook_of(tmp_path, "#| export\nTABLE = {}", "#| export shelf\ndef put(key):\n    TABLE[key] = 1")
    with pytest.raises(export.ExportError, match="shelf.py uses 'TABLE' .* from the lesson"):
        module_sources([path])


def test_a_runtime_module_imports_what_another_runtime_module_defines(tmp_path):
    path = notebook_of(tmp_path, "#| export ledger\nLEDGER = []",
                       "#| export shelf\ndef put(key):\n    LEDGER.append(key)")
    assert "from memory_cookbook.from_notebooks.ledger import LEDGER\n" in module_sources([path])["shelf"]


def test_a_multi_line_parenthesised_import_is_merged_whole(tmp_path):
    cell = "#| export\nfrom typesafe_sdk import (Choice,\n    Noul)\n\nQUESTIONS = (Choice, Noul)"
    path = notebook_of(tmp_path, cell)
    text = module_sources([path])["jev_memory_lesson"]
    assert text.endswith(f"from typesafe_sdk import Choice, Noul\n\n__all__ = [\"QUESTIONS\"]\n\n\n"
                         f"# %% {relative(path, 'jev_memory_lesson')} {cell_ids(path)[0]}\n"
                         "QUESTIONS = (Choice, Noul)\n")


def test_each_generated_module_names_the_notebooks_to_edit_and_lists_its_public_names(tmp_path):
    first = notebook_of(tmp_path, "#| export shelf\nA = 1\n_HIDDEN = 2")
    second = notebook_of(tmp_path, "#| export shelf\ndef put():\n    return A", name="02_made_up.ipynb")
    text = module_sources([first, second])["shelf"]
    assert " ".join(text.split('"""')[1].split()).startswith(
        f"Generated from the `#| export shelf` cells of notebooks/{first.name} and {second.name} by"
        " scripts/export_module.py. Edit those cells")
    assert '\n__all__ = ["A", "put"]\n' in text


def test_a_name_no_cell_defines_is_an_error(tmp_path):
    with pytest.raises(export.ExportError, match=r"jev_memory_lesson.py uses 'MISSING'"):
        module_sources([notebook_of(tmp_path, "#| export\nVALUE = MISSING + 1")])


def test_modules_that_would_import_each_other_are_an_error(tmp_path):
    path = notebook_of(tmp_path, "#| export one\nA = 1\n\n\ndef a():\n    return B", "#| export other\nB = A")
    with pytest.raises(ImportError, match="would import each other"):
        module_sources([path])
