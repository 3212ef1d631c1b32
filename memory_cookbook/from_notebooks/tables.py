"""Generated from the notebooks' `#| export tables` cells by scripts/export_module.py: do not edit."""

from IPython.display import Markdown


# %% ../../notebooks/01_tickets.ipynb 849ee1cb
def markdown_table(header, rows):
    """Rows of cells as a Markdown table, for display in a notebook."""
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return Markdown("\n".join(lines))


# %% ../../notebooks/07_memories_that_last.ipynb ledger-table-code
def ledger_table(entries):
    """Ledger entries as a Markdown table."""
    def answers(entry):
        return "; ".join(" ".join(f"{value:.2f}" if isinstance(value, float) else str(value) for value in a.values())
                         for a in entry["answer"].values())
    return markdown_table(["customer", "ticket", "memories sent", "answer", "P(remember)", "REMEMBER_AT", "saved",
                           "input tokens"],
                          [(e["customer"], e["ticket"], ", ".join(e["memories_sent"]) or "-", answers(e),
                            f"{e['p_remember']:.2f}", e.get("remember_at", "-"), "yes" if e["saved"] else "no",
                            e["input_tokens"]) for e in entries])
