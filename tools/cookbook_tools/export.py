"""Generate modules from the notebooks' export cells, as nbdev does.

A code cell whose first line is `#| export` goes to the lesson module, notebooks/jev_memory_lesson.py;
`#| export NAME` goes to the runtime package's generated folder, memory_cookbook/from_notebooks/NAME.py. Each module
gets the import statements its own cells wrote (those it uses), and `from other import name` for a name it uses that
exactly one other generated module defines. The runtime package never imports the lesson. Each block of the generated
file names the cell it came from (`# %% 01_tickets.ipynb <cell id>`, the notebook's path relative to the file).

The export stops with an ExportError naming the cells when a name is bound twice in one module (two imports of
different things, an import and a definition, two definitions), when a name one module uses is defined by two
others, when a runtime module would use the lesson, or when a name is defined nowhere.
"""

import argparse
import ast
import builtins
import json
import os
import symtable
import sys
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from cookbook_tools.paths import ENGLISH_NOTEBOOKS, EXPORTED, NOTEBOOKS, ROOT

MARK = "#| export"
LESSON = "jev_memory_lesson"
def header(mark: str, notebooks: list[str]) -> str:
    """A generated module's docstring: the notebooks whose cells it comes from, which are what to edit."""
    named = "notebooks/" + (notebooks[0] if len(notebooks) == 1 else f"{', '.join(notebooks[:-1])} and {notebooks[-1]}")
    text = (f"Generated from the `{mark}` cells of {named} by scripts/export_module.py. Edit those cells, then run"
            " scripts/run_notebooks.py (or export_module.py): never this file.")
    return '"""' + textwrap.fill(text, 117, break_on_hyphens=False) + '"""\n'
MODULE_GLOBALS = {"__file__", "__name__"}
Imported = tuple[str | None, str, str | None]  # (module or None, name, alias) of one import


class ExportError(Exception):
    """The export cells cannot make sound modules; the message names the cells."""


def module_name(target: str) -> str:
    """The import name of an export target: the lesson is `jev_memory_lesson`, the others are in the package."""
    return target if target == LESSON else f"{EXPORTED.parent.name}.{EXPORTED.name}.{target}"


def module_path(target: str) -> Path:
    """Where an export target's module is written: the lesson beside the notebooks, the others in the package."""
    return NOTEBOOKS / f"{LESSON}.py" if target == LESSON else EXPORTED / f"{target}.py"


def export_target(cell: Any) -> str | None:
    """The module a code cell exports to ('jev_memory_lesson' for a bare `#| export`), or None."""
    first = cell.source.partition("\n")[0].strip()
    if cell.cell_type != "code" or first.split(" ")[:2] != MARK.split(" "):
        return None
    return first[len(MARK):].strip() or LESSON


@dataclass(frozen=True)
class ExportCell:
    notebook: Path  # the notebook's path
    cell_id: str
    target: str
    imports: tuple  # (module or None, name, alias) for each top-level import
    body: str  # the cell's code without its marker and imports

    @property
    def label(self) -> str:
        return f"{self.notebook.name} cell {self.cell_id}"

    def marker(self, target: str) -> str:
        """The line before this cell's block in `target`'s file: the notebook relative to that file, and the cell."""
        notebook = os.path.relpath(self.notebook, module_path(target).parent)
        return f"# %% {notebook.replace(os.sep, '/')} {self.cell_id}"


def export_cells(notebook_paths: Iterable[Path]) -> Iterator["ExportCell"]:
    """Every export cell of these notebooks, in notebook order."""
    for notebook_path in notebook_paths:
        for number, cell in enumerate(nbformat.read(notebook_path, as_version=4).cells):
            target = export_target(cell)
            if target:
                imports, body = split_imports(cell.source.partition("\n")[2].strip("\n"))
                yield ExportCell(notebook_path, cell.get("id") or f"#{number}", target, tuple(imports), body)


def split_imports(source: str) -> tuple[list[Imported], str]:
    """(the cell's top-level import statements as (module or None, name, alias), the rest of its source)."""
    tree = ast.parse(source)
    lines, imports, import_lines = source.splitlines(), [], set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            imports += [(module, alias.name, alias.asname) for alias in node.names]
            import_lines |= set(range(node.lineno - 1, node.end_lineno))
    body = "\n".join(line for number, line in enumerate(lines) if number not in import_lines)
    return imports, body.strip("\n")


def bound_name(imported: Imported) -> str:
    module, name, alias = imported
    return alias or (name if module else name.split(".")[0])


def free_names(source: str) -> set[str]:
    """Names the code reads at module level, or as globals inside its functions and classes, but does not bind."""
    def read(table: symtable.SymbolTable) -> Iterator[str]:
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table.get_type() == "module" or symbol.is_global()):
                yield symbol.get_name()
        for child in table.get_children():
            yield from read(child)

    top = symtable.symtable(source, "<module>", "exec")
    bound = {symbol.get_name() for symbol in top.get_symbols() if symbol.is_assigned() or symbol.is_imported()}
    return set(read(top)) - bound - set(dir(builtins)) - MODULE_GLOBALS


def defined_names(source: str) -> set[str]:
    """Names the code binds at module level (assignments, functions, classes), not the ones it imports."""
    top = symtable.symtable(source, "<module>", "exec")
    return {symbol.get_name() for symbol in top.get_symbols() if symbol.is_assigned()}


def import_lines(imports: Iterable[Imported]) -> list[str]:
    """`import m` lines, then one `from m import a, b` line per module, sorted, wrapped past 120 characters."""
    by_module = {}
    for module, name, alias in imports:
        by_module.setdefault(module, []).append(f"{name} as {alias}" if alias else name)
    lines = [f"import {name}" for name in sorted(set(by_module.pop(None, [])))]
    for module, names in sorted(by_module.items()):
        prefix, joined = f"from {module} import ", ", ".join(sorted(set(names)))
        line = prefix + joined
        if len(line) > 120:
            indent = " " * (len(prefix) + 1)
            line = prefix + "(" + textwrap.fill(joined, 116 - len(prefix), subsequent_indent=indent) + ")"
        lines.append(line)
    return lines


def bindings(cells: Iterable["ExportCell"]) -> dict[str, list[tuple[Any, "ExportCell"]]]:
    """{name: [(what binds it, the cell)]} of one module's cells: each import as written, and each definition."""
    bound = {}
    for cell in cells:
        for imported in cell.imports:
            bound.setdefault(bound_name(imported), []).append((imported, cell))
        for name in defined_names(cell.body) if cell.body else ():
            bound.setdefault(name, []).append(("definition", cell))
    return bound


def check_bound_once(target: str, bound: dict[str, list[tuple[Any, "ExportCell"]]]) -> None:
    """A name bound twice in one module is an ExportError (the same import written in two cells is one binding)."""
    for name, binders in bound.items():
        first_what, first_cell = binders[0]
        clash = next(((what, cell) for what, cell in binders[1:] if what != first_what or what == "definition"), None)
        if clash:
            raise ExportError(f"{module_path(target).name}: {name!r} is bound twice, by {describe(first_what)} in"
                              f" {first_cell.label} and by {describe(clash[0])} in {clash[1].label}: rename one")


def describe(what: Any) -> str:
    if what == "definition":
        return "a definition"
    module, name, alias = what
    return f"`{'from ' + module + ' ' if module else ''}import {name}{' as ' + alias if alias else ''}`"


def module_sources(notebook_paths: Iterable[Path] = ENGLISH_NOTEBOOKS) -> dict[str, str]:
    """{export target: text} of every generated module (module_path(target) says where it goes). Raises ExportError
    as the module's docstring says, and ImportError for modules that would import each other."""
    by_target = {}
    for cell in export_cells(notebook_paths):
        by_target.setdefault(cell.target, []).append(cell)
    bound = {target: bindings(cells) for target, cells in by_target.items()}
    for target in by_target:
        check_bound_once(target, bound[target])
    definers = {}  # name: [(target, cell)] of the definitions
    for target in by_target:
        for name, binders in bound[target].items():
            definers.setdefault(name, []).extend((target, cell) for what, cell in binders if what == "definition")
    sources, uses = {}, {}
    for target, cells in by_target.items():
        body = "\n\n\n".join(f"{cell.marker(target)}\n{cell.body}" for cell in cells if cell.body)
        needed = free_names(body)
        own = {name: binders[0][0] for name, binders in bound[target].items() if binders[0][0] != "definition"}
        imports = [own[name] for name in sorted(needed & set(own))]
        uses[target] = set()
        for name in sorted(needed - set(own)):
            elsewhere = [(other, cell) for other, cell in definers.get(name, []) if other != target]
            user = next(cell for cell in cells if cell.body and name in free_names(cell.body))
            if not elsewhere:
                raise ExportError(f"{module_path(target).name} uses {name!r} ({user.label}), which none of its cells"
                                  " imports and no export cell defines: import it in that cell")
            if len(elsewhere) > 1:
                raise ExportError(f"{module_path(target).name} uses {name!r} ({user.label}), which two modules define:"
                                  f" {' and '.join(cell.label for _, cell in elsewhere[:2])}: rename one")
            definer = elsewhere[0][0]
            if definer == LESSON:
                raise ExportError(f"{module_path(target).name} uses {name!r} ({user.label}) from the lesson"
                                  f" ({elsewhere[0][1].label}): the runtime package never imports the lesson; move"
                                  " that code to the lesson or pass what it needs as an argument")
            uses[target].add(definer)
            imports.append((module_name(definer), name, None))
        docstring = header(MARK if target == LESSON else f"{MARK} {target}",
                           list(dict.fromkeys(cell.notebook.name for cell in cells)))
        public = sorted(name for name in set().union(*(defined_names(cell.body) for cell in cells if cell.body))
                        if not name.startswith("_"))
        listed = textwrap.fill(", ".join(map(json.dumps, public)), 119, initial_indent=" " * 11,
                               subsequent_indent=" " * 11)
        names = "__all__ = [" + listed[11:] + "]"
        sources[target] = (docstring + "\n" + "\n".join(import_lines(dict.fromkeys(imports))) + "\n\n" + names
                           + "\n\n\n" + body + "\n")
    check_no_cycle(uses)
    return sources


def check_no_cycle(uses: dict[str, set[str]]) -> None:
    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise ImportError(f"generated modules would import each other: {' → '.join([*path, name])}")
        for used in uses.get(name, ()):
            visit(used, [*path, name])

    for name in uses:
        visit(name, [])


def stale_modules(sources: dict[str, str]) -> list[str]:
    """The generated files that differ from what the notebooks give."""
    return [module_path(name).relative_to(ROOT).as_posix() for name, text in sources.items()
            if not module_path(name).exists() or module_path(name).read_text() != text]


def write_modules(sources: dict[str, str]) -> None:
    for name, text in sources.items():
        module_path(name).write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description="Write the generated modules from the notebooks' export cells.")
    parser.add_argument("--check", action="store_true", help="only check that the modules are up to date")
    try:
        sources = module_sources()
    except ExportError as error:
        sys.exit(f"export stopped: {error}")
    if parser.parse_args().check:
        stale = stale_modules(sources)
        if stale:
            sys.exit(f"stale: {', '.join(stale)}: run python scripts/export_module.py")
        print(f"up to date: {', '.join(module_path(name).relative_to(ROOT).as_posix() for name in sources)}")
        return
    write_modules(sources)
    print(f"wrote {', '.join(module_path(name).relative_to(ROOT).as_posix() for name in sources)}")
