"""A Try it answer, folded: what the answer cell prints is shown under "Show the answer", wherever the notebook is
run or read (JupyterLab after Run All, GitHub, the pages), so that a student predicts before opening it. Hand-written,
tested in tests/test_classroom.py."""

import contextlib
import html
import io
import os
from collections.abc import Iterator

from IPython.display import display

from memory_cookbook.locations import NOTEBOOK_NAME_VARIABLE

__all__ = ["CHINESE_SUMMARY", "FoldedAnswer", "SUMMARY", "folded_answer", "in_chinese_notebook", "summary"]

SUMMARY = "Show the answer"
CHINESE_SUMMARY = "显示答案"  # the Chinese edition's label (scripts/sync_chinese.py puts it in the committed outputs)


def in_chinese_notebook() -> bool:
    """Whether this kernel runs a notebook of the Chinese edition: JupyterLab's server names a kernel's notebook in
    JPY_SESSION_NAME, and the Chinese edition's notebooks end in .zh.ipynb."""
    return os.environ.get(NOTEBOOK_NAME_VARIABLE, "").endswith(".zh.ipynb")


def summary() -> str:
    """The label in the reader's language (so that Run All then Save in one leaves its outputs as committed)."""
    return CHINESE_SUMMARY if in_chinese_notebook() else SUMMARY


class FoldedAnswer:
    """Printed text that displays as HTML folded in <details> (as plain text where HTML cannot be shown)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_html_(self) -> str:
        return f"<details><summary>{summary()}</summary><pre>{html.escape(self.text)}</pre></details>"

    def __repr__(self) -> str:
        return self.text


@contextlib.contextmanager
def folded_answer() -> Iterator[None]:
    """Fold what the block prints, so that a student predicts before opening it."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            yield
    except BaseException:
        print(printed.getvalue(), end="")  # a failing answer cell shows everything, the error included
        raise
    display(FoldedAnswer(printed.getvalue().rstrip("\n")))
