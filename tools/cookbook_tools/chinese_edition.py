"""The Chinese edition, written from one source: every NN_name.zh.ipynb is the English notebook's code cells and
outputs, cell for cell in the English order, with the Chinese Markdown cells that live in the Chinese notebook itself.

- Cell ids are names, not positions: a cell without one, or with a positional `cell-N`, gets an id derived once from
  its notebook and its text (8 hex digits); an id, once given, never changes. A code cell keeps its English id in the
  Chinese notebook, so the twin of an English cell has the same id.
- Each Chinese Markdown cell records, in its metadata, the English cell it translates and a digest of that English
  cell's text when it was translated: {"translation": {"of": ENGLISH_ID, "sha256": DIGEST}}. A cell that only the
  Chinese edition has (01's glossary) says so and where it stands: {"translation": {"chinese_only": true, "after":
  ENGLISH_ID}}. An English Markdown cell with no translation yet is written in English, with "sha256": null.
- Labels that the code prints in English are put in Chinese in the Chinese outputs (a folded answer's summary,
  memory_cookbook/classroom/folded.py; 05's memory explorer, its fallback text and its saved widget state,
  memory_cookbook/classroom/explorer.py; a memory card's text and HTML, rendered again from the card's data,
  memory_cookbook/desk/card.py); the pages pick "Show the code" by the page's language (tools/pages.py).

    python scripts/sync_chinese.py                                   # ids, then every .zh.ipynb written
    python scripts/sync_chinese.py --check                           # exit 1 and list what is out of date
    python scripts/sync_chinese.py --translated 04_wrapper.zh.ipynb:ID  # this cell now translates the current English
    python scripts/sync_chinese.py --adopt 09_many_app_servers.zh.ipynb # a twin mirrored by hand: pair by position
    python scripts/sync_chinese.py --translated README.zh.md:12       # that section translates the English as it is

The check also keeps README.zh.md and docs/teaching.zh.md in step with their English paragraphs
(tools/cookbook_tools/chinese_documents.py).
"""

import argparse
import copy
import hashlib
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from memory_cookbook.classroom import explorer, folded
from memory_cookbook.desk import card
from cookbook_tools import chinese_documents
from cookbook_tools.paths import NOTEBOOKS

KEY = "translation"
POSITIONAL_ID = re.compile(r"cell-\d+")
VALID_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # nbformat 4.5
# What the English code prints, as the Chinese edition shows it (the folded answer's label: folded.summary() gives
# the same in a Chinese notebook's JupyterLab kernel, so that Run All then Save changes nothing).
OUTPUT_LABELS = {f"<summary>{folded.SUMMARY}</summary>": f"<summary>{folded.CHINESE_SUMMARY}</summary>"}
COMMAND = "scripts/sync_chinese.py"


@dataclass(frozen=True)
class Problem:
    """Something --check reports: in which notebook, which cell (its id), and what to do."""

    notebook: str
    cell: str
    what: str
    to_translate: bool = False  # a translator's work (the sync still writes the notebook), not a broken notebook

    def __str__(self) -> str:
        return f"{self.notebook} cell {self.cell}: {self.what}"


class SyncError(Exception):
    """A Chinese notebook that cannot be written (the problems say why); nothing of it was written."""


def digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def chinese_path(english_path: Path) -> Path:
    return english_path.with_name(english_path.name.removesuffix(".ipynb") + ".zh.ipynb")


def english_notebooks(folder: Path) -> list[Path]:
    return sorted(path for path in folder.glob("[0-9][0-9]_*.ipynb") if not path.name.endswith(".zh.ipynb"))


def read(path: Path) -> Any:
    return nbformat.read(path, as_version=4)


def write(notebook: Any, path: Path) -> bool:
    """As JupyterLab's save writes it (nbformat's JSON), so that opening and saving a notebook changes nothing."""
    text = nbformat.writes(notebook) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
        return True
    return False


def has_stable_id(cell: Any) -> bool:
    cell_id = cell.get("id")
    return bool(cell_id) and not POSITIONAL_ID.fullmatch(cell_id)


def new_id(notebook_name: str, cell: Any, used: set[str]) -> str:
    """An id from the notebook's name and the cell's text, not yet used in the notebook."""
    for attempt in range(1000):
        salt = f"\0{attempt}" if attempt else ""
        candidate = digest(f"{notebook_name}\0{cell.cell_type}\0{cell.source}{salt}")[:8]
        if candidate not in used:
            return candidate
    raise RuntimeError(f"{notebook_name}: no free cell id found for a cell starting {cell.source[:40]!r}")


def give_stable_ids(notebook: Any, notebook_name: str, cells: Iterable[Any] | None = None,
                     used: Iterable[str] = ()) -> list[tuple[str | None, str]]:
    """Give an id to each cell (of `cells`, default all) that has none or a positional one; keep every other id.
    Returns [(old id, new id)]. Running it again changes nothing."""
    cells = notebook.cells if cells is None else cells
    taken = {cell.get("id") for cell in notebook.cells if has_stable_id(cell)} | set(used)
    changed: list[tuple[str | None, str]] = []
    for cell in cells:
        if not has_stable_id(cell):
            cell_id = new_id(notebook_name, cell, taken)
            changed.append((cell.get("id"), cell_id))
            cell.id = cell_id
            taken.add(cell_id)
    return changed


def translation(cell: Any) -> Any:
    return cell.get("metadata", {}).get(KEY)


def translated_outputs(outputs: list[Any]) -> list[Any]:
    """The outputs with the English labels the code prints put in Chinese (their HTML only)."""
    outputs = copy.deepcopy(outputs)
    for output in outputs:
        data = output.get("data", {})
        if "text/html" in data:
            html = data["text/html"]
            for english, chinese in OUTPUT_LABELS.items():
                html = html.replace(english, chinese)
            data["text/html"] = html
        if WIDGET_VIEW in data and "text/plain" in data:  # the memory explorer's text where widgets do not run
            data["text/plain"] = explorer.in_chinese("".join(data["text/plain"]))
        if card.CARD_MIME in data:  # a memory card: its text and HTML rendered again from its data, in Chinese
            data["text/plain"] = card.card_text(data[card.CARD_MIME], "zh")
            data["text/html"] = card.card_html(data[card.CARD_MIME], "zh")
    return outputs


WIDGET_VIEW, WIDGET_STATE = "application/vnd.jupyter.widget-view+json", "application/vnd.jupyter.widget-state+json"


def translated_metadata(metadata: Any) -> Any:
    """The notebook's metadata with the memory explorer's saved widget state (what JupyterLab shows before the kernel
    runs) in the words the explorer uses in a Chinese notebook."""
    metadata = copy.deepcopy(metadata)
    for model in metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {}).values():
        state = model.get("state", {})
        if model.get("model_name") == "DropdownModel":
            english = {word: key for key, word in explorer.ENGLISH.items()}
            if state.get("description") in english:
                state["description"] = explorer.CHINESE[english[state["description"]]]
            state["_options_labels"] = [explorer.CHINESE["none"] if label == explorer.ENGLISH["none"] else label
                                        for label in state.get("_options_labels", [])]
        elif model.get("model_name") == "HTMLModel" and state.get("value"):
            state["value"] = explorer.in_chinese(state["value"])
    return metadata


def chinese_twin(english_cell: Any) -> Any:
    twin = copy.deepcopy(english_cell)
    if twin.cell_type == "code":
        twin.outputs = translated_outputs(twin.outputs)
    return twin


def untranslated(english_cell: Any, chinese_name: str, used: set[str]) -> Any:
    """A place holder for an English Markdown cell with no translation yet: the English text, digest null."""
    cell = nbformat.v4.new_markdown_cell(english_cell.source)
    cell.metadata[KEY] = {"of": english_cell.id, "sha256": None}
    cell.id = new_id(chinese_name, cell, used)
    return cell


class Edition:
    """One English notebook and its Chinese twin, as they are on disk, and the Chinese notebook the sync writes."""

    def __init__(self, english_path: Path) -> None:
        self.english_path, self.chinese_path = english_path, chinese_path(english_path)
        self.english = read(english_path)
        self.chinese = read(self.chinese_path) if self.chinese_path.exists() else nbformat.v4.new_notebook()
        self.name = self.chinese_path.name
        self.problems: list[Problem] = []
        self.notices: list[str] = []

    def problem(self, cell: str, what: str, notebook: str | None = None, to_translate: bool = False) -> None:
        self.problems.append(Problem(notebook or self.name, cell, what, to_translate))

    def translations(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """({English id: Chinese cell}, {English id: [Chinese-only cells after it]}) from the Chinese Markdown."""
        by_english: dict[str, Any] = {}
        chinese_only: dict[str, list[Any]] = {}
        for cell in self.chinese.cells:
            if cell.cell_type != "markdown":
                continue
            record = translation(cell)
            if not record:
                self.problem(cell.get("id"), f"a Chinese Markdown cell says neither which English cell it translates"
                             f" nor that it is Chinese-only (a twin mirrored by hand: `{COMMAND} --adopt {self.name}`;"
                             f" else set its metadata {KEY!r})")
            elif record.get("chinese_only"):
                chinese_only.setdefault(record.get("after"), []).append(cell)
            elif record.get("of") in by_english:
                self.problem(cell.get("id"), f"a second translation of English cell {record.get('of')} (the first is"
                             f" cell {by_english[record['of']].get('id')}): keep one")
            else:
                by_english[record.get("of")] = cell
        return by_english, chinese_only

    def synced(self) -> Any:
        """The Chinese notebook as the sync writes it; self.problems says what a translator still has to do."""
        by_english, chinese_only = self.translations()
        english_ids = {cell.get("id") for cell in self.english.cells}
        for anchor, cells in chinese_only.items():
            if anchor not in english_ids:
                for cell in cells:
                    self.problem(cell.get("id"), f"a Chinese-only cell stands after English cell {anchor}, which no"
                                 f" longer exists: set its metadata {KEY}.after to the id of the English cell it"
                                 " should follow")
        used = {cell.get("id") for cell in self.chinese.cells} | english_ids
        cells = []
        for english_cell in self.english.cells:
            if english_cell.cell_type != "markdown":
                cells.append(chinese_twin(english_cell))
            else:
                cells.append(self.translation_of(english_cell, by_english.pop(english_cell.get("id"), None), used))
            cells += [copy.deepcopy(cell) for cell in chinese_only.get(english_cell.get("id"), [])]
        for english_id, cell in by_english.items():
            self.notices.append(f"{self.name} cell {cell.get('id')}: dropped, English cell {english_id} is gone"
                                f" (its text began {cell.source[:60]!r})")
        synced = copy.deepcopy(self.english)
        synced.cells = cells
        synced.metadata = translated_metadata(synced.metadata)
        return synced

    def translation_of(self, english_cell: Any, chinese_cell: Any, used: set[str]) -> Any:
        if chinese_cell is None:
            chinese_cell = untranslated(english_cell, self.name, used)
            used.add(chinese_cell.id)
        else:
            chinese_cell = copy.deepcopy(chinese_cell)
        recorded = translation(chinese_cell).get("sha256")
        then = f"then `{COMMAND} --translated {self.name}:{chinese_cell.id}`"
        if recorded is None:
            self.problem(chinese_cell.id, f"English cell {english_cell.get('id')} has no translation yet (its English"
                         f" text stands here): translate it, {then}", to_translate=True)
        elif recorded != digest(english_cell.source):
            self.problem(chinese_cell.id, f"English cell {english_cell.get('id')} changed after this translation:"
                         f" retranslate it, {then}", to_translate=True)
        return chinese_cell

    def id_problems(self) -> None:
        for notebook, name in ((self.english, self.english_path.name), (self.chinese, self.name)):
            cells = notebook.cells if notebook is self.english else \
                [cell for cell in notebook.cells if cell.cell_type == "markdown"]
            for index, cell in enumerate(cells):
                if not has_stable_id(cell):
                    self.problem(cell.get("id") or f"#{index}", f"a positional or missing cell id: `{COMMAND}` gives"
                                 " it a stable one", notebook=name)
            ids = [cell.get("id") for cell in notebook.cells]
            for cell_id in sorted({cell_id for cell_id in ids if ids.count(cell_id) > 1}):
                self.problem(cell_id, "the id of more than one cell: give all but one a new id", notebook=name)
            for cell_id in ids:
                if cell_id and not VALID_ID.fullmatch(cell_id):
                    self.problem(cell_id, "not a valid nbformat cell id (1-64 of a-z A-Z 0-9 - _)", notebook=name)

    def out_of_date(self, synced: Any) -> None:
        """Problems naming each cell where the committed Chinese notebook differs from what the sync writes."""
        committed = {cell.get("id"): cell for cell in self.chinese.cells}
        if not self.chinese_path.exists():
            self.problem("-", f"missing: `{COMMAND}` writes it")
            return
        for cell in synced.cells:
            was = committed.get(cell.get("id"))
            if was != cell:
                twin = "its code or outputs differ from the English" if cell.cell_type != "markdown" else "differs"
                self.problem(cell.get("id"), f"out of date ({twin if was else 'missing'}): `{COMMAND}` rewrites it")
        synced_ids = {cell.get("id") for cell in synced.cells}
        orders = [[cell.get("id") for cell in cells if cell.get("id") in committed.keys() & synced_ids]
                  for cells in (self.chinese.cells, synced.cells)]
        if orders[0] != orders[1]:
            first = next(synced_id for synced_id, was in zip(*orders, strict=True) if synced_id != was)
            self.problem(first, f"out of order from here on (the English order differs): `{COMMAND}` rewrites the"
                         " notebook")
        for cell_id in committed.keys() - synced_ids:
            self.problem(cell_id, f"not in the English notebook: `{COMMAND}` removes it")
        if synced.metadata != self.chinese.metadata or \
                (synced.nbformat, synced.nbformat_minor) != (self.chinese.nbformat, self.chinese.nbformat_minor):
            self.problem("-", f"the notebook's metadata differs from the English: `{COMMAND}` rewrites it")


def check(folder: Path = NOTEBOOKS) -> list[Any]:
    """Every problem with the Chinese edition in `folder`, writing nothing: [] when it is in sync."""
    problems = []
    for english_path in english_notebooks(folder):
        edition = Edition(english_path)
        edition.id_problems()
        edition.out_of_date(edition.synced())
        problems += edition.problems
    return problems


def sync(folder: Path = NOTEBOOKS, names: Iterable[str] | None = None,
         report: Callable[..., None] = print) -> list[Any]:
    """Give stable ids, then write every Chinese notebook (or those named); returns the problems a translator still
    has to solve. A notebook that cannot be written raises SyncError before anything of it is written."""
    problems = []
    for english_path in english_notebooks(folder):
        if names and chinese_path(english_path).name not in names and english_path.name not in names:
            continue
        edition = Edition(english_path)
        renamed = give_stable_ids(edition.english, english_path.name)
        renamed_chinese = give_stable_ids(edition.chinese, edition.name, [
            cell for cell in edition.chinese.cells if cell.cell_type == "markdown"],
            used={cell.id for cell in edition.english.cells})
        synced = edition.synced()
        fatal = [problem for problem in edition.problems if not problem.to_translate]
        if fatal:
            raise SyncError("\n".join(map(str, fatal)))
        if write(edition.english, english_path):
            report(f"{english_path.name}: written (cells given stable ids: {len(renamed)})")
        if write(synced, edition.chinese_path):
            report(f"{edition.name}: written (Markdown cells given stable ids: {len(renamed_chinese)})")
        for notice in edition.notices:
            report(notice)
        problems += edition.problems
    return problems


def adopt(chinese_name: str, folder: Path = NOTEBOOKS) -> int:
    """A Chinese notebook mirrored by hand, cell for cell: record for each of its Markdown cells that it translates
    the English cell at the same position, as the English text is now (cells already marked are left as they are,
    and a Chinese-only cell is skipped). Gives stable ids first. Returns how many cells it marked."""
    english_path = folder / chinese_name.replace(".zh.ipynb", ".ipynb")
    edition = Edition(english_path)
    give_stable_ids(edition.english, english_path.name)
    paired = [cell for cell in edition.chinese.cells if not (translation(cell) or {}).get("chinese_only")]
    kinds = ([cell.cell_type for cell in edition.english.cells], [cell.cell_type for cell in paired])
    if kinds[0] != kinds[1]:
        at = next((index for index, (english, chinese) in enumerate(zip(*kinds, strict=False)) if english != chinese),
                  min(map(len, kinds)))
        raise SyncError(f"{chinese_name}: its cells do not stand cell for cell with {english_path.name} (from #{at}:"
                        f" {kinds[1][at:at + 3]} against {kinds[0][at:at + 3]}); mark a Chinese-only cell's metadata"
                        f" {KEY} as {{\"chinese_only\": true, \"after\": ENGLISH_ID}}")
    marked = 0
    for english_cell, chinese_cell in zip(edition.english.cells, paired, strict=True):
        if chinese_cell.cell_type == "markdown" and not translation(chinese_cell):
            chinese_cell.metadata[KEY] = {"of": english_cell.id, "sha256": digest(english_cell.source)}
            marked += 1
    write(edition.english, english_path)
    write(edition.chinese, edition.chinese_path)
    return marked


def mark_translated(cell_names: Iterable[str], folder: Path = NOTEBOOKS,
                    documents: Any = None) -> None:
    """Record, for each "NN_name.zh.ipynb:CELL_ID", that the Chinese cell translates its English cell as it is now;
    for each "README.zh.md:LINE" (or a whole "README.zh.md"), that the section at that line translates the English
    paragraphs it stands for as they are now."""
    by_notebook: dict[str, list[str]] = {}
    for cell_name in cell_names:
        notebook, _, cell_id = cell_name.partition(":")
        if notebook.endswith(".md"):
            try:
                english, chinese = chinese_documents.pair_of(notebook, documents)
                chinese_documents.mark_translated(chinese, english, int(cell_id) if cell_id else None)
            except ValueError as error:
                raise SyncError(str(error)) from error
            continue
        notebook = Path(notebook).name
        by_notebook.setdefault(notebook, []).append(cell_id)
    for notebook, cell_ids in by_notebook.items():
        path = folder / notebook
        if not path.exists():
            raise SyncError(f"{path}: no such Chinese notebook (give NN_name.zh.ipynb:CELL_ID)")
        chinese, english = read(path), read(folder / notebook.replace(".zh.ipynb", ".ipynb"))
        sources = {cell.get("id"): cell.source for cell in english.cells}
        cells = {cell.get("id"): cell for cell in chinese.cells}
        for cell_id in cell_ids:
            record = translation(cells[cell_id]) if cell_id in cells else None
            if not record or record.get("of") not in sources:
                raise SyncError(f"{notebook} cell {cell_id}: not a translation of a cell of the English notebook"
                                f" (`{COMMAND} --check` names the cells to retranslate)")
            record["sha256"] = digest(sources[record["of"]])
        write(chinese, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the Chinese edition (notebooks/*.zh.ipynb) from the English "
                                     "notebooks' code and outputs and the Chinese notebooks' own Markdown.")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="write nothing; exit 1 and list every cell out of date")
    action.add_argument("--translated", nargs="+", metavar="NN_name.zh.ipynb:CELL_ID",
                        help="record that these Chinese cells translate their English cells as they are now (also"
                             " README.zh.md:LINE or docs/teaching.zh.md:LINE: the section that opens at that line)")
    action.add_argument("--adopt", nargs="+", metavar="NN_name.zh.ipynb",
                        help="a twin mirrored by hand: its Markdown cells translate the English ones at their position")
    parser.add_argument("--notebooks", type=Path, default=NOTEBOOKS, help="the notebooks' folder (default: notebooks/)")
    parser.add_argument("names", nargs="*", metavar="NOTEBOOK", help="sync only these (default: all)")
    arguments = parser.parse_args(argv)
    folder = arguments.notebooks
    names = [Path(name).name for name in arguments.names]  # a notebook named by its path works too
    try:
        if arguments.check:
            problems = check(folder) + chinese_documents.check()
            for problem in problems:
                print(problem)
            if problems:
                print(f"the Chinese edition is out of date: {len(problems)} problems above", file=sys.stderr)
                return 1
            print(f"the Chinese edition is in sync with the {len(english_notebooks(folder))} English notebooks, and"
                  f" {len(chinese_documents.DOCUMENT_PAIRS)} Chinese documents with theirs")
            return 0
        if arguments.translated:
            mark_translated(arguments.translated, folder)
        elif arguments.adopt:
            for name in arguments.adopt:
                print(f"{Path(name).name}: {adopt(Path(name).name, folder)} Markdown cells recorded as translations")
        for problem in sync(folder, names):
            print(f"to translate: {problem}")
        return 0
    except SyncError as error:
        print(error, file=sys.stderr)
        return 1
