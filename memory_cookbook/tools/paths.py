"""Where the project's files are, and which notebooks exist (English: the code's source; Chinese: the same code)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
PACKAGE = ROOT / "memory_cookbook"
CACHE_FILE = ROOT / "json_cache.json"
PROJECT_FILE = ROOT / "pyproject.toml"
# recorded_requests.REQUESTS_NAME names it beside whichever cache is in use; a test keeps both equal
RECORDED_REQUESTS_FILE = ROOT / "recorded_requests.json"
ENGLISH_NOTEBOOKS = sorted(path for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not path.name.endswith(".zh.ipynb"))
CHINESE_NOTEBOOKS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.zh.ipynb"))
