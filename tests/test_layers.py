"""The layers run one way: a student's kernel loads the runtime package (memory_cookbook) without the lesson or the
maintainers' tools, and a package named like the lesson (`jev_memory_lesson`, also the import name of PyPI's
`basic-memory`) that comes first on sys.path wins nowhere: not in a kernel, the suite, a tool or an app server."""

import ast
import json
import os
import subprocess
import sys
import textwrap

from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient
from cookbook_tools.paths import LESSON_FILE, NOTEBOOKS, PACKAGE, ROOT

RUNTIME_MODULES = sorted(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
                         for path in PACKAGE.rglob("*.py") if path.stem != "__init__")
# What only the maintainers' tools use: the pages, the kit, the tests, mutation testing, and the tools themselves.
DEV_ONLY = ("jev_memory_lesson", "cookbook_tools", "nbconvert", "jinja2", "mistune", "mermaidx", "packaging", "pytest",
            "mutmut", "nbformat", "nbclient")


def fresh_interpreter(code, folder, python=sys.executable, **env):
    """Run `code` in a new Python (of this environment), in `folder`, and return what it printed as JSON."""
    result = subprocess.run([python, "-c", textwrap.dedent(code)], cwd=folder, capture_output=True,
                            text=True, timeout=60, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# The runtime package's own dependencies, as imported: typesafe-sdk and matplotlib import packaging themselves.
DEPENDENCIES = ("typesafe_sdk", "cooksafe", "lzstring", "filelock", "pydantic", "matplotlib.pyplot", "ipywidgets",
                "IPython.display", "psycopg", "psycopg_pool", "psutil", "fasteners")


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


def imported_names(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module


def test_no_runtime_module_names_the_lesson_or_the_tools_in_an_import():
    found = {path.name: name for path in PACKAGE.rglob("*.py") for name in imported_names(path)
             if name.split(".")[0] in ("jev_memory_lesson", "cookbook_tools")}
    assert found == {}


def test_no_tool_is_inside_the_runtime_package_and_the_project_installs_only_the_runtime_package():
    import tomllib

    assert not (PACKAGE / "tools").exists()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert {name.split(".")[0] for name in project["tool"]["setuptools"]["packages"]} == {"memory_cookbook"}
    assert "py-modules" not in project["tool"]["setuptools"]  # the lesson is not installed


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


# A decoy lesson: a package named jev_memory_lesson installed in site-packages, as `pip install basic-memory` would. It
# defines none of the lesson's names, so any code that got it instead would fail.

@pytest.fixture(scope="module")
def decoy_python(tmp_path_factory):
    """A Python whose own site-packages holds the decoy, then this environment's packages (a .pth line adds them,
    with their own .pth files: the editable install of memory_cookbook too). Made without pip: in a fraction of a
    second."""
    import site
    import venv

    folder = tmp_path_factory.mktemp("decoy-venv")
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site_packages = Path(subprocess.check_output([python, "-c", where], text=True).strip())
    (site_packages / "jev_memory_lesson").mkdir()
    (site_packages / "jev_memory_lesson" / "__init__.py").write_text("DECOY = True\n")
    ours = next(path for path in site.getsitepackages() if Path(path).is_dir())
    (site_packages / "zz_this_environment.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    assert "decoy-venv" in subprocess.check_output(
        [python, "-c", "import jev_memory_lesson; print(jev_memory_lesson.__file__)"], cwd=folder, text=True)
    return python


class DecoyKernelSpecs(KernelSpecManager):
    """A kernel of the decoy's Python, started as JupyterLab starts one (python -m ipykernel_launcher)."""

    python = None

    def get_kernel_spec(self, kernel_name):
        return KernelSpec(argv=[str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                          display_name="decoy", language="python")


@pytest.mark.slow
def test_a_kernel_started_in_notebooks_gets_the_committed_lesson_not_the_decoy(decoy_python, monkeypatch):
    monkeypatch.setattr(DecoyKernelSpecs, "python", decoy_python)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import jev_memory_lesson\n"
                                                                         "print(jev_memory_lesson.__file__)")])
    kernel = KernelManager(kernel_name="decoy", kernel_spec_manager=DecoyKernelSpecs())
    try:
        NotebookClient(notebook, km=kernel, timeout=60, resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    finally:
        kernel.shutdown_kernel(now=True)  # nbclient leaves a kernel it was given the manager of running
    assert notebook.cells[0].outputs[0]["text"].strip() == str(LESSON_FILE)


@pytest.mark.slow
def test_the_suite_gets_the_committed_lesson_not_the_decoy(decoy_python, tmp_path):
    probe = tmp_path / "test_decoy_probe.py"  # outside the repository: the run reads pytest.ini with -c
    probe.write_text("import jev_memory_lesson\n\n\ndef test_lesson():\n    print(jev_memory_lesson.__file__)\n")
    # pytest.ini's pythonpath is what puts notebooks/ first; its addopts (nbval, the plugin) and the installed plugins
    # are not needed here
    result = subprocess.run([decoy_python, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-c",
                             str(ROOT / "pytest.ini"), "--rootdir", str(ROOT), "-o", "addopts=", str(probe)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert result.returncode == 0 and str(LESSON_FILE) in result.stdout, result.stdout + result.stderr


@pytest.mark.slow
def test_a_tool_or_app_server_process_loads_the_committed_lesson_by_its_path_not_the_decoy(decoy_python, tmp_path):
    loaded = fresh_interpreter("""
        import json
        from memory_cookbook.locations import load_lesson
        lesson = load_lesson()
        print(json.dumps([lesson.__file__, hasattr(lesson, "ask_with_memory")]))
        """, tmp_path, python=decoy_python)
    assert loaded == [str(LESSON_FILE), True]


@pytest.mark.slow
def test_loading_the_lesson_where_the_decoy_was_already_imported_refuses(decoy_python, tmp_path):
    refused = fresh_interpreter("""
        import json
        import jev_memory_lesson
        from memory_cookbook.locations import load_lesson
        try:
            load_lesson()
        except ImportError as error:
            print(json.dumps(str(error)))
        """, tmp_path, python=decoy_python)
    assert "another jev_memory_lesson is already imported" in refused and "decoy-venv" in refused
