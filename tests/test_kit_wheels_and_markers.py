"""The classroom kit: which wheels each target installs, and the markers it evaluates for it.
Each was seen failing with a one-line bug planted in the code it guards."""

import platform

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from cookbook_tools import kit


def installs(target, filename):
    return bool(set(parse_wheel_filename(filename)[3]) & target.tags())


@pytest.mark.parametrize("system, python, wheel, installed", [
    ("windows", "3.12", "tool-1.0-py3-none-win_amd64.whl", True),
    ("windows", "3.12", "tool-1.0-py3-none-manylinux_2_28_x86_64.whl", False),  # pure Python, but for Linux
    ("windows", "3.12", "tool-1.0-cp311-abi3-win_amd64.whl", True),  # the stable ABI of an older Python
    ("windows", "3.12", "tool-1.0-cp313-abi3-win_amd64.whl", False),
    ("windows", "3.11", "tool-1.0-cp312-cp312-win_amd64.whl", False),
    ("windows", "3.12", "tool-1.0-cp312-cp312-win32.whl", False),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", True),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", True),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_31_x86_64.whl", False),  # newer than glibc 2.28
    ("linux", "3.12", "tool-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", False),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", False),
    ("macos-x86_64", "3.12", "tool-1.0-cp312-cp312-macosx_10_9_x86_64.whl", True),
    ("macos-x86_64", "3.12", "tool-1.0-cp312-cp312-macosx_11_0_arm64.whl", False),
    ("macos-x86_64", "3.12", "tool-1.0-cp312-abi3-macosx_10_15_universal2.whl", True),
    ("macos-arm64", "3.12", "tool-1.0-cp312-cp312-macosx_11_0_x86_64.whl", False),
    ("macos-arm64", "3.12", "tool-1.0-py3-none-macosx_11_0_arm64.whl", True),
])
def test_a_target_installs_the_wheels_of_its_own_system_python_and_abi_only(system, python, wheel, installed):
    assert installs(kit.Target(system, python), wheel) == installed


@pytest.mark.parametrize("system, true_markers, false_markers", [
    ("windows", ['os_name == "nt"', 'sys_platform == "win32"', 'platform_system == "Windows"',
                 'platform_machine == "AMD64"'], ['os_name == "posix"', 'sys_platform == "linux"']),
    ("linux", ['os_name == "posix"', 'sys_platform == "linux"', 'platform_system == "Linux"',
               'platform_machine == "x86_64"'], ['os_name == "nt"', 'sys_platform == "darwin"']),
    ("macos-arm64", ['os_name == "posix"', 'sys_platform == "darwin"', 'platform_system == "Darwin"',
                     'platform_machine == "arm64"'], ['platform_machine == "x86_64"', 'sys_platform == "linux"']),
    ("macos-x86_64", ['sys_platform == "darwin"', 'platform_machine == "x86_64"'], ['platform_machine == "arm64"']),
])
def test_a_targets_markers_name_its_own_system(system, true_markers, false_markers):
    environment = kit.Target(system, "3.13").environment()
    assert [marker for marker in true_markers if not Marker(marker).evaluate(environment)] == []
    assert [marker for marker in false_markers if Marker(marker).evaluate(environment)] == []


@pytest.mark.parametrize("system", ["windows", "linux", "macos-arm64", "this"])
def test_a_targets_markers_name_its_own_python_and_cpython(system):
    other = "3.14" if kit.THIS_PYTHON != "3.14" else "3.13"
    environment = kit.Target(system, other).environment()
    assert (environment["python_version"], environment["python_full_version"]) == (other, f"{other}.0")
    for marker in [f'python_version == "{other}"', f'python_full_version >= "{other}"', 'implementation_name == '
                   '"cpython"', 'platform_python_implementation == "CPython"']:
        assert Marker(marker).evaluate(environment), marker


@pytest.mark.parametrize("system", ["windows", "linux", "macos-arm64", "this"])
def test_a_target_of_this_machines_python_has_its_full_version_whatever_the_system(system):
    environment = kit.Target(system, kit.THIS_PYTHON).environment()
    assert environment["python_full_version"] == platform.python_version()
    assert Marker(f'python_full_version >= "{kit.THIS_PYTHON}"').evaluate(environment)


def available(**packages):
    """{name: (version, requirements)} from name="version: requirement; requirement"."""
    found = {}
    for name, text in packages.items():
        version, _, requires = text.partition(":")
        found[name.replace("_", "-")] = (Version(version), [Requirement(line) for line in requires.split(";;") if line])
    return found


def test_unmet_follows_requirements_down_every_level():
    wheels = available(top="1.0: middle", middle="1.0: bottom>=2", bottom="1.5:")
    assert [str(requirement) for requirement in kit.unmet([Requirement("top")], wheels, {})] == ["bottom>=2"]


def test_unmet_ends_on_a_cycle_and_finds_nothing_missing():
    wheels = available(ipython="9.0: traitlets", traitlets="5.0: ipython")
    assert kit.unmet([Requirement("ipython")], wheels, {}) == []


def test_unmet_reads_package_names_as_pip_does():
    wheels = available(typing_extensions="4.16.0:", jinja2="3.1.6: MarkupSafe>=2.0", markupsafe="3.0.2:")
    assert kit.unmet([Requirement("Jinja2==3.1.6"), Requirement("typing.extensions")], wheels, {}) == []


def test_a_prerelease_that_a_pin_names_satisfies_it():
    wheels = available(tool="2.0rc1:")
    assert kit.unmet([Requirement("tool>=1.0")], wheels, {}) == []


def test_a_package_asked_for_with_an_extra_still_needs_its_own_requirements():
    wheels = available(jsonschema="4.25.0: attrs>=22.2.0;; rfc3987-syntax; extra == \"format-nongpl\"",
                       rfc3987_syntax="1.1.0:")
    assert [str(requirement) for requirement in kit.unmet([Requirement("jsonschema[format-nongpl]")], wheels, {})
            ] == ["attrs>=22.2.0"]


def test_a_wheels_marker_is_evaluated_with_the_targets_python():
    wheels = available(ipython="9.0: exceptiongroup; python_version < \"3.11\"")
    assert [str(requirement) for requirement in kit.unmet(
        [Requirement("ipython")], wheels, kit.Target("windows", "3.10").environment())] == [
        'exceptiongroup; python_version < "3.11"']
    assert kit.unmet([Requirement("ipython")], wheels, kit.Target("windows", "3.12").environment()) == []
