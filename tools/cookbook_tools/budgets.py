"""The figures the project promises, measured from a fresh clone (scripts/check_budgets.py): each against its budget
and against the figure recorded last time (docs/budget_figures.json, whose table docs/maintaining.md shows).

The figures: the README's test command (its pytest part, the classroom kit's download check included), the offline
suite, the quick loop and the pages, in seconds of wall time (the CPU time of every process each started is shown
beside it: this machine's speed drifts); each notebook's prose as minutes read aloud, in both languages, against
the teacher's guide's slot for it (docs/teaching.md gives each slot's reading minutes and the rate in words,
docs/teaching.zh.md the rate in 字), and the word budgets the issues set (the README's too), all counting what a
teacher says: inline code, ids and numbers included (`--words` counts only these, in the working tree); each
notebook's run in a fresh kernel against a bare kernel's; the store's benchmark ratios (scripts/bench_store.py
--json). A benchmark, not a timed test: CI does not run it.
"""

import argparse
import ctypes
import dataclasses
import datetime
import json
import os
import platform
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import nbformat

from cookbook_tools.paths import ROOT
from cookbook_tools.pytest_plugin import LIVE_SETTINGS

RECORD_FILE = ROOT / "docs" / "budget_figures.json"
MAINTAINING = ROOT / "docs" / "maintaining.md"
TABLE_START = "<!-- the budget table: scripts/check_budgets.py --record writes it -->"
TABLE_END = "<!-- end of the budget table -->"
CI_SCRIPT = ".ci/run"  # its last line is the README's test command, word for word (tests/test_documents.py)
SUITE_PART = " && .venv/bin/python -m pytest"  # where the README's command turns from setting up to testing

# The word budgets the issues set, the latest of each, in words read aloud (inline code, ids and numbers included:
# issue 36): 01-06 together in 3,200 (issues 25 and 30), 04 in 600 (issue 30), 07 and 08 no longer than when issue 25
# was filed (751 and 1,101), 09 and the README in 1,000 and 1,200 (issue 36).
WORD_BUDGETS = {"01-06": 3200, "04_wrapper.ipynb": 600, "07_memories_that_last.ipynb": 751,
                "08_cost_and_threshold.ipynb": 1101, "09_many_app_servers.ipynb": 1000, "README.md": 1200}
WORDS_READ = "words read aloud"
# A notebook's run in a fresh kernel, in bare kernels' time (a bare kernel: start, one empty cell, stop), measured side
# by side, so that the machine's drift cancels out; 09 starts a PostgreSQL server and four Python processes, 10 a
# PostgreSQL server.
KERNEL_RATIO_BUDGET, SERVER_NOTEBOOK_RATIO_BUDGET = 4.0, 12.0
KERNEL_RATIO = ": run / a bare kernel"  # the end of these figures' names
README_TEST = "the README's test command (pytest --run-network)"
OFFLINE_SUITE, QUICK_LOOP = "the offline suite (pytest)", "the quick loop (pytest -m \"not slow\")"
PAGES = "the pages (scripts/build_docs.py)"
SERVER_NOTEBOOKS = ("09_many_app_servers.ipynb", "10_a_desk_memory.ipynb")
SECONDS_BUDGETS = {README_TEST: 90.0, OFFLINE_SUITE: 60.0, QUICK_LOOP: 10.0, PAGES: 5.0}
STORE_SIZE = "10000"
STORE_AIMS = {"recall_p50_ratio": (1.5, True), "save_p50_ratio": (1.5, True), "eight_writers_ratio": (0.7, False)}
NO_STORE_JSON = "bench_store.py has no --json yet"


@dataclasses.dataclass(frozen=True)
class Figure:
    """One promised figure: its value now (None: not measured, `note` says why), its budget, and whether the budget is
    a most (or a least)."""

    name: str
    value: float | None
    unit: str
    budget: float
    at_most: bool = True
    note: str = ""

    @property
    def over(self) -> bool:
        return self.value is not None and (self.value > self.budget if self.at_most else self.value < self.budget)


# Words

FENCED_CODE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[^\n]*$", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HTML_TAG = re.compile(r"<[^>\n]+>")
LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
# A word read aloud: letters and digits, with the marks inside a word ("self-hosted", "T-101", "0.91", "Fernwood's");
# an underscore, a bracket or a slash parts words (cloud_ops: "cloud ops"), and a run of marks alone is none.
WORD = re.compile(r"[^\W_]+(?:[-.,'’][^\W_]+)*")
CODE_WORD = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+")  # `basic_memory.REMEMBER_AT = 0.5`: basic memory REMEMBER AT 0.5
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # a Chinese character (字)


def spoken(markdown: str) -> str:
    """The text a teacher reads aloud from Markdown: no code fences (shown, not read), HTML tags or link targets;
    inline code as the words one says for it (`ask_with_memory(state)` is "ask with memory state")."""
    for pattern in (FENCED_CODE, HTML_TAG):
        markdown = pattern.sub(" ", markdown)
    markdown = LINK_TARGET.sub("] ", markdown)
    return INLINE_CODE.sub(lambda code: f" {' '.join(CODE_WORD.findall(code.group()))} ", markdown)


def spoken_words(markdown: str) -> int:
    """The words read aloud in Latin script (WORD), ids and numbers included; Chinese characters are counted apart
    (chinese_characters)."""
    return len(WORD.findall(HAN.sub(" ", spoken(markdown))))


def chinese_characters(markdown: str) -> int:
    return len(HAN.findall(spoken(markdown)))


def read_markdown(path: Path) -> list[str]:
    """The Markdown cells of a notebook (a Chinese-only cell, such as 01's glossary, is for reference, not read
    aloud), or a Markdown file's text."""
    if path.suffix != ".ipynb":
        return [path.read_text(encoding="utf-8")]
    return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"
            and not (cell.metadata.get("translation") or {}).get("chinese_only")]


@dataclasses.dataclass(frozen=True)
class Reading:
    """What reading a text aloud takes: its Latin-script words and its Chinese characters."""

    words: int
    characters: int = 0

    def minutes(self, rate: float, chinese_rate: float) -> float:
        return self.words / rate + self.characters / chinese_rate

    def described(self, rate: float, chinese_rate: float) -> str:
        words = f"{self.words:,} words at {rate} a minute"
        return f"{self.characters:,} 字 at {chinese_rate} a minute and {words}" if self.characters else words


def reading(path: Path) -> "Reading":
    texts = read_markdown(path)
    return Reading(sum(map(spoken_words, texts)), sum(map(chinese_characters, texts)))


SLOT_ROW = re.compile(r"^\| [\d-]+ \| \[[^\]]*\]\(\.\./notebooks/(?P<notebook>\d\d_\w+\.ipynb)\) \|"
                      r" (?P<read>\d+(?:\.\d+)?) \+", re.M)
READING_RATE = re.compile(r"(?P<rate>\d+) words a minute")
CHINESE_READING_RATE = re.compile(r"每分钟约? ?(?P<rate>\d+) ?字")


def reading_slots(guide_text: str) -> tuple[int, dict[str, float]]:
    """(words a minute, {notebook: minutes of reading aloud}) from the teacher's guide's tables of slots (the
    lesson's, and the optional parts')."""
    rate = READING_RATE.search(guide_text)
    slots = {match["notebook"]: float(match["read"]) for match in SLOT_ROW.finditer(guide_text)}
    if not rate or not slots:
        raise ValueError("docs/teaching.md: no lesson table of reading minutes, or no 'N words a minute': the"
                         " budget check reads both there (tools/cookbook_tools/budgets.py, SLOT_ROW and READING_RATE)")
    return int(rate["rate"]), slots


def chinese_reading_rate(guide_text: str) -> int:
    """字 a minute, from the Chinese teacher's guide ("每分钟约 230 字")."""
    rate = CHINESE_READING_RATE.search(guide_text)
    if not rate:
        raise ValueError("docs/teaching.zh.md: no '每分钟约 N 字': the budget check reads the Chinese reading rate"
                         " there (tools/cookbook_tools/budgets.py, CHINESE_READING_RATE)")
    return int(rate["rate"])


def chinese_twin(name: str) -> str:
    return name.removesuffix(".ipynb") + ".zh.ipynb"


LESSON = [f"{number:02}" for number in range(1, 7)]  # the notebooks of the 45-minute lesson, 01-06


def word_figures(root: Path) -> list["Figure"]:
    """Each notebook with a slot in the guide, and its Chinese twin, read aloud in minutes (unrounded) against the
    slot; 01-06 together, 04, 07, 08, 09 and the README in words read aloud, against the issues' budgets
    (WORD_BUDGETS)."""
    guide = (root / "docs" / "teaching.md").read_text(encoding="utf-8")
    rate, slots = reading_slots(guide)
    chinese_rate = chinese_reading_rate((root / "docs" / "teaching.zh.md").read_text(encoding="utf-8"))
    notebooks = {path.name: reading(path) for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
    figures = []
    for name, minutes in slots.items():
        for page in (name, chinese_twin(name)):
            if page in notebooks:
                read = notebooks[page]
                # unrounded: 3.03 minutes is over a 3-minute slot, though it rounds to 3.0
                figures.append(Figure(f"{page}: read aloud", read.minutes(rate, chinese_rate), "min",
                                      minutes, note=read.described(rate, chinese_rate)))
    lesson = [name for name in notebooks if name[:2] in LESSON and not name.endswith(".zh.ipynb")]
    if len(lesson) != len(LESSON):
        raise ValueError(f"notebooks/: the lesson's notebooks are {', '.join(LESSON)}, one each; found {lesson}")
    words = {name: read.words for name, read in notebooks.items()} | {"README.md": reading(root / "README.md").words}
    figures.append(Figure(f"01-06: {WORDS_READ}", sum(words[name] for name in lesson), "words", WORD_BUDGETS["01-06"]))
    figures += [Figure(f"{name}: {WORDS_READ}", words[name], "words", budget)
                for name, budget in WORD_BUDGETS.items() if name in words]
    return figures


# Time: wall and the CPU of every process a command started

PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
ORPHANS_WAIT = 30  # seconds a command's leftover processes get to exit before its CPU time is taken


def adopt_orphans() -> None:
    """Make this process the reaper of its descendants' orphans (Linux): a daemon a command leaves (a database
    server) is then waited for here, and its CPU time counted."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reap_orphans(wait: float = 0.0) -> int:
    """Wait for the orphans adopt_orphans made ours, at most `wait` seconds for those still running (a kernel exits
    a moment after its parent): how many are left running then."""
    deadline = time.monotonic() + wait
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            if time.monotonic() >= deadline:
                return len([entry for entry in Path("/proc").glob("[0-9]*") if parent_of(entry) == os.getpid()])
            time.sleep(0.05)


def reaping_while(process: subprocess.Popen[str]) -> None:
    """Wait for `process`, reaping meanwhile the orphans adopt_orphans made ours as they exit: unreaped, an orphan
    stays a zombie, which a test that kills a daemon (a PostgreSQL server) and waits for it to go would wait for in
    vain, though no supervisor a reader runs under leaves one so. `process` itself is left for Popen to wait for."""
    if not sys.platform.startswith("linux"):  # adopt_orphans adopts none there
        process.wait()
        return
    while process.poll() is None:
        try:
            exited = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)  # who has exited, not reaped yet
        except ChildProcessError:
            exited = None
        if exited is not None and exited.si_pid not in (0, process.pid):
            os.waitpid(exited.si_pid, 0)
        else:
            time.sleep(0.05)


def parent_of(process: Path) -> int | None:
    try:
        return int((process / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


@dataclasses.dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    returncode: int
    output: str  # stdout, then stderr
    stdout: str = ""
    left_running: int = 0  # processes it started that still ran ORPHANS_WAIT seconds after it exited


def quiet_environment() -> dict[str, str]:
    """This environment without a developer's live settings (a key, another cache or database): what is measured is
    the committed, offline cookbook."""
    return {name: value for name, value in os.environ.items() if name not in LIVE_SETTINGS}


def timed(command: str, cwd: Path) -> "Run":
    """Run a shell command: its wall time, the CPU time of it and everything it started, its exit status and output."""
    reap_orphans()
    # Output into files, not pipes: a pipe would keep the command "running" until every process it left (a kernel
    # shutting down) closed its copy, and a terminal's user has their prompt back when the command itself exits.
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        cpu_before, started = children_cpu(), time.monotonic()
        process = subprocess.Popen(command, shell=True, cwd=cwd, env=quiet_environment(), stdout=stdout,
                                   stderr=stderr, text=True)
        reaping_while(process)
        wall = time.monotonic() - started
        left = reap_orphans(wait=ORPHANS_WAIT)  # their CPU time is the command's
        out, err = (file.seek(0) or file.read() for file in (stdout, stderr))
    return Run(wall, children_cpu() - cpu_before, process.returncode, out + err, out, left)


def readme_command(root: Path) -> tuple[str, str]:
    """(the setup part, the pytest part) of the README's test command, as .ci/run runs it."""
    command = (root / CI_SCRIPT).read_text().strip().splitlines()[-1]
    setup, _, suite = command.partition(SUITE_PART)
    if not suite:
        raise ValueError(f"{CI_SCRIPT}: its last line has no '{SUITE_PART.strip()}': the budget check splits the"
                         " README's test command there")
    return setup, SUITE_PART.removeprefix(" && ") + suite


def seconds_figure(name: str, run: "Run") -> "Figure":
    passed = "" if run.returncode == 0 else f"; FAILED (exit {run.returncode}): {what_failed(run)}"
    left = f"; {run.left_running} processes it started still running {ORPHANS_WAIT} s after it" \
        if run.left_running else ""
    return Figure(name, round(run.wall, 1), "s", SECONDS_BUDGETS[name], note=f"CPU {run.cpu:.1f} s{left}{passed}")


PYTEST_SUMMARY = re.compile(r"^(FAILED|ERROR) |^=*\s*\d+ (failed|passed|skipped|errors?)\b")


def what_failed(run: "Run") -> str:
    """pytest's short summary (the tests that failed, then the counts), from its standard output: the kernels' warnings
    on standard error come after it. Another command's last line."""
    summary = [line.strip("= ") for line in run.stdout.splitlines() if PYTEST_SUMMARY.match(line)]
    if summary:
        return "; ".join(summary[:5] + (["..."] if len(summary) > 6 else []) + summary[-1:] * (len(summary) > 5))
    lines = [line for line in run.output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


KERNEL_TIMES = """
import json, sys, time
import nbformat
from cookbook_tools.execution import execute
from cookbook_tools.paths import ENGLISH_NOTEBOOKS

def seconds(notebook):
    started = time.monotonic()
    execute(notebook)
    return time.monotonic() - started

bare = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
notebooks = {"bare": bare} | {path.name: nbformat.read(path, as_version=4) for path in ENGLISH_NOTEBOOKS}
runs = {name: [] for name in notebooks}
for _ in range(3):  # in turn, so that the machine's drift reaches every notebook and the bare kernel alike
    for name, notebook in notebooks.items():
        runs[name].append(seconds(notebook))
print(json.dumps({name: sorted(times)[1] for name, times in runs.items()}))
"""


def kernel_figures(clone: Path, python: str) -> list["Figure"]:
    """Each English notebook's run in a fresh kernel, in a bare kernel's time: the median of three runs of each, taken
    in turn (one run of each varied by up to a quarter here)."""
    run = timed(f"{shlex.quote(python)} -c {shlex.quote(KERNEL_TIMES)}", clone)
    if run.returncode:
        raise RuntimeError(f"running the notebooks in {clone} failed:\n{run.output[-3000:]}")
    times = json.loads(run.stdout.strip().splitlines()[-1])
    bare = times.pop("bare")
    return [Figure(f"{name}{KERNEL_RATIO}", round(seconds / bare, 1), "×",
                   SERVER_NOTEBOOK_RATIO_BUDGET if name in SERVER_NOTEBOOKS else KERNEL_RATIO_BUDGET,
                   note=f"{seconds:.2f} s against {bare:.2f} s") for name, seconds in times.items()]


def store_figures(clone: Path, python: str, report_file: Path) -> list["Figure"]:
    """The store's benchmark ratios at 10,000 memories, from scripts/bench_store.py --json; not measured (and said
    why) when the script has no --json."""
    script = Path(clone) / "scripts" / "bench_store.py"
    helped = subprocess.run([python, str(script), "--help"], cwd=clone, env=quiet_environment(), capture_output=True,
                            text=True)
    if "--json" not in helped.stdout:
        return [Figure(f"store: {name}", None, "×", aim, at_most, NO_STORE_JSON)
                for name, (aim, at_most) in STORE_AIMS.items()]
    run = timed(f"{shlex.quote(python)} {shlex.quote(str(script))} --sizes {STORE_SIZE} --json"
                f" {shlex.quote(str(report_file))}", clone)
    if run.returncode:
        raise RuntimeError(f"scripts/bench_store.py failed:\n{run.output[-3000:]}")
    return store_ratios(json.loads(Path(report_file).read_text()))


def store_ratios(report: dict[str, Any]) -> list["Figure"]:
    measured = report["sizes"][STORE_SIZE]
    return [Figure(f"store: {name}", round(measured[name], 2), "×", aim, at_most)
            for name, (aim, at_most) in STORE_AIMS.items()]


# The report

def machine() -> dict[str, Any]:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else \
        platform.processor()
    return {"system": f"{platform.system()} {platform.machine()}", "cpu": model, "cores": os.cpu_count(),
            "python": platform.python_version()}


# What a timed figure may move between quiet runs of one commit on the 2-core machine: the suites and the store's ratios
# by a tenth; a notebook's run against a bare kernel by a fifth, medians of three runs and all (09: 6.9 and 6.9, 03: 2.0
# and 2.4, 10: 4.4 and 5.1 on 2026-12-05; single runs of 09 gave 5.6 and 7.2). A word or minute figure may not move at
# all. The README's test command downloads about 100 wheels from PyPI: it moved by 15.3% (60.3 to 69.5 s in six runs
# on 2026-12-05). Past that, a figure worse than its last record is a defect (DEVELOPERS.md: hold what was won).
TIMING_NOISE, KERNEL_RATIO_NOISE, NETWORK_NOISE = 0.1, 0.2, 0.16


def worse_than(figure: "Figure", last: float | None, noise: float | None = None) -> bool:
    """Whether `figure` is worse than `last`, the value recorded for it last time (None: no record to hold), by more
    than its noise (`noise`: instead of the figure's own, e.g. 0 for any worse value)."""
    if figure.value is None or last is None:
        return False
    if noise is None:
        noise = (NETWORK_NOISE if figure.name == README_TEST else KERNEL_RATIO_NOISE
                 if figure.name.endswith(KERNEL_RATIO) else TIMING_NOISE if figure.unit in ("s", "×") else 0)
    margin = abs(last) * noise
    return figure.value > last + margin if figure.at_most else figure.value < last - margin


def verdict(figure: "Figure", last: float | None = None) -> str:
    if figure.value is None:
        return "not measured"
    return "OVER" if figure.over else "WORSE than last" if worse_than(figure, last) else "ok"


def worse_than_their_record(figures: list["Figure"], recorded: dict[str, Any]) -> list["Figure"]:
    """The figures worse than the value recorded for them last time (worse_than)."""
    return [figure for figure in figures if worse_than(figure, recorded.get(figure.name))]



def shown(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "min":  # to a hundredth: 2.99 and 3.03 lie on either side of a 3-minute slot
        return f"{value:.2f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{value:,.0f} {unit}" if unit == "words" else f"{value:g} {unit}" if unit != "×" else f"{value:g}×"


def table(figures: list["Figure"], recorded: dict[str, Any], kept: Collection[str] = ()) -> str:
    """The Markdown table: each figure now, its budget, the figure recorded last time, the verdict (`kept`: the
    figures whose record was kept in the record this run made)."""
    rows = ["| figure | now | budget | last recorded | verdict | beside it |", "|---|---:|---:|---:|---|---|"]
    for figure in figures:
        budget = ("≤ " if figure.at_most else "≥ ") + shown(figure.budget, figure.unit)
        last = recorded.get(figure.name)
        said = "ok, within the noise: the record kept" if figure.name in kept else verdict(figure, last)
        rows.append(f"| {figure.name} | {shown(figure.value, figure.unit)} | {budget} | {shown(last, figure.unit)} |"
                    f" {said} | {figure.note} |")
    return "\n".join(rows)


def read_record(path: Path = RECORD_FILE) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {"figures": {}}


def record(figures: list["Figure"], about: dict[str, Any], path: Path = RECORD_FILE,
           maintaining: Path = MAINTAINING) -> None:
    """Write the figures as the ones recorded last time (with the ones they replace), and their table into
    docs/maintaining.md. A record is a floor: a figure worse than it, within the noise main() lets pass, is written as
    this run's, and the record it did not reach is kept beside it ("kept") for the next comparison."""
    previous = floors(read_record(path))
    kept = {figure.name: previous[figure.name] for figure in figures
            if worse_than(figure, previous.get(figure.name), noise=0)}
    path.write_text(json.dumps({**about, "figures": {figure.name: figure.value for figure in figures}, "kept": kept,
                                "notes": {figure.name: figure.note for figure in figures if figure.note},
                                "previous": previous}, indent=1, ensure_ascii=False) + "\n")
    text = maintaining.read_text()
    if TABLE_START not in text or TABLE_END not in text:
        raise ValueError(f"{maintaining}: no budget table markers ({TABLE_START} ... {TABLE_END}) to write between")
    before, rest = text.split(TABLE_START, 1)
    after = rest.split(TABLE_END, 1)[1]
    maintaining.write_text(f"{before}{TABLE_START}\n{recorded_table(read_record(path))}\n{TABLE_END}{after}")


def floors(recorded: dict[str, Any]) -> dict[str, Any]:
    """What each figure is held to: its last recorded value, or the record that run kept."""
    return {**recorded.get("figures", {}), **recorded.get("kept", {})}


def recorded_table(recorded: dict[str, Any]) -> str:
    """The table docs/maintaining.md shows: the recorded figures, the machine, and the figures recorded before."""
    figures = [figure_of(name, value, recorded.get("notes", {}).get(name, ""))
               for name, value in recorded["figures"].items()]
    about = recorded.get("machine", {})
    return (f"Measured {recorded.get('measured', '?')} from a fresh clone of {recorded.get('commit', '?')} on"
            f" {about.get('system', '?')}, {about.get('cores', '?')} cores ({about.get('cpu', '?')}), Python"
            f" {about.get('python', '?')}, load average {recorded.get('load', '?')} before / after; the README's"
            f" setup command took {recorded.get('setup', '?')} s.\n\n"
            + table(figures, recorded.get("previous", {}), kept=recorded.get("kept", {})))


def budget_of(name: str) -> tuple[float, str, bool]:
    """(budget, unit, at most) of a figure, by its name."""
    if name in SECONDS_BUDGETS:
        return SECONDS_BUDGETS[name], "s", True
    if name.endswith(KERNEL_RATIO):
        notebook = name.split(":")[0]
        return (SERVER_NOTEBOOK_RATIO_BUDGET if notebook in SERVER_NOTEBOOKS else KERNEL_RATIO_BUDGET), "×", True
    if name.startswith("store: "):
        aim, at_most = STORE_AIMS[name.removeprefix("store: ")]
        return aim, "×", at_most
    if name.endswith(": read aloud"):
        _, slots = reading_slots((ROOT / "docs" / "teaching.md").read_text(encoding="utf-8"))
        return slots[name.split(":")[0].replace(".zh.ipynb", ".ipynb")], "min", True
    return WORD_BUDGETS[name.rsplit(": ", 1)[0]], "words", True  # "...: prose" (counted before issue 36) too


def figure_of(name: str, value: float | None, note: str = "") -> "Figure":
    budget, unit, at_most = budget_of(name)
    return Figure(name, value, unit, budget, at_most, note)


# The check

def fresh_clone(folder: Path, source: Path = ROOT) -> tuple[Path, "Run"]:
    """A fresh clone of `source`'s committed HEAD in `folder`, set up with the README's setup command."""
    clone = Path(folder) / "clone"
    subprocess.run(["git", "clone", "--quiet", str(source), str(clone)], check=True)
    setup, _ = readme_command(clone)
    run = timed(setup, clone)
    if run.returncode:
        raise RuntimeError(f"the README's setup command failed in {clone}:\n{run.output[-3000:]}")
    return clone, run


def measure(folder: Path, network: bool = True, store: bool = True,
            log: Callable[..., None] = print) -> tuple[list["Figure"], dict[str, Any]]:
    """Every figure, measured in a fresh clone under `folder`."""
    log("cloning and setting up (the README's setup command)")
    clone, setup = fresh_clone(folder)
    python = str(clone / ".venv" / "bin" / "python")
    _, suite = readme_command(clone)
    figures = []
    runs = [(README_TEST, suite, network),
            (OFFLINE_SUITE, ".venv/bin/python -m pytest", True),
            (QUICK_LOOP, ".venv/bin/python -m pytest -m 'not slow'", True),
            (PAGES,
             f".venv/bin/python scripts/build_docs.py --out {shlex.quote(str(Path(folder) / 'site'))}", True)]
    for name, command, wanted in runs:
        if not wanted:
            figures.append(Figure(name, None, "s", SECONDS_BUDGETS[name], note="not asked (--no-network)"))
            continue
        log(f"timing {name}")
        figures.append(seconds_figure(name, timed(command, clone)))
        log(f"  {shown(figures[-1].value, 's')} ({figures[-1].note})")
    log("counting the notebooks' words")
    figures += word_figures(clone)
    log("running each notebook in a fresh kernel, and bare kernels")
    figures += kernel_figures(clone, python)
    if store:
        log("benchmarking the store (scripts/bench_store.py --sizes 10000)")
        figures += store_figures(clone, python, Path(folder) / "bench.json")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True,
                            text=True).stdout.strip()
    return figures, {"setup": round(setup.wall, 1), "commit": commit}


def uncommitted(root: Path = ROOT) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True,
                          text=True).stdout.strip()


def words_only(root: Path = ROOT) -> int:
    figures, recorded = word_figures(root), floors(read_record())
    print(table(figures, recorded))
    return reported(figures, recorded, "every word figure is within its budget and holds its last record")


def reported(figures: list["Figure"], recorded: dict[str, Any], all_well: str) -> int:
    """Print what is not measured, over budget, failed or worse than its last record; 1 if any but the first."""
    over = [figure for figure in figures if figure.over]
    failed = [figure for figure in figures if "FAILED" in figure.note]
    worse = worse_than_their_record(figures, recorded)
    missing = [figure for figure in figures if figure.value is None]
    if missing:
        print("\nnot measured: " + "; ".join(f"{figure.name} ({figure.note})" for figure in missing))
    if over:
        print("\nover budget: " + "; ".join(f"{figure.name}: {shown(figure.value, figure.unit)}, budget"
                                            f" {shown(figure.budget, figure.unit)}" for figure in over))
    for figure in failed:
        print(f"\nfailed: {figure.name}: {figure.note}")
    if worse:
        print("\nworse than the last record: " + "; ".join(
            f"{figure.name}: {shown(figure.value, figure.unit)}, recorded {shown(recorded[figure.name], figure.unit)}"
            for figure in worse))
    if over or failed or worse:
        return 1
    print(f"\n{all_well}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure every figure the project promises, from a fresh clone of"
                                                 " this repository's HEAD, against its budget and the last record.")
    parser.add_argument("--record", action="store_true",
                        help="write these figures as the recorded ones (docs/budget_figures.json and the table in"
                             " docs/maintaining.md)")
    parser.add_argument("--no-network", action="store_true",
                        help="leave out the README's test command (its classroom kit check downloads from PyPI)")
    parser.add_argument("--no-store", action="store_true", help="leave out the store's benchmark")
    parser.add_argument("--words", action="store_true",
                        help="only the words read aloud, counted in this working tree (no clone, nothing timed): each"
                             " notebook with a slot and its Chinese twin against the slot, and the word budgets")
    arguments = parser.parse_args(argv)
    if arguments.words:
        return words_only()
    if uncommitted():
        print("note: the work tree has uncommitted changes; the fresh clone measures the last commit only")
    adopt_orphans()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="cookbook-budgets-") as folder:
        figures, about = measure(Path(folder), network=not arguments.no_network, store=not arguments.no_store)
    load = f"{load_before:.2f} / {os.getloadavg()[0]:.2f}"
    recorded = floors(read_record())
    print(f"\nsetup (the README's setup command): {about['setup']} s; load average before / after: {load}\n")
    print(table(figures, recorded))
    status = reported(figures, recorded, "every figure measured is within its budget and holds its last record")
    if arguments.record and status:
        print("\nnot recorded: a figure over its budget or worse than its last record would lower the floor")
    elif arguments.record:
        record(figures, {"measured": datetime.date.today().isoformat(), "commit": about["commit"], "load": load,
                         "setup": about["setup"], "machine": machine()})
        print(f"\nrecorded in {RECORD_FILE.relative_to(ROOT)} and {MAINTAINING.relative_to(ROOT)}")
    return status
