"""The classroom kit (tools/cookbook_tools/kit.py, scripts/classroom_kit.py): what students type, what is copied, which
wheels a target needs; and, marked slow, a kit built here that installs with --no-index and runs a notebook."""

import importlib.metadata
import json

import nbformat
import pytest
from kit_install import KIT_NOTEBOOK
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.version import Version

from cookbook_tools import kit
from cookbook_tools.paths import NOTEBOOKS, PACKAGE, ROOT

INSTALL = "pip install --no-index --find-links wheels -r requirements.txt"


def test_student_commands_ask_for_the_kits_one_python_and_install_only_from_the_wheelhouse():
    assert kit.student_commands("windows", ["3.12"]) == [
        f"py -3.12 -m venv .venv && .venv\\Scripts\\{INSTALL}",
        ".venv\\Scripts\\jupyter lab --notebook-dir=. notebooks/01_tickets.ipynb"]
    assert kit.student_commands("posix", ["3.12"]) == [
        f"python3.12 -m venv .venv && .venv/bin/{INSTALL}",
        ".venv/bin/jupyter lab --notebook-dir=. notebooks/01_tickets.ipynb"]


def test_a_chinese_class_opens_the_chinese_01_and_the_kits_readme_says_so():
    assert kit.student_commands("posix", ["3.12"], "zh")[1] == \
        ".venv/bin/jupyter lab --notebook-dir=. notebooks/01_tickets.zh.ipynb"
    readme = kit.readme_text([kit.Target("windows", "3.12"), kit.Target("linux", "3.12")])
    assert all(kit.student_commands(system, ["3.12"], "zh")[1] in readme for system in ("windows", "posix"))


def test_student_commands_take_the_default_python_when_the_kit_serves_several():
    assert kit.student_commands("windows", ["3.12", "3.13"])[0].startswith("py -m venv .venv && ")
    assert kit.student_commands("posix", ["3.12", "3.13"])[0].startswith("python3 -m venv .venv && ")


def test_readme_gives_the_commands_of_the_kits_systems_only():
    windows_only = kit.readme_text(kit.targets(["windows"], ["3.12"]))
    assert "py -3.12 -m venv" in windows_only and "python3.12" not in windows_only
    mixed = kit.readme_text(kit.targets(["windows", "macos", "linux"], ["3.12", "3.13"]))
    assert all(command in mixed for system in ("windows", "posix")
               for command in kit.student_commands(system, ["3.12", "3.13"]))
    assert "macOS 11+ on Apple silicon (arm64), Python 3.13" in mixed and "Python 3.12 or 3.13" in mixed


def test_pages_built_already_are_copied_into_the_kit_not_built_again(tmp_path, monkeypatch):
    monkeypatch.setattr(kit.pages, "build", lambda out: pytest.fail("built the pages again"))
    built = tmp_path / "site"
    (built / "notebooks").mkdir(parents=True)
    (built / "index.html").write_text("<html>the pages</html>")
    (built / "notebooks" / "01_tickets.html").write_text("<html>01</html>")
    (tmp_path / "kit" / "site").mkdir(parents=True)
    (tmp_path / "kit" / "site" / "stale.html").write_text("an earlier kit's page")
    kit.place_site(tmp_path / "kit", built)
    assert sorted(path.relative_to(tmp_path / "kit").as_posix() for path in (tmp_path / "kit").rglob("*.html")) == [
        "site/index.html", "site/notebooks/01_tickets.html"]


def test_a_site_folder_without_pages_stops_the_kit_naming_the_command_that_builds_them(tmp_path):
    with pytest.raises(kit.KitError, match="holds no index.html: build the pages there with scripts/build_docs.py"):
        kit.place_site(tmp_path / "kit", tmp_path / "empty")


def test_platform_macos_means_both_macs_and_each_python_is_a_target():
    assert kit.targets(["windows", "macos"], ["3.11", "3.14"]) == [
        kit.Target(system, python) for system in ("windows", "macos-arm64", "macos-x86_64")
        for python in ("3.11", "3.14")]


def test_requirements_are_read_without_comments_and_blank_lines(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text("# The cookbook\nlzstring==1.0.4\n\nruff==0.17.6  # lint\n")
    assert [str(requirement) for requirement in kit.requirements(path)] == ["lzstring==1.0.4", "ruff==0.17.6"]


LOCK = "lzstring==1.0.4\npsycopg==3.3.9\nmermaidx==0.10.1\njupyterlab==4.6.6\npytest==9.2.0\n-e .\n-e ./tools\n"
PROJECT = """[build-system]
requires = ["setuptools==80.9.0"]
[project]
dependencies = ["lzstring>=1", "psycopg>=3"]
[project.optional-dependencies]
lab = ["jupyterlab>=4"]
docs = ["mermaidx>=0.10"]
tests = ["pytest>=9"]
"""


def lock_and_project(folder, lock=LOCK, project=PROJECT):
    (folder / "pyproject.toml").write_text(project)
    (folder / "requirements.txt").write_text(lock)
    return folder / "requirements.txt"


def test_the_kit_installs_the_runtime_and_jupyterlab_at_the_locks_pins_not_the_pages_tests_or_tools(tmp_path):
    assert kit.student_requirements(lock_and_project(tmp_path)) == \
        "jupyterlab==4.6.6\nlzstring==1.0.4\npsycopg==3.3.9\n-e .\n"


def test_a_dependency_the_lock_does_not_pin_stops_the_build(tmp_path):
    with pytest.raises(kit.KitError, match=r"pins no version of \['psycopg'\]"):
        kit.student_requirements(lock_and_project(tmp_path, lock=LOCK.replace("psycopg==3.3.9\n", "")))


def test_the_project_line_stands_for_what_building_the_project_needs(tmp_path):
    (tmp_path / "requirements.txt").write_text("lzstring==1.0.4\n-e .\n")
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools==80.9.0"]\n')
    found = [str(requirement) for requirement in kit.requirements(tmp_path / "requirements.txt")]
    assert found == ["lzstring==1.0.4", "setuptools==80.9.0"]


def test_every_package_built_from_source_is_a_students_requirement(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text(kit.student_requirements())
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    assert kit.SOURCE_ONLY <= {requirement.name for requirement in kit.requirements(path)}


def test_a_target_takes_its_own_wheels_only():
    windows = kit.Target("windows", "3.12").tags()
    mac = kit.Target("macos-arm64", "3.12").tags()
    assert all(wheel_tags(wheel) & windows for wheel in ("numpy-2.5.5-cp312-cp312-win_amd64.whl",
                                                         "psutil-7.2.2-cp37-abi3-win_amd64.whl",
                                                         "lzstring-1.0.4-py2.py3-none-any.whl"))
    assert not wheel_tags("numpy-2.5.5-cp313-cp313-win_amd64.whl") & windows
    assert not wheel_tags("numpy-2.5.5-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl") & windows
    assert wheel_tags("numpy-2.5.5-cp312-cp312-macosx_11_0_arm64.whl") & mac
    assert wheel_tags("pyzmq-27.3.0-cp312-abi3-macosx_10_15_universal2.whl") & mac
    assert not wheel_tags("numpy-2.5.5-cp312-cp312-macosx_14_0_arm64.whl") & mac  # macOS 11 to 13 could not use it


def wheel_tags(filename):
    from packaging.utils import parse_wheel_filename
    return set(parse_wheel_filename(filename)[3])


TERMINADO = {"terminado": (Version("0.18.1"), [Requirement('pywinpty>=1.1.0; os_name == "nt"'),
                                               Requirement('ptyprocess; os_name != "nt"')]),
             "ptyprocess": (Version("0.7.0"), [])}


def test_a_wheelhouse_lacks_the_packages_only_windows_needs_when_pip_ran_on_linux():
    roots = [Requirement("terminado==0.18.1")]
    windows = kit.Target("windows", "3.12").environment()
    assert [str(requirement) for requirement in kit.unmet(roots, TERMINADO, windows)] == [
        'pywinpty>=1.1.0; os_name == "nt"']
    assert kit.unmet(roots, TERMINADO, kit.Target("linux", "3.12").environment()) == []


def test_an_extras_requirements_and_a_version_outside_the_pin_are_unmet():
    available = {"jsonschema": (Version("4.25.0"), [Requirement('rfc3987-syntax; extra == "format-nongpl"')]),
                 "attrs": (Version("22.1.0"), [])}
    environment = default_environment()
    assert [str(missing) for missing in kit.unmet([Requirement("jsonschema[format-nongpl]")], available,
                                                  environment)] == ['rfc3987-syntax; extra == "format-nongpl"']
    assert kit.unmet([Requirement("jsonschema")], available, environment) == []
    assert [str(missing) for missing in kit.unmet([Requirement("attrs>=23")], available, environment)] == [
        "attrs>=23"]


def test_a_missing_requirement_is_downloaded_without_its_marker():
    assert str(kit.without_marker(Requirement('pywinpty>=1.1.0; os_name == "nt"'))) == "pywinpty>=1.1.0"


def test_the_copy_leaves_out_venvs_caches_checkpoints_and_git(tmp_path):
    root, out = tmp_path / "repo", tmp_path / "kit"
    for name in ["notebooks/01_tickets.ipynb", "notebooks/jev_memory_lesson.py",
                 "notebooks/.ipynb_checkpoints/01.ipynb", "notebooks/__pycache__/jev_memory_lesson.pyc",
                 "notebooks/memories.sqlite", "notebooks/.venv/bin/python",
                 "notebooks/.git/HEAD", "memory_cookbook/replay/calls.py", "memory_cookbook/__pycache__/replay.pyc",
                 "data/tickets.json", "json_cache.json", "recorded_requests.json", "pyproject.toml", "setup.cfg",
                 "LICENSE", "memory_cookbook.egg-info/PKG-INFO", ".venv/bin/python", ".git/HEAD"]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    for name in ("requirements.txt", ".gitignore", "pyproject.toml"):
        (root / name).write_text((ROOT / name).read_text())
    (root / "tools" / "cookbook_tools").mkdir(parents=True)
    (root / "tools" / "cookbook_tools" / "kit.py").write_text("# the tools stay with the repository")
    out.mkdir()
    kit.copy_project(out, root)
    assert sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()) == [
        "LICENSE", "data/tickets.json", "json_cache.json", "memory_cookbook/replay/calls.py",
        "notebooks/01_tickets.ipynb", "notebooks/jev_memory_lesson.py", "pyproject.toml", "recorded_requests.json",
        "requirements.txt", "setup.cfg"]


def test_a_folder_that_is_not_a_kit_is_never_written_into(tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work")
    with pytest.raises(kit.KitError, match="not a classroom kit"):
        kit.check_out_folder(tmp_path)
    (tmp_path / "thesis.tex").unlink()
    kit.check_out_folder(tmp_path)  # empty: fine
    (tmp_path / "README.txt").write_text(kit.readme_text(kit.targets(["this"], [kit.THIS_PYTHON])))
    kit.check_out_folder(tmp_path)  # an earlier kit: rebuilt


@pytest.mark.slow
@pytest.mark.network
def test_kit_installs_offline_and_runs_a_notebook(kit_install):
    for step in kit_install.steps:
        assert step.returncode == 0, f"{step.name} failed: {' '.join(map(str, step.command))}\n{step.output}"
    assert [step.name for step in kit_install.steps] == ["build", "venv", "install", "notebook"]
    executed = nbformat.read(kit_install.executed / KIT_NOTEBOOK, as_version=4)
    committed = nbformat.read(NOTEBOOKS / KIT_NOTEBOOK, as_version=4)
    assert text_outputs(executed) == text_outputs(committed)  # the recorded answers, replayed from the kit
    readme = (kit_install.kit / "README.txt").read_text()
    assert all(command in readme for command in kit.student_commands("posix", [kit.THIS_PYTHON]))
    assert json.loads((kit_install.kit / "json_cache.json").read_text()) == json.loads(
        (ROOT / "json_cache.json").read_text())
    assert (kit_install.kit / "site" / "index.html").is_file()


def text_outputs(notebook):
    """The code cells' printed text and Markdown outputs (the tables of answers), in order."""
    return [output.get("text") or output["data"]["text/markdown"] for cell in notebook.cells
            if cell.cell_type == "code" for output in cell.get("outputs", [])
            if output.get("name") == "stdout" or "text/markdown" in output.get("data", {})]


def test_progress_in_a_log_prints_every_step_and_a_package_count_now_and_then(capsys):
    progress = kit.Progress(every=60)
    for message, transient in [("[1/2] Windows", False), ("Windows: package 1 (a)", True),
                               ("Windows: package 2 (b)", True), ("[2/2] Linux", False)]:
        progress(message, transient=transient)
    assert capsys.readouterr().out.splitlines() == ["[1/2] Windows", "Windows: package 1 (a)", "[2/2] Linux"]


def test_the_kit_installs_every_package_the_notebooks_and_their_modules_import():
    from test_notebook_hygiene import imported_top_level_names

    sources = [cell.source for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")
               for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    sources += [path.read_text() for path in [*NOTEBOOKS.glob("*.py"), *PACKAGE.rglob("*.py")]]
    providers = importlib.metadata.packages_distributions()
    imported = {name for source in sources for name in imported_top_level_names(source)}
    needed = {dist.lower() for name in imported for dist in providers.get(name, [])}
    lines = [line for line in kit.student_requirements(ROOT / "requirements.txt").splitlines()
             if line and not line.startswith("#")]
    students = {Requirement(line).name.lower() for line in lines if line != kit.THIS_PROJECT}
    students |= {"memory-cookbook"} if kit.THIS_PROJECT in lines else set()
    assert needed - students == set()
