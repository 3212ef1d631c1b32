"""The classroom kit: one folder that a teacher copies to student laptops (a USB stick, a shared drive), from which the
cookbook installs and runs with no network at all.

The folder holds a wheelhouse (wheels/: every package the requirements need, as wheels, for each system and Python the
teacher names; pip picks the right one per laptop), the notebooks, the data, the recorded answers, requirements.txt,
the built pages (site/) and README.txt, the two commands a student types.

pip download evaluates environment markers (`pywinpty; os_name == "nt"`) for the machine it runs on, not for the
--platform it is given, so a Windows wheelhouse built on Linux would lack Windows-only packages and fail in class.
Each target's wheelhouse is therefore checked against every wheel's own requirements, with the markers evaluated for
that target, and what is missing is downloaded too.
"""

import email
import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib
import time
import zipfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.tags import compatible_tags, cpython_tags, mac_platforms, platform_tags
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from cookbook_tools import pages
from cookbook_tools.paths import CACHE_FILE, NOTEBOOKS, PACKAGE, PROJECT_FILE, RECORDED_REQUESTS_FILE, ROOT

PYPI = "https://pypi.org/simple"
REQUIREMENTS_FILE = ROOT / "requirements.txt"
KIT_FILES = [CACHE_FILE, RECORDED_REQUESTS_FILE, PROJECT_FILE, ROOT / "setup.cfg", ROOT / "LICENSE"]
KIT_FOLDERS = [NOTEBOOKS, ROOT / "data", PACKAGE]
README_TITLE = "The cookbook's classroom kit"
# Students get the runtime dependencies and JupyterLab (student_requirements); mermaidx, which builds the pages, has
# no wheel for Intel Macs at all, and the pages come built.
STUDENT_EXTRA = "lab"  # pyproject.toml's extra for opening and running the notebooks
THIS_PROJECT = "-e ."  # the line of requirements.txt that installs the project itself
TOOLS_PROJECT = "-e ./tools"  # and its tools, which the kit leaves out
# Published on PyPI as source only: built here once into a pure-Python wheel, so that nothing compiles in class.
SOURCE_ONLY = {"lzstring"}
THIS_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
# The oldest systems the kit's wheels are chosen for: glibc 2.28 (Debian 10, Ubuntu 20.04, RHEL 8) and macOS 11.
MANYLINUX = [f"manylinux_2_{minor}_x86_64" for minor in range(28, 4, -1)] + [
    "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
POSIX = {"os_name": "posix"}
SYSTEMS = {
    # name: (label, platform tags, marker values)
    "windows": ("Windows x86-64", ["win_amd64"],
                {"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64"}),
    "macos-arm64": ("macOS 11+ on Apple silicon (arm64)", list(mac_platforms((11, 0), "arm64")),
                    POSIX | {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"}),
    "macos-x86_64": ("macOS 11+ on Intel (x86_64)", list(mac_platforms((11, 0), "x86_64")),
                     POSIX | {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "x86_64"}),
    "linux": ("Linux x86-64 (glibc 2.28+)", MANYLINUX,
              POSIX | {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"}),
}
# What --platform accepts: a system above, both macOS kinds at once, or the machine the kit is built on.
PLATFORM_CHOICES = {"this": ["this"], "macos": ["macos-arm64", "macos-x86_64"]} | {name: [name] for name in SYSTEMS}


class KitError(Exception):
    """The kit could not be built; the message says why."""


@dataclass(frozen=True)
class Target:
    """One system and one Python version the wheelhouse serves (system "this": the machine building the kit)."""
    system: str
    python: str

    @property
    def label(self) -> str:
        system = f"{platform.system()} {platform.machine()}" if self.system == "this" else SYSTEMS[self.system][0]
        return f"{system}, Python {self.python}"

    @property
    def windows(self) -> bool:
        return self.environment()["os_name"] == "nt"

    @property
    def platforms(self) -> list[str]:
        return list(platform_tags()) if self.system == "this" else SYSTEMS[self.system][1]

    @property
    def abi(self) -> str:
        return "cp" + self.python.replace(".", "")

    def pip_options(self) -> list[str]:
        """pip download's options that pick this target's wheels."""
        platforms = [option for platform in self.platforms for option in ("--platform", platform)]
        return platforms + ["--python-version", self.python, "--implementation", "cp", "--abi", self.abi]

    def tags(self) -> set[Any]:
        """Every wheel tag a CPython of this version on this system installs."""
        version = tuple(int(part) for part in self.python.split("."))
        return set(cpython_tags(version, [self.abi], self.platforms)) | set(
            compatible_tags(version, self.abi, self.platforms))

    def environment(self) -> dict[str, str]:
        """The values environment markers are evaluated with on this target."""
        machine = default_environment() if self.system == "this" else {
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "platform_release": "", "platform_version": ""} | SYSTEMS[self.system][2]
        full = platform.python_version() if self.python == THIS_PYTHON else f"{self.python}.0"
        return machine | {"python_version": self.python, "python_full_version": full, "implementation_version": full}


def targets(platforms: Iterable[str], pythons: Iterable[str]) -> list["Target"]:
    """The targets for --platform and --python (names as in PLATFORM_CHOICES; versions as "3.12")."""
    systems = list(dict.fromkeys(system for name in platforms for system in PLATFORM_CHOICES[name]))
    return [Target(system, python) for system in systems for python in pythons]


def student_requirements(path: Path = REQUIREMENTS_FILE) -> str:
    """The text of the kit's requirements.txt: the pinned lines of `path` (the lock) for what students need, the
    runtime dependencies and the `lab` extra of pyproject.toml beside it, then this project itself (installed in
    place from the kit's folder). The pages come built (site/), and the tests and tools stay with the repository."""
    project = tomllib.loads((Path(path).parent / PROJECT_FILE.name).read_text())["project"]
    needed = {canonicalize_name(Requirement(line).name)
              for line in [*project["dependencies"], *project["optional-dependencies"][STUDENT_EXTRA]]}
    pins = {canonicalize_name(requirement.name): str(requirement) for requirement in requirements(path)}
    if needed - set(pins):
        raise KitError(f"{path} pins no version of {sorted(needed - set(pins))}, which pyproject.toml declares")
    return "\n".join([*(pins[name] for name in sorted(needed)), THIS_PROJECT]) + "\n"


def requirements(path: Path = REQUIREMENTS_FILE) -> list[Requirement]:
    """The requirements of a requirements file (comments and blank lines left out). The project's own line (-e .)
    stands for what building it needs: pyproject.toml's build-system requirements, beside the requirements file."""
    lines = [line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines()]
    found = [Requirement(line) for line in lines if line and line not in (THIS_PROJECT, TOOLS_PROJECT)]
    if THIS_PROJECT in lines:
        project = tomllib.loads((Path(path).parent / PROJECT_FILE.name).read_text())
        found += [Requirement(line) for line in project["build-system"]["requires"]]
    return found


FIRST_NOTEBOOK = {"en": "notebooks/01_tickets.ipynb", "zh": "notebooks/01_tickets.zh.ipynb"}


def student_commands(system: str, pythons: list[str], language: str = "en") -> list[str]:
    """The two commands a student types in the kit's folder on `system` ("windows" or "posix"): set up, then open
    notebook 01 in `language` ("en", or "zh" for a Chinese class). With one Python version in the kit, the commands
    ask for that version."""
    version, first = (pythons[0] if len(pythons) == 1 else ""), FIRST_NOTEBOOK[language]
    if system == "windows":
        python = f"py -{version}" if version else "py"
        return [f"{python} -m venv .venv && .venv\\Scripts\\pip install --no-index --find-links wheels -r "
                f"requirements.txt", f".venv\\Scripts\\jupyter lab --notebook-dir=. {first}"]
    return [f"python{version or '3'} -m venv .venv && .venv/bin/pip install --no-index --find-links wheels -r "
            f"requirements.txt", f".venv/bin/jupyter lab --notebook-dir=. {first}"]


def readme_text(kit_targets: list["Target"]) -> str:
    """README.txt of a kit built for `kit_targets`."""
    pythons = sorted({target.python for target in kit_targets}, key=Version)
    served = "\n".join(f"  - {target.label}" for target in kit_targets)
    systems = {"Windows (cmd or PowerShell 7)": "windows", "macOS and Linux": "posix"}
    kit_systems = {"windows" if target.windows else "posix" for target in kit_targets}
    commands = "\n\n".join(f"{title}:\n" + "\n".join(f"  {command}" for command in student_commands(system, pythons))
                           for title, system in systems.items() if system in kit_systems)
    chinese = "\n".join(f"  {title}: {student_commands(system, pythons, 'zh')[1]}"
                        for title, system in systems.items() if system in kit_systems)
    return f"""{README_TITLE}

Giving Jev a memory, a TypeSafe cookbook, ready to install and run with no internet and no TypeSafe key.
The wheels/ folder holds every package it needs, for:
{served}

Copy this whole folder onto the laptop first (the setup writes a .venv folder inside it), then open a terminal
in it and type two commands. The first takes a minute or two, once per laptop, and needs Python {" or ".join(pythons)}
(the wheels are for {"that version" if len(pythons) == 1 else "those versions"} only).

{commands}

JupyterLab opens in the browser: start with 01_tickets.ipynb. Next time, only the second command.
For a Chinese class (中文课堂), the second command opens the Chinese edition instead:
{chinese}
Nothing is downloaded: --no-index keeps pip to the wheels/ folder, and the notebooks replay the 32 answers that Jev
gave when the run was recorded (json_cache.json).

To read without installing anything: open site/index.html in a browser, straight from this folder.
"""


def copy_project(out: Path, root: Path = ROOT) -> None:
    """Copy the notebooks, data and recorded answers from `root` into `out`, leaving out what git ignores (.venv,
    caches, checkpoints, SQLite files, locks) and .git; write the students' requirements.txt."""
    ignore = shutil.ignore_patterns(".git", *ignored_patterns(root))
    for folder in KIT_FOLDERS:
        source = root / folder.relative_to(ROOT)
        shutil.rmtree(out / source.name, ignore_errors=True)
        shutil.copytree(source, out / source.name, ignore=ignore)
    for file in KIT_FILES:
        shutil.copy2(root / file.relative_to(ROOT), out / file.name)
    (out / "requirements.txt").write_text(student_requirements(root / "requirements.txt"))


def ignored_patterns(root: Path = ROOT) -> list[str]:
    """The name patterns of the repository's .gitignore."""
    lines = (root / ".gitignore").read_text().splitlines()
    return [line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith("#")]


def wheel_metadata(path: Path) -> tuple[str, Version, list[Requirement]]:
    """(name, version, requirements) of a wheel file, from its METADATA."""
    with zipfile.ZipFile(path) as wheel:
        name = next(item for item in wheel.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", item))
        metadata = email.message_from_bytes(wheel.read(name))
    return (canonicalize_name(metadata["Name"]), Version(metadata["Version"]),
            [Requirement(line) for line in metadata.get_all("Requires-Dist") or []])


def installable(wheelhouse: Path, target: "Target") -> dict[str, Any]:
    """{name: (version, requirements)} of the wheels in `wheelhouse` that `target` can install, the newest of each."""
    tags = target.tags()
    found = {}
    for path in sorted(Path(wheelhouse).glob("*.whl")):
        if tags.isdisjoint(parse_wheel_filename(path.name)[3]):
            continue
        name, version, requires = wheel_metadata(path)
        if name not in found or found[name][0] < version:
            found[name] = (version, requires)
    return found


def unmet(roots: Iterable[Requirement], available: dict[str, Any], environment: dict[str, str]) -> list[Any]:
    """The requirements, from `roots` down through every package's own requirements (markers evaluated with
    `environment`, extras followed), that no package in `available` ({name: (version, requirements)}) satisfies."""
    missing, seen, pending = [], set(), list(roots)
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        if name not in available or not requirement.specifier.contains(available[name][0], prereleases=True):
            missing.append(requirement)
            continue
        for extra in ["", *sorted(requirement.extras)]:
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            pending += [needed for needed in available[name][1]
                        if needed.marker is None or needed.marker.evaluate(environment | {"extra": extra})]
    return sorted(set(missing), key=str)


def pip_environment() -> dict[str, str]:
    """The environment pip runs in: no pip configuration file of this machine (its indexes, find-links and
    constraints) decides what goes into the kit."""
    return {name: value for name, value in os.environ.items() if not name.startswith("PIP_")} | {
        "PIP_CONFIG_FILE": os.devnull}


def run_pip(arguments: list[str], label: str, report: Callable[..., None]) -> int:
    """Run pip (with this machine's configuration ignored), reporting each package it collects as a transient
    "label: package n (name)"; raise KitError with pip's last lines if it fails."""
    command = [sys.executable, "-m", "pip", "--isolated", "--disable-pip-version-check", *arguments]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=pip_environment())
    lines, count = [], 0
    for line in process.stdout:
        lines.append(line.rstrip())
        if line.startswith(("Collecting ", "Processing ")):
            count += 1
            report(f"{label}: package {count} ({line.split()[1]})", transient=True)
    if process.wait():
        raise KitError(f"pip failed for {label}:\n" + "\n".join(lines[-15:]))
    return count


def build_source_only(wheelhouse: Path, roots: Iterable[Requirement], index_url: str,
                      report: Callable[..., None]) -> None:
    """Build the requirements published only as source (SOURCE_ONLY) into pure-Python wheels in `wheelhouse`."""
    pins = [str(requirement) for requirement in roots if canonicalize_name(requirement.name) in SOURCE_ONLY]
    if pins:
        run_pip(["wheel", "--no-deps", "--index-url", index_url, "-w", str(wheelhouse), *pins],
                "wheels built from source", report)
    impure = [path.name for path in wheelhouse.glob("*.whl")
              if canonicalize_name(parse_wheel_filename(path.name)[0]) in SOURCE_ONLY
              and not path.name.endswith("-none-any.whl")]
    if impure:
        raise KitError(f"not pure-Python wheels, they would serve one system only: {impure}")


def without_marker(requirement: Requirement) -> Requirement:
    """The requirement with its environment marker taken off (the marker held on the target; pip would evaluate it
    on this machine)."""
    bare = Requirement(str(requirement))
    bare.marker = None
    return bare


def download(wheelhouse: Path, target: "Target", roots: list[Requirement], index_url: str,
             report: Callable[..., None], rounds: int = 3) -> None:
    """Fill `wheelhouse` with every wheel `target` needs for `roots` (binary wheels only), then with what pip's
    markers for this machine left out; raise KitError if some requirement still has no wheel."""
    options = ["download", "--only-binary=:all:", "--index-url", index_url, "--find-links", str(wheelhouse),
               "-d", str(wheelhouse), *target.pip_options()]
    wanted = [str(requirement) for requirement in roots]
    for _ in range(rounds):
        run_pip([*options, *wanted], target.label, report)
        missing = unmet(roots, installable(wheelhouse, target), target.environment())
        if not missing:
            return
        wanted = [str(without_marker(requirement)) for requirement in missing]
    raise KitError(f"no wheel for {target.label} satisfies: {', '.join(wanted)}")


def place_site(out: Path, built: Path | None = None) -> None:
    """The pages in out/site: built as scripts/build_docs.py builds them, or copied from `built`, pages that
    scripts/build_docs.py built already (not built twice)."""
    if built is None:
        pages.build(out / "site")
        return
    if not (Path(built) / "index.html").is_file():
        raise KitError(f"--site {built} holds no index.html: build the pages there with scripts/build_docs.py --out"
                       f" {built}, or leave --site out to build them with the kit")
    shutil.rmtree(out / "site", ignore_errors=True)
    shutil.copytree(built, out / "site")


def check_out_folder(out: Path) -> None:
    """Refuse to write into a folder that holds other things than a kit (its notebooks/ and data/ are replaced)."""
    readme = out / "README.txt"
    if out.exists() and any(out.iterdir()) and not (readme.exists() and readme.read_text().startswith(README_TITLE)):
        raise KitError(f"{out} is not empty and is not a classroom kit: choose another --out")


def folder_size(path: str | Path) -> int:
    """Bytes of every file under `path`."""
    return sum(file.stat().st_size for file in Path(path).rglob("*") if file.is_file())


def print_steps(message: str, transient: bool = False) -> None:
    """Print what the build does, without the transient package counts."""
    if not transient:
        print(message)


def build(out: Path, kit_targets: list["Target"], index_url: str = PYPI,
          report: Callable[..., None] = print_steps, site: Path | None = None) -> Path:
    """Build the classroom kit into `out` for `kit_targets` (an earlier kit there is replaced), with the pages built
    already in `site` if given. `report(message, transient)` is told each step, and each package as pip collects it
    (transient=True)."""
    out = Path(out).resolve()
    check_out_folder(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "README.txt").write_text(readme_text(kit_targets))
    wheelhouse = out / "wheels"
    shutil.rmtree(wheelhouse, ignore_errors=True)
    wheelhouse.mkdir()
    report("copying the notebooks, data and recorded answers; "
           + (f"copying the pages from {site}" if site else "building the pages while pip downloads"))
    copy_project(out)
    with ThreadPoolExecutor(max_workers=1) as pages_builder:  # pip works in processes of its own meanwhile
        placed = pages_builder.submit(place_site, out, site)
        roots = requirements(out / "requirements.txt")
        build_source_only(wheelhouse, roots, index_url, report)
        for number, target in enumerate(kit_targets, 1):
            report(f"[{number}/{len(kit_targets)}] {target.label}")
            download(wheelhouse, target, roots, index_url, report)
        placed.result()  # a failed page build stops the kit too
    return out


class Progress:
    """In a terminal, package counts rewrite one line; elsewhere (a log) one is printed every few seconds, so that the
    long download shows it is alive."""

    def __init__(self, every: float = 5.0) -> None:
        self.every, self.printed = every, 0.0

    def __call__(self, message: str, transient: bool = False) -> None:
        if sys.stdout.isatty():
            print("\r\033[K" + message, end="" if transient else "\n", flush=True)
        elif not transient:
            print(message, flush=True)
        elif time.monotonic() - self.printed >= self.every:
            print(message, flush=True)
            self.printed = time.monotonic()


def classroom_kit() -> None:
    parser = argparse.ArgumentParser(description="Build the classroom kit: a folder to copy onto student laptops.")
    parser.add_argument("--out", type=Path, default=ROOT / "kit", help="the kit's folder (default: kit/)")
    parser.add_argument("--platform", nargs="+", choices=PLATFORM_CHOICES, default=["this"],
                        help="the students' systems (default: this machine's); macos means both arm64 and x86_64")
    parser.add_argument("--python", nargs="+", default=[THIS_PYTHON], metavar="3.X",
                        help=f"the students' Python versions, 3.11 to 3.14 (default: this one, {THIS_PYTHON})")
    parser.add_argument("--index-url", default=PYPI, help="a mirror of PyPI to download from (default: PyPI)")
    parser.add_argument("--site", type=Path, help="pages built already by scripts/build_docs.py --out DIR: copied"
                                                  " into the kit instead of built again")
    arguments = parser.parse_args()
    progress = Progress()
    try:
        out = build(arguments.out, targets(arguments.platform, arguments.python), arguments.index_url,
                    report=progress, site=arguments.site)
    except KitError as error:
        sys.exit(f"\nclassroom_kit: {error}")
    progress(f"built {out} ({folder_size(out) / 1e6:.0f} MB): copy it to the laptops; {out / 'README.txt'} says "
             "what students type")

