"""The layers run one way, and docs/architecture.md draws them: the notebooks and the lesson (jev_memory_lesson) use the
runtime package (memory_cookbook), the tools use all three, and the runtime reaches neither the lesson nor the tools,
by an import or by a path. A student's kernel loads the runtime without the lesson or the tools; the lesson is
installed with the project, under a name no PyPI project uses, so that the one a kernel or a tool imports is ours."""

import ast
import json
import os
import re
import subprocess
import sys
import textwrap

import nbformat
import pytest
from cookbook_tools.paths import ENGLISH_NOTEBOOKS, LESSON_FILE, PACKAGE, ROOT

RUNTIME_MODULES = sorted(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
                         for path in PACKAGE.rglob("*.py") if path.stem != "__init__")
LESSON = LESSON_FILE.stem
# What only the maintainers' tools use: the pages, the kit, the tests, mutation testing, and the tools themselves.
DEV_ONLY = (LESSON, "cookbook_tools", "nbconvert", "jinja2", "mistune", "mermaidx", "packaging", "pytest",
            "mutmut", "nbformat", "nbclient")
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def fresh_interpreter(code, folder, python=sys.executable, **env):
    """Run `code` in a new Python (of this environment), in `folder`, and return what it printed as JSON."""
    result = subprocess.run([python, "-c", textwrap.dedent(code)], cwd=folder, capture_output=True,
                            text=True, timeout=60, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# The runtime package's own dependencies, as imported: typesafe-sdk and matplotlib import packaging themselves.
DEPENDENCIES = ("typesafe_sdk", "cooksafe", "lzstring", "filelock", "pydantic", "matplotlib.pyplot", "ipywidgets",
                "IPython.display", "psycopg", "psycopg_pool", "psutil")


@pytest.mark.slow  # a fresh interpreter importing matplotlib, psycopg and ipywidgets: about 2 s
def test_importing_every_runtime_module_loads_neither_the_lesson_nor_a_dev_tool_and_changes_nothing_global(tmp_path):
    loaded = fresh_interpreter(f"""
        import json, sys
        start = set(sys.modules)
        for name in {DEPENDENCIES!r}:
            __import__(name)
        dependencies = set(sys.modules)
        for name in {RUNTIME_MODULES!r}:
            __import__(name)
        print(json.dumps({{"dependencies": sorted(dependencies - start),
                           "ours": sorted(set(sys.modules) - dependencies),
                           "none": sorted(name for name, module in sys.modules.items() if module is None)}}))
        """, tmp_path)  # not notebooks/: nothing there can be picked up from the folder
    assert {"memory_cookbook.from_notebooks.postgres_store", "memory_cookbook.classroom.explorer"} <= {*loaded["ours"]}
    assert [name for name in loaded["ours"] if name.split(".")[0] in DEV_ONLY] == []
    assert [name for name in loaded["dependencies"] if name.split(".")[0] in DEV_ONLY] == ["packaging",
                                                                                           "packaging.version"]
    assert loaded["none"] == []


def imports_of(source, module=""):
    """The module names a source imports (a relative import resolved against `module`, the importing module)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(module.split(".")[:-node.level]) if node.level else ""
            yield ".".join(part for part in (base, node.module or "") if part)


def strings_of(source):
    """Every string constant of a source but its docstrings: where a path or a module name would be spelled."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings]


def module_name(path):
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def test_no_runtime_module_reaches_the_lesson_or_the_tools_by_import_or_by_path():
    """Its syntax, walked: no import of the lesson or the tools, and no string that names either, as a module or as
    a file (an import spec or a path would be one). A process of the runtime gets what to run handed to it."""
    reached = {}
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text()
        names = [name for name in imports_of(source, module_name(path))
                 if name.split(".")[0] in (LESSON, "cookbook_tools")]
        spelled = [text for text in strings_of(source)
                   if re.search(rf"\b({LESSON}|cookbook_tools)\b|{LESSON_FILE.name}|tools/", text)]
        if names or spelled:
            reached[path.relative_to(ROOT).as_posix()] = names + spelled
    assert reached == {}


# The packages docs/architecture.md draws, each with the files that are it.
def package_sources():
    """{package: [(module name, source)]}: the notebooks' code cells, the lesson, the runtime's packages (its top
    level, and each subpackage), the tools and the scripts."""
    sources = {"notebooks": [(path.stem, cell.source) for path in ENGLISH_NOTEBOOKS
                             for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"],
               LESSON: [(LESSON, LESSON_FILE.read_text())],
               "cookbook_tools": [(f"cookbook_tools.{path.stem}", path.read_text())
                                  for path in (ROOT / "tools" / "cookbook_tools").glob("*.py")],
               "scripts": [(path.stem, path.read_text()) for path in (ROOT / "scripts").glob("*.py")]}
    for path in PACKAGE.rglob("*.py"):
        sources.setdefault(package_of(module_name(path)), []).append((module_name(path), path.read_text()))
    return sources


def package_of(module):
    """The drawn package a module belongs to, or None for a module of none of them (a library)."""
    parts = module.split(".")
    if parts[0] == "memory_cookbook":
        return "memory_cookbook." + parts[1] if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else "memory_cookbook"
    return parts[0] if parts[0] in (LESSON, "cookbook_tools") else None


def edges_in_the_code():
    edges = set()
    for package, modules in package_sources().items():
        for module, source in modules:
            for name in imports_of(source, module):
                if package_of(name) not in (None, package):
                    edges.add((package, package_of(name)))
    return edges


def edges_drawn():
    """The solid edges of the packages diagram in docs/architecture.md: `a --> b`, `a --> b & c` (a node's id is its
    package's name with _ for .; a dotted edge, -.->, is what no import does)."""
    diagram = re.search(r"## The packages and their imports.*?```mermaid\n(.*?)```", ARCHITECTURE.read_text(),
                        re.S).group(1)
    ids = {node: label for node, label in re.findall(r"^\s*(\w+)\[\"([\w.]+)", diagram, re.M)}
    edges = set()
    for source, targets in re.findall(r"^\s*(\w+) --> ([\w &]+)$", diagram, re.M):
        edges |= {(ids[source], ids[target.strip()]) for target in targets.split("&")}
    return edges


def test_the_architecture_page_draws_every_import_between_packages_and_no_other():
    code, drawn = edges_in_the_code(), edges_drawn()
    assert (sorted(code - drawn), sorted(drawn - code)) == ([], [])
    assert not any(source.startswith("memory_cookbook") and target in (LESSON, "cookbook_tools", "notebooks")
                   for source, target in code)


def test_the_lesson_is_ours_installed_with_the_project_and_imported_from_anywhere(tmp_path):
    """The lesson is part of this project's distribution, under a name no project on PyPI uses (checked there when
    the name was chosen: `pip index versions jev-memory-lesson` finds none), and the module a fresh interpreter imports
    from any folder, the repository's included, is the committed file."""
    from importlib.metadata import packages_distributions

    assert set(packages_distributions()[LESSON]) == {"memory-cookbook"}
    for folder in (tmp_path, ROOT, ROOT / "notebooks"):
        loaded = fresh_interpreter(f"""
            import json, {LESSON}
            print(json.dumps([{LESSON}.__file__, hasattr({LESSON}, "ask_with_memory")]))
            """, folder)
        assert loaded == [str(LESSON_FILE), True]


def test_no_tool_is_inside_the_runtime_package_and_the_project_installs_the_runtime_and_the_lesson():
    import tomllib

    assert not (PACKAGE / "tools").exists()
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert {name.split(".")[0] for name in setuptools["packages"]} == {"memory_cookbook"}
    assert sorted(setuptools["packages"]) == sorted(
        module_name(path) for path in PACKAGE.rglob("__init__.py"))  # every subpackage, so a normal install has it
    assert setuptools["py-modules"] == [LESSON] and setuptools["package-dir"][""] == LESSON_FILE.parent.name


def test_a_normal_install_away_from_the_checkout_refuses_clearly(tmp_path):
    """What `pip install .` (not editable) gives: the package alone, with no cache, data or notebooks beside it."""
    import shutil

    shutil.copytree(PACKAGE, tmp_path / "site-packages" / "memory_cookbook")
    refused = fresh_interpreter("""
        import json
        from memory_cookbook.replay import cache_file
        try:
            cache_file.cache_path()
        except Exception as error:
            print(json.dumps([type(error).__name__, str(error)]))
        """, tmp_path, PYTHONPATH=str(tmp_path / "site-packages"), COOKBOOK_CACHE="")
    assert refused[0] == "NotACheckout" and "pip install -r requirements.txt" in refused[1]
    assert str(tmp_path / "site-packages" / "memory_cookbook") in refused[1]
