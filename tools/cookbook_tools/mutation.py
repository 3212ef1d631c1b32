"""Mutation testing of the hand-written modules, a maintainer's check (not CI): mutmut (requirements-mutation.txt)
changes one thing at a time in a copy of them (mutants/, ignored by git), such as `>` for `>=` or a string emptied, and
runs the quick loop's tests that reach the changed function. A mutant that no test fails on "survived": a test is
missing, or the change makes no difference a reader could see (an equivalent mutant). Which modules, and which tests,
is [tool.mutmut] in pyproject.toml.
"""

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys

from cookbook_tools.paths import ROOT

MUTANTS = ROOT / "mutants"
STATUSES = ("survived", "no tests", "timeout", "suspicious", "segfault")  # what `mutmut results` lists, killed aside


def mutmut(*arguments: str, capture: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mutmut", *arguments], cwd=ROOT, check=not capture, text=True,
                          capture_output=capture)


def survivors() -> dict[str, str]:
    """{mutant name: status} of every mutant that no test killed, as `mutmut results` lists them."""
    listed = mutmut("results", capture=True).stdout.splitlines()
    return dict(line.strip().rsplit(": ", 1) for line in listed if line.strip().endswith(STATUSES))


def main() -> None:
    parser = argparse.ArgumentParser(description="Mutation-test the hand-written modules against the quick loop.")
    parser.add_argument("names", nargs="*", help="only these mutants (e.g. 'memory_cookbook.replay*'), reusing the "
                                                 "last run's results for the others")
    parser.add_argument("--max-children", type=int, default=2, help="mutants tested at once (default: 2)")
    arguments = parser.parse_args()
    if importlib.util.find_spec("mutmut") is None:
        sys.exit("mutation_test: mutmut is not installed: .venv/bin/pip install -r requirements-mutation.txt")
    if not arguments.names:
        shutil.rmtree(MUTANTS, ignore_errors=True)  # a full run starts fresh: no result of older code or tests
    mutmut("run", "--max-children", str(arguments.max_children), *arguments.names)
    mutmut("export-cicd-stats", capture=True)
    stats = json.loads((MUTANTS / "mutmut-cicd-stats.json").read_text())
    left = survivors()
    for name, status in left.items():
        print(f"\n# {name}: {status}\n" + mutmut("show", name, capture=True).stdout.split("\n", 1)[-1].rstrip())
    killed, total = stats["killed"], stats["total"]
    print(f"\nmutation score: {killed}/{total} mutants killed ({killed / total:.0%});"
          f" {stats['survived']} survived, {stats['no_tests']} reached by no quick-loop test, {stats['timeout']} timed"
          " out. `python -m mutmut show NAME` shows one; `python -m mutmut browse` all.")


if __name__ == "__main__":
    main()
