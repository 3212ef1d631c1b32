"""Types, checked: mypy passes over the runtime package, the lesson and the contract suite's typed factories (what
pyproject.toml's [tool.mypy] names), every function annotated; so each store is checked against the store contract
by the type checker, not only by the tests. mypy runs in the background from collection (conftest's TypeCheck). And
each module of the runtime and the lesson says what it offers: `__all__`, its public names, no more and no less."""

import ast
import tomllib

import pytest
from conftest import ROOT, TYPE_CHECK_TEST
from cookbook_tools.paths import LESSON_FILE, PACKAGE


@pytest.mark.slow  # mypy: about 5 s of one core the first time, its cache after
def test_mypy_passes_over_the_runtime_the_lesson_and_the_store_contract(type_check):
    assert type_check.result.returncode == 0, type_check.result.stdout + type_check.result.stderr
    assert "Success: no issues found" in type_check.result.stdout


def test_mypy_checks_the_runtime_the_lesson_and_every_function_is_annotated():
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert {"memory_cookbook", "notebooks/jev_memory_lesson.py", "tests/test_store_contract.py"} <= {
        *settings["files"]}
    assert settings["disallow_untyped_defs"]
    assert TYPE_CHECK_TEST == test_mypy_passes_over_the_runtime_the_lesson_and_the_store_contract.__name__
    assert (PACKAGE / "py.typed").is_file()  # a desk's type checker reads the package's annotations


def defined_and_listed(path):
    """(the public names a module defines at its top level, the names its __all__ lists)."""
    tree = ast.parse(path.read_text())
    defined, listed = set(), None
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        names = [name for target in targets for name in ([target] if isinstance(target, ast.Name)
                                                          else getattr(target, "elts", []))]
        if any(getattr(name, "id", None) == "__all__" for name in names):
            listed = {element.value for element in node.value.elts}
        defined |= {name.id for name in names if isinstance(name, ast.Name)}
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
    return {name for name in defined if not name.startswith("_")}, listed


def test_every_module_of_the_runtime_and_the_lesson_lists_its_public_names_in_all():
    modules = [LESSON_FILE, *(path for path in PACKAGE.rglob("*.py") if path.name != "__init__.py")]
    wrong = {path.relative_to(ROOT).as_posix(): defined_and_listed(path) for path in modules}
    assert {path: names for path, names in wrong.items() if names[0] != names[1]} == {}


def unannotated(path):
    """The functions of a module (methods and nested ones too) with a parameter or a return left unannotated."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parameters = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg,
                          node.args.kwarg]
            bare = [parameter.arg for parameter in parameters
                    if parameter is not None and parameter.annotation is None and parameter.arg not in ("self", "cls")]
            if bare or node.returns is None:
                found.append(f"{node.name}:{node.lineno}")
    return found


def test_every_function_of_the_tools_and_the_scripts_is_annotated():
    """The tools are not in mypy's run (its cost is the suite's), but their signatures are written as the runtime's."""
    paths = [*(ROOT / "tools" / "cookbook_tools").glob("*.py"), *(ROOT / "scripts").glob("*.py")]
    assert {path.relative_to(ROOT).as_posix(): names for path in paths if (names := unannotated(path))} == {}
