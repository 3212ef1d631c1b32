"""A setting a reader may change (the gate's threshold, the store) has one binding, MEMORY's attribute: changing it the
way the notebooks tell readers to (04 the threshold, 07 the store, 09's reset) reaches the wrapper, rebinds no name of
the lesson, so that no name a reader imported goes stale, and a value that cannot be a setting is refused when it is
set (tests/test_start_from_and_threshold.py)."""

import re

import nbformat
import pytest
from cookbook_tools.paths import NOTEBOOKS
from memory_cookbook.from_notebooks.stores import SqliteStore

WRAPPER_NOTEBOOK = NOTEBOOKS / "04_wrapper.ipynb"
SQLITE_NOTEBOOK = NOTEBOOKS / "07_memories_that_last.ipynb"  # where a second store first exists
POSTGRES_NOTEBOOK = NOTEBOOKS / "09_many_app_servers.ipynb"  # whose last cell puts a dict store back


def code_cells(path):
    return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


def said_in_markdown(path, pattern):
    """The first code span of the notebook's Markdown matching `pattern`: what the notebook tells readers to type."""
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            for span in re.findall(r"`([^`]+)`", cell.source):
                if re.fullmatch(pattern, span):
                    return span
    raise AssertionError(f"{path.name} does not say how to change it ({pattern})")


def run_cells(namespace, path, cells):
    for source in cells:
        exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - the notebook's own code


@pytest.fixture
def notebook_04(lesson):
    """Notebook 04's code cells run top to bottom in one namespace, as a kernel would, over the committed cache."""
    namespace = {}
    run_cells(namespace, WRAPPER_NOTEBOOK, code_cells(WRAPPER_NOTEBOOK))
    return namespace


def test_the_threshold_04_proposes_reaches_its_wrapper_and_every_later_cell_still_replays(lesson):
    """The change, made where 04's Markdown gives it, then the rest of 04: every call must still be in the cache."""
    cells = nbformat.read(WRAPPER_NOTEBOOK, as_version=4).cells
    change = said_in_markdown(WRAPPER_NOTEBOOK, r"MEMORY\.remember_at = [0-9.]+")
    given_in = next(index for index, cell in enumerate(cells) if cell.cell_type == "markdown" and change in cell.source)
    namespace = {}
    run_cells(namespace, WRAPPER_NOTEBOOK, [cell.source for cell in cells[:given_in] if cell.cell_type == "code"])
    exec(change, namespace)  # noqa: S102 - the line 04 tells readers to type
    namespace["start_from"]("T-101")
    threshold = float(change.split("=")[1])
    assert namespace["MEMORY"].ledger()[-1]["remember_at"] == threshold != 0.5
    run_cells(namespace, WRAPPER_NOTEBOOK, [cell.source for cell in cells[given_in:] if cell.cell_type == "code"])


def test_a_plain_assignment_in_a_notebook_is_not_the_setting(notebook_04, lesson):
    exec("REMEMBER_AT = 0.95", notebook_04)  # noqa: S102 - a new name in the notebook, which nothing reads
    notebook_04["start_from"]("T-101")
    assert notebook_04["MEMORY"].remember_at == 0.5 and notebook_04["memory_ids"]("C-1042") == ["T-101"]


def test_the_store_set_as_07_says_receives_the_lessons_memories(lesson, tmp_path):
    """07's Markdown gives the line that switches the store (`... = ...`); run with a SQLite store on the right, it
    must reach the lesson's wrapper."""
    change = said_in_markdown(SQLITE_NOTEBOOK, r"[\w.]+ = \.\.\.")
    namespace = {"MEMORY": lesson.MEMORY, "SqliteStore": SqliteStore, "path": tmp_path / "m.sqlite"}
    exec(change.replace("...", "SqliteStore(path)"), namespace)  # noqa: S102 - the line 07 tells readers to type
    lesson.start_from("T-101", "T-103")
    assert isinstance(lesson.MEMORY.store, SqliteStore), f"07's {change!r} does not reach the wrapper's store"
    assert [ticket for _, ticket, _, _ in lesson.MEMORY.store.saved()] == ["T-101"]


def test_no_name_a_reader_imported_from_the_lesson_goes_stale_when_a_setting_changes(lesson, tmp_path):
    imported = {name: getattr(lesson, name) for name in dir(lesson) if not name.startswith("_")}
    namespace = {"MEMORY": lesson.MEMORY, "SqliteStore": SqliteStore, "path": tmp_path / "m.sqlite"}
    exec(said_in_markdown(WRAPPER_NOTEBOOK, r"MEMORY\.remember_at = [0-9.]+"), namespace)  # noqa: S102
    exec(said_in_markdown(SQLITE_NOTEBOOK, r"[\w.]+ = \.\.\.").replace("...", "SqliteStore(path)"),  # noqa: S102
         namespace)
    assert [name for name, value in imported.items() if getattr(lesson, name) is not value] == []


def test_after_09s_reset_the_memories_a_reader_imported_are_the_wrappers(lesson, monkeypatch):
    """09's setup imports what it uses from the lesson, and its last cell puts a dict store back; the wrapper then
    saves T-101. MEMORIES, imported before, must show it (it showed the store of before the reset)."""
    cells = code_cells(POSTGRES_NOTEBOOK)
    setup, last = next(cell for cell in cells if not cell.startswith("#| export")), cells[-1]
    reset = next(line for line in last.splitlines() if "DictStore()" in line)
    monkeypatch.setattr(lesson.MEMORY, "store", lesson.MEMORY.store)  # put back afterwards
    namespace = {}
    exec(setup + "\nfrom jev_memory_lesson import MEMORIES", namespace)  # noqa: S102 - 09's imports, and a reader's
    exec(reset, namespace)  # noqa: S102 - 09's reset line
    lesson.start_from("T-101")
    assert list(namespace["MEMORIES"]["C-1042"]) == lesson.MEMORY.store.recall("C-1042") != []
