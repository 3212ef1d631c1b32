"""Measure every figure the project promises, from a fresh clone, against its budget and the figure recorded last
time; exit 1 naming each figure over budget. A benchmark, not a test: run it before calling a change done.

    python scripts/check_budgets.py               # about 4 minutes: setup, the suite three ways, pages, kernels, store
    python scripts/check_budgets.py --record      # also write the figures as the recorded ones
    python scripts/check_budgets.py --no-network  # leave out the README's test command (its kit check needs PyPI)
    python scripts/check_budgets.py --words       # seconds: only the words read aloud, in this working tree

What each figure is and where its budget comes from: tools/cookbook_tools/budgets.py; the last table:
docs/maintaining.md.
"""

import sys

from cookbook_tools.budgets import main

if __name__ == "__main__":
    sys.exit(main())
