"""What every pytest run of this project does first, whichever paths it is given (pytest.ini loads it with -p, so a
lone `pytest notebooks/05_probe_sequence.ipynb` gets it too, though it never reads tests/conftest.py):

- a developer's live settings are set aside for the session: nbval's kernels start later and inherit this
  environment, so a miss in nbval's run would otherwise go live and be recorded into the committed cache (tests that
  need a key set one with conftest.configure());
- the session's imports, kernels and subprocesses write no __pycache__ (only this plugin's own package,
  cookbook_tools/__pycache__, ignored by git, is written before the plugin runs, unless PYTHONDONTWRITEBYTECODE is set).
"""

import os
import sys

sys.dont_write_bytecode = True  # from the start: pytest rewrites and caches conftest.py and the test modules on import
LIVE_SETTINGS = ("TYPESAFE_API_KEY", "TYPESAFE_ENDPOINT")
SET_ASIDE = {}  # a developer's live settings, restored when the session ends


def pytest_configure():
    for name in LIVE_SETTINGS:
        if name in os.environ:
            SET_ASIDE[name] = os.environ.pop(name)
    SET_ASIDE.setdefault("PYTHONDONTWRITEBYTECODE", os.environ.get("PYTHONDONTWRITEBYTECODE"))
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


def pytest_unconfigure():
    for name, value in SET_ASIDE.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    SET_ASIDE.clear()
