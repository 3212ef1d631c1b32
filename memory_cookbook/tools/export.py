"""Generate modules from the notebooks' export cells, as nbdev does.

A code cell whose first line is `#| export` goes to the lesson module, notebooks/basic_memory.py (installed as the
top-level module `basic_memory`); `#| export NAME` goes to memory_cookbook/NAME.py. Cells of one notebook share a
namespace, so a module needs imports that the cells did not write: each module gets the export cells' import
statements it uses, and `from other import name` for every name it uses that another generated module defines. A
name defined nowhere is an error.
"""

import ast
import argparse
import builtins
import symtable
import textwrap
import sys

import nbformat

from memory_cookbook.tools.paths import ENGLISH_NOTEBOOKS, NOTEBOOKS, PACKAGE, ROOT

MARK = "#| export"
LESSON = "basic_memory"
HEADER = '"""Generated from the notebooks\' `{mark}` cells by scripts/export_module.py: do not edit."""\n'
MODULE_GLOBALS = {"__file__", "__name__"}


def module_name(target):
    """The import name of an export target: the lesson is `basic_memory`, the others are in the package."""
    return target if target == LESSON else f"{PACKAGE.name}.{target}"


def module_path(target):
    """Where an export target's module is written: the lesson beside the notebooks, the others in the package."""
    return NOTEBOOKS / f"{LESSON}.py" if target == LESSON else PACKAGE / f"{target}.py"


def export_target(cell):
    """The module a code cell exports to ('basic_memory' for a bare `#| export`), or None."""
    first = cell.source.partition("\n")[0].strip()
    if cell.cell_type != "code" or first.split(" ")[:2] != MARK.split(" "):
        return None
    return first[len(MARK):].strip() or LESSON


def exported_cells(notebook_path):
    """(target module, source without the marker line) for each export cell of one notebook."""
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        target = export_target(cell)
        if target:
            yield target, cell.source.partition("\n")[2].strip("\n")


def split_imports(source):
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


def bound_name(imported):
    module, name, alias = imported
    return alias or (name if module else name.split(".")[0])


def free_names(source):
    """Names the code reads at module level, or as globals inside its functions and classes, but does not bind."""
    def read(table):
        for symbol in table.get_symbols():
            if symbol.is_referenced() and (table.get_type() == "module" or symbol.is_global()):
                yield symbol.get_name()
        for child in table.get_children():
            yield from read(child)

    top = symtable.symtable(source, "<module>", "exec")
    bound = {symbol.get_name() for symbol in top.get_symbols() if symbol.is_assigned() or symbol.is_imported()}
    return set(read(top)) - bound - set(dir(builtins)) - MODULE_GLOBALS


def defined_names(source):
    """Names the code binds at module level (assignments, functions, classes), not the ones it imports."""
    top = symtable.symtable(source, "<module>", "exec")
    return {symbol.get_name() for symbol in top.get_symbols() if symbol.is_assigned()}


def import_lines(imports):
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


def collected(notebook_paths):
    """{module: ([import], [(notebook name, code)])} from the export cells, in notebook order."""
    modules = {}
    for notebook_path in notebook_paths:
        for target, source in exported_cells(notebook_path):
            imports, body = split_imports(source)
            cell_imports, blocks = modules.setdefault(target, ([], []))
            cell_imports += imports
            if body:
                blocks.append((notebook_path.name, body))
    return modules


def body_text(blocks):
    """The cells' code, one `# notebook` line before each notebook's cells."""
    parts, last = [], None
    for notebook, code in blocks:
        parts.append(code if notebook == last else f"# {notebook}\n{code}")
        last = notebook
    return "\n\n\n".join(parts)


def module_sources(notebook_paths=ENGLISH_NOTEBOOKS):
    """{export target: text} of every generated module (module_path(target) says where it goes). Raises NameError
    for a name no cell defines or imports, and ImportError for modules that would import each other."""
    modules = collected(notebook_paths)
    every_import = [imported for cell_imports, _ in modules.values() for imported in cell_imports]
    bodies = {name: body_text(blocks) for name, (_, blocks) in modules.items()}
    definers = {}
    for name, body in bodies.items():
        for defined in defined_names(body):
            definers.setdefault(defined, name)
    sources, uses = {}, {}
    for name, body in bodies.items():
        needed = free_names(body)
        imports = [imported for imported in every_import if bound_name(imported) in needed]
        needed -= {bound_name(imported) for imported in imports}
        local = sorted(needed & set(definers))
        if needed - set(definers):
            raise NameError(f"{name}.py uses {sorted(needed - set(definers))}, which no export cell defines or imports")
        uses[name] = {definers[used] for used in local}
        imports += [(module_name(definers[used]), used, None) for used in local]
        header = HEADER.format(mark=MARK if name == LESSON else f"{MARK} {name}")
        sources[name] = header + "\n" + "\n".join(import_lines(dict.fromkeys(imports))) + "\n\n\n" + body + "\n"
    check_no_cycle(uses)
    return sources


def check_no_cycle(uses):
    def visit(name, path):
        if name in path:
            raise ImportError(f"generated modules would import each other: {' → '.join([*path, name])}")
        for used in uses.get(name, ()):
            visit(used, [*path, name])

    for name in uses:
        visit(name, [])


def stale_modules(sources):
    """The generated files that differ from what the notebooks give."""
    return [module_path(name).relative_to(ROOT).as_posix() for name, text in sources.items()
            if not module_path(name).exists() or module_path(name).read_text() != text]


def write_modules(sources):
    for name, text in sources.items():
        module_path(name).write_text(text)


def main():
    parser = argparse.ArgumentParser(description="Write the generated modules from the notebooks' export cells.")
    parser.add_argument("--check", action="store_true", help="only check that the modules are up to date")
    sources = module_sources()
    if parser.parse_args().check:
        stale = stale_modules(sources)
        if stale:
            sys.exit(f"stale: {', '.join(stale)}: run python scripts/export_module.py")
        print(f"up to date: {', '.join(module_path(name).relative_to(ROOT).as_posix() for name in sources)}")
        return
    write_modules(sources)
    print(f"wrote {', '.join(module_path(name).relative_to(ROOT).as_posix() for name in sources)}")

