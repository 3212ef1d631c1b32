"""The SQLite store, the ledger and the memory budget, against Jev's recorded answers."""

import subprocess
import sys

import nbformat
import pytest
import replay
from conftest import ROOT, run_earlier_tickets
from run_notebooks import execute


@pytest.fixture
def sqlite_memory(memory, monkeypatch, tmp_path):
    """basic_memory, offline, with a SqliteStore in a temporary file."""
    monkeypatch.setattr(memory, "STORE", memory.SqliteStore(tmp_path / "memories.sqlite"))
    return memory


def test_the_sqlite_store_sends_byte_for_byte_the_requests_of_the_dict_store(memory, tmp_path, monkeypatch):
    run_earlier_tickets(memory)
    with_dict, memory.CALLS[:] = list(memory.CALLS), []
    monkeypatch.setattr(memory, "STORE", memory.SqliteStore(tmp_path / "memories.sqlite"))
    run_earlier_tickets(memory)
    assert memory.CALLS == with_dict


def test_recall_returns_what_was_saved_in_order(sqlite_memory):
    run_earlier_tickets(sqlite_memory)
    assert sqlite_memory.memory_ids("C-1042") == ["T-101", "T-105"]
    assert sqlite_memory.memory_ids("C-2210") == ["T-102"]
    assert [(c, t, p) for c, t, p, _ in sqlite_memory.STORE.saved()] == [
        ("C-1042", "T-101", 0.91), ("C-2210", "T-102", 0.91), ("C-1042", "T-105", 0.92)]
    assert {model for *_, model in sqlite_memory.STORE.saved()} == {"jev-1.13.0"}


def test_one_customers_memories_never_reach_another_customers_state(sqlite_memory):
    run_earlier_tickets(sqlite_memory)
    for customer in sqlite_memory.CUSTOMERS:
        sent = sqlite_memory.with_memories(sqlite_memory.later_state(customer, "Slow dashboards"))
        assert {m["request"]["customer"]["id"] for m in sent[sqlite_memory.MEMORY_KEY]} == {customer}


def test_forget_one_memory_then_a_customer(sqlite_memory):
    run_earlier_tickets(sqlite_memory)
    slow = sqlite_memory.later_state("C-1042", "Slow dashboards")
    assert sqlite_memory.STORE.forget_ticket("T-105") == 1
    assert sqlite_memory.routed(sqlite_memory.ask_with_memory(slow, sqlite_memory.ROUTE)) == "selfhosted_windows 0.99"
    assert sqlite_memory.STORE.forget_customer("C-1042") == 1
    assert sqlite_memory.routed(sqlite_memory.ask_with_memory(slow, sqlite_memory.ROUTE)) == "cloud_ops 0.80"
    assert sqlite_memory.memory_ids("C-2210") == ["T-102"]
    assert sqlite_memory.STORE.forget_ticket("T-999") == 0


def test_the_dict_store_forgets_the_same_way(memory):
    run_earlier_tickets(memory)
    memory.STORE.forget_ticket("T-105")
    assert memory.memory_ids("C-1042") == ["T-101"]
    memory.STORE.forget_customer("C-1042")
    assert (memory.memory_ids("C-1042"), memory.memory_ids("C-2210")) == ([], ["T-102"])


WRITER = """
import sys, basic_memory as b
store = b.SqliteStore(sys.argv[1])
memory = {"request": {"customer": {"id": sys.argv[2]}, "ticket": {"id": "T-0"}}, "jev_answered": {}}
for number in range(int(sys.argv[3])):
    memory["request"]["ticket"]["id"] = f"T-{number}"
    store.save(sys.argv[2], memory, p_remember=0.9, model="writer-test")
"""


def test_two_processes_writing_at_once_lose_nothing(memory, tmp_path):
    path, count = tmp_path / "shared.sqlite", 150
    memory.SqliteStore(path)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), customer, str(count)], cwd=ROOT / "notebooks")
               for customer in ("C-A", "C-B")]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    store = memory.SqliteStore(path)
    for customer in ("C-A", "C-B"):
        assert [m["request"]["ticket"]["id"] for m in store.recall(customer)] == [f"T-{n}" for n in range(count)]


def test_the_ledger_records_what_each_call_sent_and_got(sqlite_memory):
    sqlite_memory.ask_with_memory(sqlite_memory.ticket_state(sqlite_memory.EARLIER[0]), sqlite_memory.ROUTE)
    sqlite_memory.ask_with_memory(sqlite_memory.later_state("C-1042", "Slow dashboards"), sqlite_memory.ROUTE)
    assert sqlite_memory.LEDGER == [
        {"customer": "C-1042", "ticket": "T-101", "questions": ["team"], "memories_sent": [],
         "answer": {"team": {"choice": "selfhosted_windows", "probability": 0.57}}, "p_remember": 0.91, "saved": True,
         "input_tokens": 620, "source": "replay"},
        {"customer": "C-1042", "ticket": "T-201", "questions": ["team"], "memories_sent": ["T-101"],
         "answer": {"team": {"choice": "selfhosted_windows", "probability": 0.99}}, "p_remember": 0.08,
         "saved": False, "input_tokens": 797, "source": "replay"},
    ]
    assert sqlite_memory.STORE.ledger() == sqlite_memory.LEDGER


def test_the_ledger_says_live_for_a_live_call(memory, monkeypatch):
    live_answer = memory.ask(memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)

    def pretend_live(state, questions):  # stands in for a live call: no new answer is invented, one is reused
        replay.LIVE_CALLS.append(("live",))
        return live_answer

    monkeypatch.setattr(memory, "ask", pretend_live)
    monkeypatch.setattr(memory, "remember_probability", lambda _memory: 0.1)
    memory.ask_with_memory(memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)
    assert memory.LEDGER[-1]["source"] == "live"


@pytest.mark.parametrize("budget, kept", [(10_000, ["T-101", "T-105"]), (300, ["T-105"]), (100, [])])
def test_the_budget_keeps_the_newest_memories_that_fit(memory, monkeypatch, budget, kept):
    run_earlier_tickets(memory)
    budgeted = memory.BudgetedStore(memory.STORE, max_memory_tokens=budget, tokens_per_char=0.377)
    monkeypatch.setattr(memory, "STORE", budgeted)
    assert memory.memory_ids("C-1042") == kept
    sent = memory.with_memories(memory.later_state("C-1042", "Slow dashboards"))
    assert sum(map(budgeted.estimated_tokens, sent.get(memory.MEMORY_KEY, []))) <= budget
    budgeted.forget_ticket("T-101")  # the rest of the store's methods pass through
    assert "T-101" not in memory.memory_ids("C-1042")


def test_notebook_07s_fresh_process_fails_without_the_database_file():
    notebook = nbformat.read(ROOT / "notebooks" / "07_memories_that_last.ipynb", as_version=4)
    fresh = next(i for i, cell in enumerate(notebook.cells) if cell.source.startswith("FRESH_PROCESS ="))
    committed = notebook.cells[fresh].outputs[0]["text"]
    notebook.cells.insert(fresh, nbformat.v4.new_code_cell("DB_PATH.unlink()"))
    execute(notebook, allow_errors=True)
    outputs = notebook.cells[fresh + 1].outputs
    assert "6/6 later messages reached the expected team" in committed
    assert "6/6" not in "".join(output.get("text", "") for output in outputs)
    assert [output.ename for output in outputs if output.output_type == "error"] == ["RuntimeError"]
    (ROOT / "notebooks" / "memories.sqlite").unlink(missing_ok=True)
