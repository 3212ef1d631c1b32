"""Generated from the `#| export tables` cells of notebooks/01_tickets.ipynb and 07_memories_that_last.ipynb by
scripts/export_module.py. Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this file."""

from IPython.display import Markdown
from collections.abc import Iterable
from memory_cookbook.contract import LedgerEntry
from memory_cookbook.jev_request import answer_in_brief

__all__ = ["ledger_table", "markdown_table"]


# %% ../../notebooks/01_tickets.ipynb 849ee1cb
def markdown_table(header: list[str], rows: Iterable[Iterable[object]]) -> Markdown:
    """Rows of cells as a Markdown table, for display in a notebook."""
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return Markdown("\n".join(lines))


# %% ../../notebooks/07_memories_that_last.ipynb ledger-table-code
def ledger_table(entries: list[LedgerEntry]) -> Markdown:
    """Ledger entries as a Markdown table."""
    return markdown_table(["customer", "ticket", "memories sent", "answer", "P(remember)", "REMEMBER_AT", "saved",
                           "input tokens"],
                          [(e["customer"], e.get("ticket"), ", ".join(map(str, e.get("memories_sent", []))) or "-",
                            "; ".join(map(answer_in_brief, e.get("answer", {}).values())),
                            f"{e.get('p_remember', 0):.2f}", e.get("remember_at", "-"),
                            "yes" if e.get("saved") else "no", e.get("input_tokens")) for e in entries])
