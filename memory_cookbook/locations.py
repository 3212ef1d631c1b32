"""Where the cookbook's files are: the runtime package sits at the top of a checkout of the cookbook, beside the
recorded answers, the ticket data and the notebooks. Hand-written; it reads nothing and changes nothing.

A normal (non-editable) `pip install .` copies only this package into site-packages, without the files around it:
`checkout_file()` then refuses with an error that says so (tests/test_layers.py)."""

from pathlib import Path

from memory_cookbook.shown_as_message import ShownAsMessage

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CACHE_FILE = ROOT / "json_cache.json"
RECORDED_REQUESTS_FILE = ROOT / "recorded_requests.json"
TICKETS_FILE = ROOT / "data" / "tickets.json"
LESSON_FILE = NOTEBOOKS / "jev_memory_lesson.py"  # the lesson module: generated, never imported by this package


class NotACheckout(ShownAsMessage, RuntimeError):
    """The package was installed away from the cookbook's files (a normal `pip install`, not `pip install -e .`)."""


def checkout_file(path):
    """`path`, one of the files above, or NotACheckout when the package is not inside a checkout of the cookbook."""
    if not (ROOT / "pyproject.toml").is_file() or not NOTEBOOKS.is_dir():
        raise NotACheckout(
            f"memory_cookbook is installed at {Path(__file__).parent}, away from the cookbook's files ({path.name} and"
            " the notebooks are not installed with it). Install the cookbook from its repository folder with"
            " `pip install -r requirements.txt` (which installs it in place, `-e .`), and run it from there.")
    return path


def load_lesson(path=LESSON_FILE):
    """The lesson module, `jev_memory_lesson`, loaded from `path` by its file name, for a process that did not start in
    notebooks/ (an app server, a tool): never an installed package of the same name that happens to come first on
    sys.path. Only the process that calls this gets the lesson; importing this package loads nothing."""
    import importlib.util
    import sys

    path = Path(checkout_file(Path(path))).resolve()
    loaded = sys.modules.get("jev_memory_lesson")
    if loaded is not None:
        if Path(getattr(loaded, "__file__", "") or "").resolve() != path:
            raise ImportError(f"another jev_memory_lesson is already imported in this process ({loaded.__file__}), not"
                              f" the cookbook's lesson {path}")
        return loaded
    spec = importlib.util.spec_from_file_location("jev_memory_lesson", path)
    lesson = importlib.util.module_from_spec(spec)
    sys.modules["jev_memory_lesson"] = lesson  # as an import would: a later import of jev_memory_lesson gets this one
    try:
        spec.loader.exec_module(lesson)
    except BaseException:
        del sys.modules["jev_memory_lesson"]
        raise
    return lesson
