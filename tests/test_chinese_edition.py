"""The Chinese edition (NN_name.zh.ipynb beside every notebook) is written from one source by scripts/sync_chinese.py
(tools/cookbook_tools/chinese_edition.py): the English code cells and outputs, the Chinese notebooks' own Markdown.
The committed edition is in sync; on copies in temporary folders, the sync follows the English and the check names
what a translator has to do."""

import json
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest
from test_published_figures import totals_line

from memory_cookbook.classroom import folded
from cookbook_tools import chinese_documents, chinese_edition
from cookbook_tools.paths import CHINESE_NOTEBOOKS, ENGLISH_NOTEBOOKS, NOTEBOOKS, ROOT

CJK = re.compile(r"[\u4e00-\u9fff]")
GLOSSARY_HEADING = "## 术语对照"
FOLDED_LABEL = "<summary>{}</summary>"


def read(path):
    return nbformat.read(path, as_version=4)


def write(notebook, path):
    path.write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")


def copy_of(tmp_path, *stems):
    """The English notebooks `stems` and their Chinese twins, copied into a notebooks folder under tmp_path."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    for stem in stems:
        for name in (f"{stem}.ipynb", f"{stem}.zh.ipynb"):
            shutil.copyfile(NOTEBOOKS / name, folder / name)
    return folder


def cell_with_id(notebook, cell_id):
    return next(cell for cell in notebook.cells if cell.get("id") == cell_id)


def translation_of(chinese, english_id):
    return next(cell for cell in chinese.cells if (cell.metadata.get("translation") or {}).get("of") == english_id)


def test_every_notebook_has_a_chinese_edition_beside_it():
    assert [chinese_edition.chinese_path(path) for path in ENGLISH_NOTEBOOKS] == CHINESE_NOTEBOOKS


def test_the_committed_chinese_edition_is_in_sync_with_the_english_notebooks():
    problems = chinese_edition.check()
    assert problems == [], "\n".join(map(str, problems))


@pytest.mark.parametrize("path", CHINESE_NOTEBOOKS, ids=lambda path: path.name)
def test_each_translation_is_chinese_with_its_english_cells_headings(path):
    english = {cell.id: cell for cell in read(path.with_name(path.name.replace(".zh.ipynb", ".ipynb"))).cells}
    for cell in read(path).cells:
        if cell.cell_type == "markdown":
            assert CJK.search(cell.source), cell.source[:80]
            record = cell.metadata["translation"]
            if not record.get("chinese_only"):
                headings = [re.findall(r"^(#+) ", text, re.M) for text in (english[record["of"]].source, cell.source)]
                assert headings[0] == headings[1], cell.source[:80]


def test_the_first_notebook_has_the_glossary_after_its_recap_so_its_cells_are_numbered_as_the_englishs():
    english, chinese = read(ENGLISH_NOTEBOOKS[0]), read(CHINESE_NOTEBOOKS[0])
    glossary = [cell for cell in chinese.cells if cell.source.startswith(GLOSSARY_HEADING)]
    assert len(glossary) == 1 and chinese.cells[-1] is glossary[0]
    assert glossary[0].metadata["translation"] == {"chinese_only": True, "after": english.cells[-1].id}
    assert [cell.cell_type for cell in chinese.cells[:-1]] == [cell.cell_type for cell in english.cells]
    for english_term, chinese_term in [("ticket", "工单"), ("routing", "路由"), ("gate", "门控"), ("memory", "记忆"),
                                       ("threshold", "阈值"), ("wrapper", "包装函数"), ("state", "state"),
                                       ("cache", "缓存"), ("customer", "客户")]:
        assert f"| {english_term} | {chinese_term} |" in glossary[0].source


def test_chinese_06_shows_the_published_totals():
    outputs = [output.get("text", "") for c in read(CHINESE_NOTEBOOKS[5]).cells for output in c.get("outputs", [])]
    assert totals_line() + "\n" in outputs


def html_outputs(path):
    return "".join(output.get("data", {}).get("text/html", "") for cell in read(path).cells
                   for output in cell.get("outputs", []))


def test_the_chinese_edition_labels_each_folded_answer_in_chinese():
    for english, chinese in zip(ENGLISH_NOTEBOOKS, CHINESE_NOTEBOOKS, strict=True):
        answers = html_outputs(english).count(FOLDED_LABEL.format(folded.SUMMARY))
        assert html_outputs(chinese).count(FOLDED_LABEL.format(folded.CHINESE_SUMMARY)) == answers, chinese.name
        assert folded.SUMMARY not in html_outputs(chinese), chinese.name


def test_a_chinese_notebooks_jupyterlab_kernel_labels_a_folded_answer_as_the_sync_does(monkeypatch):
    """JupyterLab's server names the notebook in JPY_SESSION_NAME: Run All then Save leaves the committed output."""
    answer = folded.FoldedAnswer("routed: cloud_ops 0.80")
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    english = nbformat.v4.new_output("display_data", data={"text/html": answer._repr_html_()})
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/student/cookbook/notebooks/02_routing.zh.ipynb")
    assert chinese_edition.translated_outputs([english])[0]["data"]["text/html"] == answer._repr_html_()
    assert FOLDED_LABEL.format(folded.CHINESE_SUMMARY) in answer._repr_html_()
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/student/cookbook/notebooks/02_routing.ipynb")
    assert answer._repr_html_() == english["data"]["text/html"]


# On copies: what the sync and the check do when the English changes

def test_changing_an_english_code_cell_then_syncing_updates_its_chinese_twin(tmp_path):
    folder = copy_of(tmp_path, "02_routing")
    english = read(folder / "02_routing.ipynb")
    code = next(cell for cell in english.cells if cell.cell_type == "code" and cell.outputs)
    code.source += "\nprint('changed')"
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="changed\n")]
    write(english, folder / "02_routing.ipynb")
    assert [problem.cell for problem in chinese_edition.check(folder)] == [code.id]

    assert chinese_edition.main(["--notebooks", str(folder)]) == 0
    twin = cell_with_id(read(folder / "02_routing.zh.ipynb"), code.id)
    assert (twin.source, twin.outputs) == (code.source, code.outputs)
    assert chinese_edition.check(folder) == []


def test_an_english_output_changed_alone_makes_the_check_name_its_twin(tmp_path):
    folder = copy_of(tmp_path, "02_routing")
    english = read(folder / "02_routing.ipynb")
    code = next(cell for cell in english.cells if cell.cell_type == "code" and cell.outputs)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="another output, the same code\n")]
    write(english, folder / "02_routing.ipynb")
    problems = chinese_edition.check(folder)
    assert [problem.cell for problem in problems] == [code.id] and "outputs differ" in problems[0].what


def test_a_cell_id_valid_only_by_its_prefix_is_named(tmp_path):
    folder = copy_of(tmp_path, "02_routing")
    chinese_path = folder / "02_routing.zh.ipynb"
    chinese = json.loads(chinese_path.read_text(encoding="utf-8"))
    cell = next(cell for cell in chinese["cells"] if cell["cell_type"] == "markdown")
    cell["id"] = cell["id"] + "!"  # a valid id, then one character no cell id may hold
    chinese_path.write_text(json.dumps(chinese), encoding="utf-8")
    assert [(problem.cell, problem.what) for problem in chinese_edition.check(folder)
            if "valid" in problem.what] == [(cell["id"], "not a valid nbformat cell id (1-64 of a-z A-Z 0-9 - _)")]


def test_moving_an_english_cell_makes_the_check_name_the_chinese_notebook_out_of_order(tmp_path):
    folder = copy_of(tmp_path, "03_gate")
    english = read(folder / "03_gate.ipynb")
    english.cells[6], english.cells[8] = english.cells[8], english.cells[6]
    write(english, folder / "03_gate.ipynb")
    problems = chinese_edition.check(folder)
    assert len(problems) == 1 and "out of order" in problems[0].what, problems
    chinese_edition.sync(folder, report=lambda line: None)
    assert [cell.id for cell in read(folder / "03_gate.zh.ipynb").cells if cell.cell_type == "code"] == \
           [cell.id for cell in english.cells if cell.cell_type == "code"]


def test_changing_an_english_markdown_cell_makes_the_check_name_its_chinese_cell(tmp_path, capsys):
    folder = copy_of(tmp_path, "03_gate")
    english = read(folder / "03_gate.ipynb")
    changed = next(cell for cell in english.cells[1:] if cell.cell_type == "markdown")
    changed.source += " One more sentence."
    write(english, folder / "03_gate.ipynb")
    chinese_cell = translation_of(read(folder / "03_gate.zh.ipynb"), changed.id)

    assert chinese_edition.main(["--check", "--notebooks", str(folder)]) == 1
    named = [line for line in capsys.readouterr().out.splitlines() if line.startswith("03_gate.zh.ipynb cell")]
    assert len(named) == 1 and named[0].startswith(f"03_gate.zh.ipynb cell {chinese_cell.id}:"), named
    assert f"English cell {changed.id} changed" in named[0]

    chinese_edition.main(["--notebooks", str(folder)])  # the sync keeps the translation; the check still names it
    assert [problem.cell for problem in chinese_edition.check(folder)] == [chinese_cell.id]
    retranslated = f"03_gate.zh.ipynb:{chinese_cell.id}"
    assert chinese_edition.main(["--notebooks", str(folder), "--translated", retranslated]) == 0
    assert chinese_edition.check(folder) == []


def test_an_english_cell_with_no_translation_is_named_and_stands_in_english(tmp_path):
    folder = copy_of(tmp_path, "03_gate")
    english = read(folder / "03_gate.ipynb")
    ids_before = [cell.id for cell in english.cells]
    english.cells.insert(5, nbformat.v4.new_markdown_cell("A paragraph written after the translation."))
    english.cells[5].id = "cell-5"  # a positional id, as the committed ones were: the sync gives it a name
    write(english, folder / "03_gate.ipynb")

    chinese_edition.sync(folder, report=lambda line: None)
    english = read(folder / "03_gate.ipynb")
    new_id = english.cells[5].id
    assert [cell.id for cell in english.cells] == [*ids_before[:5], new_id, *ids_before[5:]]
    placeholder = translation_of(read(folder / "03_gate.zh.ipynb"), new_id)
    assert placeholder.source == "A paragraph written after the translation."
    problems = chinese_edition.check(folder)
    assert [(problem.notebook, problem.cell) for problem in problems] == [("03_gate.zh.ipynb", placeholder.id)]
    assert f"English cell {new_id} has no translation" in problems[0].what


def positional(notebook):
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"
        cell.metadata.pop("translation", None)
    return notebook


def test_stable_ids_are_given_once_and_a_cell_inserted_later_changes_no_other_id():
    notebook = positional(read(NOTEBOOKS / "03_gate.ipynb"))
    del notebook.cells[4]["id"]
    chinese_edition.give_stable_ids(notebook, "03_gate.ipynb")
    ids = [cell.id for cell in notebook.cells]
    assert len(set(ids)) == len(ids) and not any(re.fullmatch(r"cell-\d+", cell_id) for cell_id in ids)
    nbformat.validate(notebook)
    assert chinese_edition.give_stable_ids(notebook, "03_gate.ipynb") == []  # idempotent

    notebook.cells[1].source += " Edited."  # an id is a name: editing the cell keeps it
    notebook.cells.insert(0, nbformat.v4.new_markdown_cell("new"))
    notebook.cells[0].id = "cell-0"
    chinese_edition.give_stable_ids(notebook, "03_gate.ipynb")
    assert [cell.id for cell in notebook.cells[1:]] == ids and notebook.cells[0].id not in ids


def test_a_twin_mirrored_by_hand_is_adopted_cell_for_cell(tmp_path):
    """What the lead runs on a twin edited by hand (positional ids, no translation metadata): both notebooks come out
    as committed but for the ids (given anew, from the cells' text now), each a stable name, a code cell's the same in
    both, and the edition then checks clean."""
    folder = copy_of(tmp_path, "02_routing")
    for name in ("02_routing.ipynb", "02_routing.zh.ipynb"):
        write(positional(read(folder / name)), folder / name)
    assert chinese_edition.check(folder)  # positional ids are named

    assert chinese_edition.main(["--notebooks", str(folder), "--adopt", "02_routing.zh.ipynb"]) == 0
    english, chinese = (read(folder / name) for name in ("02_routing.ipynb", "02_routing.zh.ipynb"))
    ids = [cell.id for cell in [*english.cells, *chinese.cells]]
    assert not any(chinese_edition.POSITIONAL_ID.fullmatch(cell_id) for cell_id in ids)
    code_ids = [[cell.id for cell in notebook.cells if cell.cell_type == "code"] for notebook in (english, chinese)]
    assert code_ids[0] == code_ids[1]
    for adopted, name in ((english, "02_routing.ipynb"), (chinese, "02_routing.zh.ipynb")):
        committed = read(NOTEBOOKS / name)
        for cell in [*adopted.cells, *committed.cells]:
            del cell["id"]
            cell.metadata.get("translation", {}).pop("of", None)  # names the English cell by its id
        assert adopted == committed
    assert chinese_edition.check(folder) == []


def test_a_chinese_markdown_cell_without_its_translation_record_stops_the_sync(tmp_path):
    folder = copy_of(tmp_path, "02_routing")
    chinese = read(folder / "02_routing.zh.ipynb")
    del chinese.cells[1].metadata["translation"]
    write(chinese, folder / "02_routing.zh.ipynb")
    before = (folder / "02_routing.zh.ipynb").read_text()
    with pytest.raises(chinese_edition.SyncError, match=f"02_routing.zh.ipynb cell {chinese.cells[1].id}: .*--adopt"):
        chinese_edition.sync(folder, report=lambda line: None)
    assert (folder / "02_routing.zh.ipynb").read_text() == before


# The Chinese README and guide: each section opens with `<!-- en: DIGEST ... -->`, the English paragraphs it
# translates (tools/cookbook_tools/chinese_documents.py).

def test_the_committed_chinese_readme_and_guide_are_in_step_with_the_english():
    problems = chinese_documents.check()
    assert problems == [], "\n".join(map(str, problems))


def copy_of_documents(tmp_path):
    pairs = []
    for english, chinese in chinese_documents.DOCUMENT_PAIRS:
        pair = []
        for path in (english, chinese):
            copy = tmp_path / path.relative_to(chinese_documents.ROOT)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
            pair.append(copy)
        pairs.append(tuple(pair))
    return pairs


def test_changing_an_english_paragraph_makes_the_check_name_its_chinese_section(tmp_path):
    pairs = copy_of_documents(tmp_path)
    english, chinese = pairs[0]  # README.md, README.zh.md
    paragraph = next(p for p in chinese_documents.paragraphs(english.read_text()) if p.text.startswith("## Test it"))
    section = next(section for section in chinese_documents.sections(chinese.read_text())[0]
                   if paragraph.digest in section.digests)
    before = chinese_documents.check(pairs)
    english.write_text(english.read_text().replace("## Test it", "## Test it, offline"))
    [problem] = [problem for problem in chinese_documents.check(pairs) if problem not in before]
    assert problem.line == section.line
    assert f"README.md line {paragraph.line} ('## Test it, offline')" in problem.what
    assert f"README.zh.md:{section.line}`" in problem.what


def test_rewrapping_an_english_paragraph_changes_nothing_and_a_new_one_is_named_with_its_marker(tmp_path):
    pairs = copy_of_documents(tmp_path)
    english, _ = pairs[1]  # docs/teaching.md, docs/teaching.zh.md
    before = chinese_documents.check(pairs)
    text = english.read_text().replace("## The lesson\n\n", "## The lesson\n\nA new paragraph.\n\n")
    english.write_text(text.replace("notebooks 01 to 06, for a class", "notebooks 01 to 06,\nfor a class"))
    [problem] = [problem for problem in chinese_documents.check(pairs) if problem not in before]
    assert "('A new paragraph.') has no translation" in problem.what
    assert chinese_documents.marker_line([chinese_documents.paragraph_digest("A new paragraph.")]) in problem.what


def test_the_sync_scripts_translated_records_the_section_the_check_names(tmp_path, monkeypatch):
    pairs = copy_of_documents(tmp_path)
    monkeypatch.setattr(chinese_documents, "DOCUMENT_PAIRS", pairs)
    english, _ = pairs[0]
    before = chinese_documents.check()
    english.write_text(english.read_text().replace("## Run it", "## Run it now"))
    [problem] = [problem for problem in chinese_documents.check() if problem not in before]
    folder = copy_of(tmp_path, "01_tickets")
    assert chinese_edition.main(["--notebooks", str(folder), "--translated", f"README.zh.md:{problem.line}"]) == 0
    assert chinese_documents.check() == before


@pytest.mark.slow  # pytest in a subprocess, and a kernel for each of two notebooks: about three seconds
def test_nbval_runs_a_named_chinese_notebook_in_a_kernel_that_knows_it_is_chinese_as_jupyterlabs_does(tmp_path):
    """`pytest notebooks/NN_name.zh.ipynb` (docs/maintaining.md) must reproduce the Chinese labels the sync wrote, so
    its kernel is told the notebook's name as JupyterLab's is; an English notebook's kernel is told its own."""
    cell = nbformat.v4.new_code_cell("from memory_cookbook.classroom import folded\nfolded.in_chinese_notebook()")
    for name, chinese in (("check.zh.ipynb", True), ("check.ipynb", False)):
        cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": str(chinese)}, execution_count=1)]
        cell.execution_count = 1
        write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / name)
    result = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pytest.ini"), "-p", "no:cacheprovider",
                             str(tmp_path / "check.zh.ipynb"), str(tmp_path / "check.ipynb")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "JPY_SESSION_NAME": "/elsewhere/02_routing.ipynb"})
    assert "2 passed" in result.stdout, result.stdout + result.stderr
