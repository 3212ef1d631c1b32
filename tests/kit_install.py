"""The classroom kit's end-to-end check, run in the background (tests/conftest.py starts it, tests/test_classroom_kit.py
reads it): build a kit for this machine, install it into a fresh venv as a student would, run a notebook from it."""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from cookbook_tools.paths import ROOT

# About a minute, mostly pip (downloading, then installing) and a kernel: it starts in the background as soon as the
# session's tests are chosen, and its test runs last, so that the rest of the suite runs meanwhile.
KIT_TEST = "test_kit_installs_offline_and_runs_a_notebook"
KIT_NOTEBOOK = "06_final_comparison.ipynb"


class KitInstall(threading.Thread):
    """Build a kit for this machine in a temporary folder, install it into a fresh .venv inside it as a student
    would (pip --no-index, with no pip configuration and no reachable proxy: nothing can come from elsewhere), then
    execute a notebook of the kit with that venv's jupyter. `steps` records each command's result."""

    def __init__(self, pages=None):
        super().__init__(daemon=True)
        # pages(folder) builds the pages there, first, to be copied into the kit: the session builds them once, and
        # the page tests read the same build (site_build, once pages_built is set).
        self.pages, self.site_build, self.pages_built = pages, None, threading.Event()
        self.folder = Path(tempfile.mkdtemp(prefix="classroom_kit_"))
        self.kit, self.executed = self.folder / "kit", self.folder / "executed"
        self.environment = self.offline_environment()  # made in the main thread, before any test changes os.environ
        self.steps = []
        self.running = []  # the steps' processes, stopped at cleanup if the session ends first
        self.stopped = False

    def offline_environment(self):
        """A student's shell: no pip configuration, no Jupyter or Python settings of this machine, an empty home,
        no key, and any network attempt sent to a closed local port."""
        kept = {name: value for name, value in os.environ.items()
                if not name.startswith(("PIP_", "JUPYTER", "JPY_", "PYTHON", "VIRTUAL_ENV", "TYPESAFE_", "COOKBOOK_"))}
        closed = "http://127.0.0.1:9"
        return kept | {"PIP_CONFIG_FILE": os.devnull, "HOME": str(self.folder / "home"), "http_proxy": closed,
                       "https_proxy": closed, "HTTP_PROXY": closed, "HTTPS_PROXY": closed, "no_proxy": ""}

    def step(self, name, command, **options):
        if self.stopped:  # the session ended first
            return False
        started = time.monotonic()
        # At the suite's own priority: this check is the longest part of the suite (the rest runs meanwhile).
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **options)
        self.running.append(process)
        output, _ = process.communicate()
        self.steps.append(SimpleNamespace(name=name, command=command, returncode=process.returncode,
                                          output=output[-3000:], seconds=time.monotonic() - started))
        return process.returncode == 0

    def run(self):
        # The student's virtual environment is made while the pages and the kit build, beside the kit rather than in
        # it (the build refuses a folder that already holds something else): where it lives changes nothing it
        # installs.
        venv = self.folder / "venv"
        venv_bin = venv / "bin"
        offline = {"cwd": self.folder, "env": self.environment}
        (self.folder / "home").mkdir()
        making_venv = threading.Thread(target=self.step, args=("venv", [sys.executable, "-m", "venv", str(venv)]),
                                       kwargs=offline)
        making_venv.start()
        try:
            self.site_build = self.pages and self.pages(self.folder / "site")
        finally:
            self.pages_built.set()
        built = self.step("build", [sys.executable, str(ROOT / "scripts" / "classroom_kit.py"), "--out",
                                    str(self.kit), *(["--site", str(self.site_build.out)] if self.site_build else [])])
        making_venv.join()
        self.steps.sort(key=lambda step: step.name != "build")  # build, then venv, as a student meets them
        offline["cwd"] = self.kit
        built and self.steps[1].returncode == 0 \
            and self.step("install", [str(venv_bin / "pip"), "install", "--no-index", "--find-links", "wheels",
                                      "-r", "requirements.txt", "--no-compile", "--disable-pip-version-check"],
                          **offline) \
            and self.step("notebook", [str(venv_bin / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                                       KIT_NOTEBOOK, "--output-dir", str(self.executed)],
                          cwd=self.kit / "notebooks", env=offline["env"])

    def outcome(self):
        return SimpleNamespace(steps=self.steps, kit=self.kit, executed=self.executed)

    def cleanup(self):
        self.stopped = True
        for process in self.running:
            if process.poll() is None:
                process.terminate()  # the session ended before the check (Ctrl-C, -x): do not wait for pip
        if self.is_alive():
            self.join(timeout=60)
        shutil.rmtree(self.folder, ignore_errors=True)
