"""The project's Markdown documents (the two READMEs, CONTRIBUTING, docs/): their commands are the ones CI and the
classroom kit run, their links resolve, and the READMEs name every notebook. Nothing here compares prose."""

import re

import nbformat
import pytest
from conftest import ROOT
from cookbook_tools import kit
from cookbook_tools.pages import CHINESE_README, README, ParsedMarkdown, documents
from cookbook_tools.paths import CHINESE_NOTEBOOKS, ENGLISH_NOTEBOOKS, NOTEBOOKS

READMES = {README: ENGLISH_NOTEBOOKS, CHINESE_README: CHINESE_NOTEBOOKS}


def code_lines(path, language):
    """The lines of a document's code blocks in `language` (bash, bat)."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```", path.read_text(), re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_documents_include_both_readmes_contributing_and_every_page_of_docs():
    assert set(documents()) == {README, CHINESE_README, ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")}
    assert all(path.is_file() for path in documents())


@pytest.mark.parametrize("readme", READMES, ids=lambda path: path.name)
def test_ci_runs_the_readmes_test_command_word_for_word(readme):
    """The test command is the one line of a README that runs pytest; .ci/run runs that very line."""
    commands = [line for line in code_lines(readme, "bash") if " -m pytest" in line]
    assert len(commands) == 1, commands
    assert commands[0].startswith("python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && ")
    assert commands[0] in (ROOT / ".ci" / "run").read_text().splitlines()


@pytest.mark.parametrize("readme, language, system", [(readme, language, system) for readme in READMES
                                                       for language, system in (("bash", "posix"), ("bat", "windows"))],
                         ids=lambda value: getattr(value, "name", value))
def test_the_readmes_run_command_sets_up_and_opens_the_notebook_the_classroom_kit_opens(readme, language, system):
    """One run command per system; after setting up, it starts JupyterLab as the kit's README.txt tells students to
    (the Chinese README on the Chinese 01)."""
    commands = [line for line in code_lines(readme, language) if "jupyter lab" in line]
    assert len(commands) == 1, commands
    *setup, start = commands[0].split(" && ")
    assert setup and all("--no-index" not in step for step in setup)
    assert start == kit.student_commands(system, ["3.12"], "zh" if readme == CHINESE_README else "en")[1]


@pytest.mark.parametrize("readme", READMES, ids=lambda path: path.name)
def test_each_readme_links_the_other_before_its_first_section(readme):
    other = next(path for path in READMES if path != readme)
    top = readme.read_text().split("\n## ", 1)[0]
    assert f"]({other.name})" in top


@pytest.mark.parametrize("readme", READMES, ids=lambda path: path.name)
def test_each_readme_lists_every_notebook_of_its_language_by_its_h1(readme):
    rows = ParsedMarkdown(readme.read_text()).linked_rows()
    notebooks = [f"notebooks/{path.name}" for path in READMES[readme]]
    assert [target for target in rows if target.startswith("notebooks/")] == notebooks
    text = readme.read_text()
    for path in READMES[readme]:
        h1 = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0].removeprefix("# ")
        assert f"[{h1}](notebooks/{path.name})" in text


def markdown_sources():
    """(file, Markdown text) for every notebook's Markdown cells and every document."""
    for path in [*ENGLISH_NOTEBOOKS, *CHINESE_NOTEBOOKS]:
        notebook = nbformat.read(path, as_version=4)
        yield path, "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
    for path in documents():
        yield path, path.read_text()


def local_links(text):
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"```.*?```", "", text, flags=re.S))
            if not re.match(r"[a-z]+:|#", target)]


def test_every_relative_link_resolves():
    broken = [f"{path.relative_to(ROOT)} → {target}" for path, text in markdown_sources()
              for target in local_links(text) if not (path.parent / target.split("#")[0]).exists()]
    assert broken == []


def test_the_readmes_link_every_maintainers_page_the_license_and_contributing():
    """Every page of docs/ is reachable from the English front door, and so are LICENSE and CONTRIBUTING.md."""
    linked = {(README.parent / target.split("#")[0]).resolve() for target in local_links(README.read_text())}
    wanted = {path.resolve() for path in [*(ROOT / "docs").glob("*.md"), ROOT / "LICENSE", ROOT / "CONTRIBUTING.md"]
              if not path.name.endswith(".zh.md")}
    assert sorted(str(path.relative_to(ROOT)) for path in wanted - linked) == []


# The teacher's guides name cells by their notebook's section ("04: "Consequence 2", ..."): each name must be a
# section of that notebook in the guide's language, or the teacher looks for a cell that is not there.
GUIDES = {ROOT / "docs" / "teaching.md": ("## Running one cell again", r'"([^"]+)"', ""),
          ROOT / "docs" / "teaching.zh.md": ("## 重新运行一个单元格", r"“([^”]+)”", ".zh")}


def section_names(path):
    return [line.lstrip("#").strip() for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "markdown" for line in cell.source.splitlines() if line.startswith("#")]


def named_sections(guide):
    """(notebook number, a section name) for each name the guide's re-run section gives in its list items."""
    heading, quoted, _ = GUIDES[guide]
    section = guide.read_text().split(heading, 1)[1].split("\n## ", 1)[0]
    for paragraph in section.split("\n\n"):
        for item in re.split(r"\n(?=- )", paragraph):
            number = re.match(r"- (\d\d)", item.strip())
            if number:
                yield from ((number.group(1), name) for name in re.findall(quoted, re.sub(r"\s+", " ", item)))


@pytest.mark.parametrize("guide", GUIDES, ids=lambda path: path.name)
def test_every_section_a_guide_names_is_a_section_of_that_notebook(guide):
    suffix = GUIDES[guide][2]
    sections = {path.name[:2]: section_names(path) for path in NOTEBOOKS.glob(f"[0-9][0-9]_*{suffix}.ipynb")
                if path.name.endswith(f"{suffix}.ipynb") and (suffix or ".zh." not in path.name)}
    named = list(named_sections(guide))
    assert len(named) > 10
    assert [(number, name) for number, name in named
            if not any(section == name or section.startswith(name + ":") or section.startswith(name + "：")
                       for section in sections[number])] == []


def test_the_guides_grants_for_ones_own_server_are_the_ones_grant_row_rights_runs():
    from memory_cookbook.from_notebooks.postgres_store import GRANTS, SIGNATURES

    def grants(text):
        return sorted(" ".join(statement.split()) for statement in text.split(";") if "GRANT " in statement
                      and not statement.strip().startswith("REVOKE"))

    guide = (ROOT / "docs" / "own_postgres_server.md").read_text(encoding="utf-8")
    [block] = [block for block in re.findall(r"```sql\n(.*?)```", guide, re.S) if "GRANT USAGE ON SCHEMA" in block]
    functions = ", ".join(f"memory_cookbook.{name}({types})" for name, types in SIGNATURES.items())
    assert grants(block) == grants(GRANTS.format(schema="memory_cookbook", role="memory_app", functions=functions))


def test_one_command_line_every_script_in_maintainings_table_and_no_console_scripts_beside_them():
    import tomllib

    table = (ROOT / "docs" / "maintaining.md").read_text().split("## The command line")[1].split("\n## ")[0]
    listed = set(re.findall(r"^\| `(\w+\.py)` \|", table, re.M))
    assert listed == {path.name for path in (ROOT / "scripts").glob("*.py")}
    for project in (ROOT / "pyproject.toml", ROOT / "tools" / "pyproject.toml"):
        assert "scripts" not in tomllib.loads(project.read_text())["project"], project
