"""Where the cookbook's files are: the runtime package sits at the top of a checkout of the cookbook, beside the
recorded answers, the ticket data and the notebooks. Hand-written; it reads nothing and changes nothing.

A normal (non-editable) `pip install .` copies only this package and the lesson into site-packages, without the files
around them: `checkout_file()` then refuses with an error that says so (tests/test_layers.py)."""

from pathlib import Path

from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["CACHE_FILE", "NOTEBOOKS", "NOTEBOOK_NAME_VARIABLE", "NotACheckout", "RECORDED_REQUESTS_FILE", "ROOT",
           "TICKETS_FILE", "checkout_file"]

NOTEBOOK_NAME_VARIABLE = "JPY_SESSION_NAME"  # where JupyterLab's server names a kernel's notebook (nbval's: our plugin)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
CACHE_FILE = ROOT / "json_cache.json"
RECORDED_REQUESTS_FILE = ROOT / "recorded_requests.json"
TICKETS_FILE = ROOT / "data" / "tickets.json"


class NotACheckout(ShownAsMessage, RuntimeError):
    """The package was installed away from the cookbook's files (a normal `pip install`, not `pip install -e .`)."""


def checkout_file(path: Path) -> Path:
    """`path`, one of the files above, or NotACheckout when the package is not inside a checkout of the cookbook."""
    if not (ROOT / "pyproject.toml").is_file() or not NOTEBOOKS.is_dir():
        raise NotACheckout(
            f"memory_cookbook is installed at {Path(__file__).parent}, away from the cookbook's files ({path.name} and"
            " the notebooks are not installed with it). Install the cookbook from its repository folder with"
            " `pip install -r requirements.txt` (which installs it in place, `-e .`), and run it from there.")
    return path

