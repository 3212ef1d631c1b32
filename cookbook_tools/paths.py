"""Where the project's files are, and which notebooks exist (English: the code's source; Chinese: the same code)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
if str(NOTEBOOKS) not in sys.path:
    sys.path.append(str(NOTEBOOKS))  # the lesson's modules and replay.py, which names the requests file
from replay import REQUESTS_NAME  # noqa: E402

CACHE_FILE = ROOT / "json_cache.json"
RECORDED_REQUESTS_FILE = ROOT / REQUESTS_NAME
ENGLISH_NOTEBOOKS = sorted(path for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not path.name.endswith(".zh.ipynb"))
CHINESE_NOTEBOOKS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.zh.ipynb"))
