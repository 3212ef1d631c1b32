"""Types, checked: mypy passes over the runtime package, the lesson and the contract suite's typed factories (what
pyproject.toml's [tool.mypy] names), every function annotated; so each store is checked against the store contract
by the type checker, not only by the tests. mypy runs in the background from collection (conftest's TypeCheck)."""

import tomllib

import pytest
from conftest import ROOT, TYPE_CHECK_TEST

pytestmark = pytest.mark.slow  # mypy: about 5 s of one core the first time, its cache after


def test_mypy_passes_over_the_runtime_the_lesson_and_the_store_contract(type_check):
    assert type_check.result.returncode == 0, type_check.result.stdout + type_check.result.stderr
    assert "Success: no issues found" in type_check.result.stdout


def test_mypy_checks_the_runtime_the_lesson_and_every_function_is_annotated():
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert {"memory_cookbook", "notebooks/jev_memory_lesson.py", "tests/test_store_contract.py"} <= {
        *settings["files"]}
    assert settings["disallow_untyped_defs"]
    assert TYPE_CHECK_TEST == test_mypy_passes_over_the_runtime_the_lesson_and_the_store_contract.__name__
