"""memory_cookbook/from_notebooks/tables.py: the Markdown tables notebooks print (markdown_table, ledger_table)."""

from memory_cookbook.from_notebooks.tables import ledger_table, markdown_table


def test_markdown_table_has_a_header_a_separator_per_column_and_a_line_per_row():
    assert markdown_table(["a", "b"], [(1, "x"), (2, "y")]).data == "| a | b |\n| --- | --- |\n| 1 | x |\n| 2 | y |"


def test_ledger_table_shows_a_dash_for_no_memories_two_decimals_and_yes_or_no():
    answer = {"type": "choice", "choice": "billing", "confidence": 0.9, "probabilities": {"billing": 0.981, "x": 0.019}}
    entry = {"customer": "C-1", "ticket": "T-1", "memories_sent": [], "answer": {"team": answer}, "p_remember": 0.0712,
             "remember_at": 0.5, "saved": False, "input_tokens": 600, "source": "replay"}
    saved = entry | {"memories_sent": ["T-0", "T-9"], "remember_at": 0.05, "saved": True}
    logged_before_thresholds = {key: value for key, value in entry.items() if key != "remember_at"}
    assert ledger_table([entry, saved, logged_before_thresholds]).data.splitlines()[2:] == [
        "| C-1 | T-1 | - | billing 0.98 | 0.07 | 0.5 | no | 600 |",
        "| C-1 | T-1 | T-0, T-9 | billing 0.98 | 0.07 | 0.05 | yes | 600 |",
        "| C-1 | T-1 | - | billing 0.98 | 0.07 | - | no | 600 |"]
