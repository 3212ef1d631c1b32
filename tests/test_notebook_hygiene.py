"""Committed notebooks are valid, clean and linted; the install pins every package the code imports."""

import ast
import getpass
import importlib.metadata
import re
import subprocess
import sys

import nbformat
import pytest
from conftest import ROOT, output_texts
from cookbook_tools.paths import CHINESE_NOTEBOOKS, ENGLISH_NOTEBOOKS

NOTEBOOKS = {path.name: nbformat.read(path, as_version=4) for path in [*ENGLISH_NOTEBOOKS, *CHINESE_NOTEBOOKS]}
PATHS = {path.name: path for path in [*ENGLISH_NOTEBOOKS, *CHINESE_NOTEBOOKS]}
CODE_FOLDERS = ("notebooks", "scripts", "tests", "memory_cookbook", "tools/cookbook_tools")
LOCAL_MODULES = {path.stem for folder in CODE_FOLDERS for path in (ROOT / folder).glob("*.py")} | {
    "memory_cookbook", "cookbook_tools"}


def code_cells(notebook):
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_valid_nbformat_with_the_python3_kernel(name):
    nbformat.validate(NOTEBOOKS[name])
    assert NOTEBOOKS[name].metadata.kernelspec.name == "python3"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_execution_counts_run_1_to_n_without_gaps_or_errors(name):
    cells = code_cells(NOTEBOOKS[name])
    assert [cell.execution_count for cell in cells] == list(range(1, len(cells) + 1))
    assert [output for cell in cells for output in cell.outputs if output.output_type == "error"] == []


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_outputs_hold_no_absolute_paths_or_user_names(name):
    forbidden = re.compile(r"(/root|/home/|/Users/|/tmp/|/work/|site-packages|[A-Z]:\\)")
    user = getpass.getuser()
    for text in output_texts(NOTEBOOKS[name]):
        assert not forbidden.search(text), forbidden.search(text).group(0)
        assert user == "root" or user not in text


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_one_h1_and_a_setup_section_before_other_code(name):
    markdown = [cell.source for cell in NOTEBOOKS[name].cells if cell.cell_type == "markdown"]
    assert sum(line.startswith("# ") for source in markdown for line in source.splitlines()) == 1
    first_code = next(index for index, cell in enumerate(NOTEBOOKS[name].cells) if cell.cell_type == "code")
    assert any(re.search(r"^## (Setup|准备)", cell.source, re.M) for cell in NOTEBOOKS[name].cells[:first_code])


def test_ruff_passes_on_the_module_tests_scripts_and_notebooks():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", *CODE_FOLDERS], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def imported_top_level_names(source):
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0]


def all_imports():
    sources = ["".join(line for line in cell.source.splitlines(True) if not line.startswith(("%", "!")))
               for notebook in NOTEBOOKS.values() for cell in code_cells(notebook)]
    sources += [path.read_text() for folder in CODE_FOLDERS for path in (ROOT / folder).glob("*.py")]
    return {name for source in sources for name in imported_top_level_names(source)}


def pinned_requirements():
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("-e ")]  # the project and its tools, in place


def test_every_requirement_is_pinned_with_double_equals():
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][A-Za-z0-9.]*", line) for line in pinned_requirements())


def test_every_imported_package_is_a_pinned_requirement():
    pinned = {re.sub(r"[-_.]+", "-", line.split("==")[0]).lower() for line in pinned_requirements()}
    providers = importlib.metadata.packages_distributions()
    third_party = all_imports() - set(sys.stdlib_module_names) - LOCAL_MODULES
    unlisted = {name: providers.get(name) for name in third_party
                if not {re.sub(r"[-_.]+", "-", dist).lower() for dist in providers.get(name, [])} & pinned}
    assert unlisted == {}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_heading_only_starts_a_markdown_cell(name):
    """One idea per cell: a section's heading opens its own cell, never ends the previous section's."""
    for cell in NOTEBOOKS[name].cells:
        if cell.cell_type == "markdown":
            body = re.sub(r"```.*?```", "", cell.source, flags=re.S).splitlines()[1:]
            assert not [line for line in body if re.match(r"#{1,3} ", line)], cell.source[:80]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_notebook_ends_with_a_recap_and_a_link_onwards(name):
    """The lesson ends with the recap; only a Chinese-only reference (01.zh's glossary) may stand after it."""
    cells = NOTEBOOKS[name].cells
    while cells and (cells[-1].metadata.get("translation") or {}).get("chinese_only"):
        cells = cells[:-1]
    last = cells[-1]
    assert last.cell_type == "markdown" and re.search(r"^## (Recap|小结)", last.source, re.M)
    assert re.search(r"\]\((0\d_[a-z_]+(\.zh)?\.ipynb|\.\./README\.md)\)", last.source)


@pytest.mark.slow  # a pytest of its own that collects every notebook: about a second
def test_the_quick_loop_leaves_out_nbvals_notebook_cells():
    # notebooks/ alone (tests/conftest.py unread: the plugin pytest.ini loads marks them): every cell of every English
    # notebook is collected, then deselected (a Chinese twin's cells would add to the count); none left is exit 5
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "-m",
                             "not slow", "notebooks"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    cells = sum(len(code_cells(NOTEBOOKS[path.name])) for path in ENGLISH_NOTEBOOKS)
    assert result.returncode == 5 and f"no tests collected ({cells} deselected)" in result.stdout, result.stdout


def test_nbval_compares_a_json_output_as_its_text_with_only_what_sanitize_cfg_masks_masked():
    """Notebook 10's memory card carries its data as JSON: a time the store's clock wrote differs at every run and is
    masked, as in the card's text; any other change is still a difference."""
    import configparser
    from types import SimpleNamespace

    from nbval.plugin import IPyNbCell

    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "sanitize.cfg")
    cell = SimpleNamespace(parent=SimpleNamespace(sanitize_patterns={
        config[section]["regex"]: config[section]["replace"] for section in config.sections()}))
    card = {"as_of": "2026-12-04T22:24:01.123456Z", "memories": [{"p_remember": 0.92, "saved_at": "2026-12-04T22:24Z"}]}
    later = {"as_of": "2027-01-01T00:00:00Z", "memories": [{"p_remember": 0.92, "saved_at": "2027-01-01T00:00Z"}]}
    changed = {**card, "memories": [{"p_remember": 0.91, "saved_at": "2026-12-04T22:24Z"}]}
    assert IPyNbCell.sanitize(cell, card) == IPyNbCell.sanitize(cell, later) != IPyNbCell.sanitize(cell, changed)
