"""Which notebooks exist (English: the code's source; Chinese: the same code), and the tooling's own files, beside
where the runtime package says the cookbook's files are (memory_cookbook.locations)."""

from memory_cookbook.locations import CACHE_FILE, NOTEBOOKS, RECORDED_REQUESTS_FILE, ROOT, TICKETS_FILE

__all__ = ["CACHE_FILE", "CHINESE_NOTEBOOKS", "ENGLISH_NOTEBOOKS", "EXPORTED", "LESSON_FILE", "NOTEBOOKS", "PACKAGE",
           "PROJECT_FILE", "RECORDED_REQUESTS_FILE", "ROOT", "TICKETS_FILE"]

PACKAGE = ROOT / "memory_cookbook"
LESSON_FILE = NOTEBOOKS / "jev_memory_lesson.py"  # generated from the bare `#| export` cells (cookbook_tools.export)
EXPORTED = PACKAGE / "from_notebooks"  # the modules `#| export NAME` cells write
PROJECT_FILE = ROOT / "pyproject.toml"
ENGLISH_NOTEBOOKS = sorted(path for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not path.name.endswith(".zh.ipynb"))
CHINESE_NOTEBOOKS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.zh.ipynb"))
