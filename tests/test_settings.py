"""A setting a reader may change (the gate's threshold, the store) has one binding: no notebook copies it into its
own namespace, and changing it the way the notebooks tell readers to (04 the threshold, 07 the store) reaches the
wrapper."""

import ast
import re

import nbformat
import pytest
from cookbook_tools.paths import ENGLISH_NOTEBOOKS, NOTEBOOKS

# What the notebooks and the teacher's guide invite readers to change.
SETTINGS = {"REMEMBER_AT", "STORE"}
WRAPPER_NOTEBOOK = NOTEBOOKS / "04_wrapper.ipynb"
SQLITE_NOTEBOOK = NOTEBOOKS / "07_memories_that_last.ipynb"  # where a second store first exists


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


@pytest.mark.parametrize("path", ENGLISH_NOTEBOOKS, ids=lambda path: path.name)
def test_no_notebook_imports_a_setting_from_the_lesson_by_name(path):
    imported = {alias.name for source in code_cells(path) for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ImportFrom) and node.module == "jev_memory_lesson" for alias in node.names}
    assert imported & SETTINGS == set()


def run_04(namespace, cells):
    for source in cells:
        exec(compile(source, str(WRAPPER_NOTEBOOK), "exec"), namespace)  # noqa: S102 - the notebook's own code


@pytest.fixture
def notebook_04(memory):
    """Notebook 04's code cells run top to bottom in one namespace, as a kernel would, over the committed cache."""
    namespace = {}
    run_04(namespace, code_cells(WRAPPER_NOTEBOOK))
    return namespace


def test_the_threshold_04_proposes_reaches_its_wrapper_and_every_later_cell_still_replays(memory, monkeypatch):
    """The change, made where 04's Markdown gives it, then the rest of 04: every call must still be in the cache."""
    cells = nbformat.read(WRAPPER_NOTEBOOK, as_version=4).cells
    change = said_in_markdown(WRAPPER_NOTEBOOK, r"jev_memory_lesson\.REMEMBER_AT = [0-9.]+")
    given_in = next(index for index, cell in enumerate(cells) if cell.cell_type == "markdown" and change in cell.source)
    monkeypatch.setattr(memory, "REMEMBER_AT", memory.REMEMBER_AT)  # put back afterwards
    namespace = {}
    run_04(namespace, [cell.source for cell in cells[:given_in] if cell.cell_type == "code"])
    exec("import jev_memory_lesson\n" + change, namespace)  # noqa: S102
    run_04(namespace, [cell.source for cell in cells[given_in:] if cell.cell_type == "code"])  # a CacheMiss fails
    threshold = float(change.split("=")[1])
    assert namespace["remember_threshold"]() == threshold != 0.5
    assert namespace["remembers"](threshold) and not namespace["remembers"](threshold - 0.01)


def test_a_plain_assignment_in_a_notebook_is_not_the_setting(notebook_04, memory):
    exec("REMEMBER_AT = 0.95", notebook_04)  # noqa: S102 - a new name in the notebook, which nothing reads
    notebook_04["start_from"]("T-101")
    assert memory.REMEMBER_AT == 0.5 and notebook_04["memory_ids"]("C-1042") == ["T-101"]


def test_the_store_set_as_07_says_receives_the_lessons_memories(memory, tmp_path, monkeypatch):
    """07's Markdown gives the line that switches the store (`... = ...`); run with a SQLite store on the right, it
    must reach the lesson's wrapper."""
    change = said_in_markdown(SQLITE_NOTEBOOK, r"[\w.]*STORE = \.\.\.")
    from memory_cookbook.from_notebooks.stores import SqliteStore

    monkeypatch.setattr(memory, "STORE", memory.STORE)  # put back after the line below replaces it
    namespace = {"jev_memory_lesson": memory, "SqliteStore": SqliteStore, "path": tmp_path / "m.sqlite"}
    exec(change.replace("...", "SqliteStore(path)"), namespace)  # noqa: S102 - the line 07 tells readers to type
    memory.start_from("T-101", "T-103")
    assert isinstance(memory.STORE, SqliteStore), f"07's {change!r} does not reach jev_memory_lesson.STORE"
    assert [ticket for _, ticket, _, _ in memory.STORE.saved()] == ["T-101"] and memory.MEMORIES == {}
