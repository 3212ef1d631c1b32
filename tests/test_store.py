"""SQLite's store and the budgeted one beyond the shared contract (tests/test_store_contract.py): the ledger that
SQLite keeps, forgetting that changes the answers and leaves nothing of a customer in the database file, a failed
statement rolled back, two writing processes, and the budget, against Jev's recorded answers."""

import json
import sqlite3
import subprocess
import sys

import nbformat
import pytest
from conftest import ROOT, copy_of_the_repository, run_earlier_tickets
from cookbook_tools.execution import execute
from memory_cookbook import jev_request
from memory_cookbook.from_notebooks.stores import BudgetedStore, SqliteStore
from memory_cookbook.replay import calls as replay

NOTE = {"request": {"customer": {"id": "C-A"}, "ticket": {"id": "T-1"}}, "jev_answered": {"q": "a"}}


def ids(store, customer):
    return [jev_request.ticket_id(memory) for memory in store.recall(customer)]


@pytest.fixture
def sqlite_lesson(lesson, monkeypatch, tmp_path):
    """The lesson, offline, its MEMORY on a SqliteStore in a temporary file."""
    monkeypatch.setattr(lesson.MEMORY, "store", SqliteStore(tmp_path / "memories.sqlite"))
    return lesson


def test_sqlite_keeps_who_which_ticket_p_remember_and_model(sqlite_lesson):
    run_earlier_tickets(sqlite_lesson)
    assert [(c, t, p) for c, t, p, _ in sqlite_lesson.MEMORY.store.saved()] == [
        ("C-1042", "T-101", 0.91), ("C-2210", "T-102", 0.91), ("C-1042", "T-105", 0.92)]
    assert {model for *_, model in sqlite_lesson.MEMORY.store.saved()} == {"jev-1.13.0"}


def test_forget_one_memory_then_a_customer_changes_the_answers(sqlite_lesson):
    run_earlier_tickets(sqlite_lesson)
    slow = sqlite_lesson.later_state("C-1042", "Slow dashboards")
    assert sqlite_lesson.MEMORY.store.forget_ticket("C-1042", "T-105") == 1
    assert sqlite_lesson.routed(sqlite_lesson.ask_with_memory(slow, sqlite_lesson.ROUTE)) == "selfhosted_windows 0.99"
    assert sqlite_lesson.MEMORY.store.forget_customer("C-1042") == 1
    assert sqlite_lesson.routed(sqlite_lesson.ask_with_memory(slow, sqlite_lesson.ROUTE)) == "cloud_ops 0.80"
    assert sqlite_lesson.MEMORY.store.forget_ticket("C-1042", "T-999") == 0


def test_a_failed_forget_customer_leaves_memories_and_ledger_as_they_were(sqlite_lesson):
    run_earlier_tickets(sqlite_lesson)
    store = sqlite_lesson.MEMORY.store
    before = store.ledger()
    store.execute("ALTER TABLE memories RENAME TO kept")  # its DELETE fails, after the ledger's
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        store.forget_customer("C-1042")
    store.execute("ALTER TABLE kept RENAME TO memories")
    assert store.ledger() == before and "C-1042" in {entry["customer"] for entry in before}
    assert sqlite_lesson.memory_ids("C-1042") == ["T-101", "T-105"]


def test_a_forgotten_customer_is_nowhere_in_the_database_files(sqlite_lesson, tmp_path):
    run_earlier_tickets(sqlite_lesson)
    for customer in sqlite_lesson.CUSTOMERS:
        for message in sqlite_lesson.LATER:
            sqlite_lesson.ask_with_memory(sqlite_lesson.later_state(customer, message["subject"]), sqlite_lesson.ROUTE)
    sqlite_lesson.MEMORY.store.forget_customer("C-1042")
    on_disk = b"".join(path.read_bytes() for path in tmp_path.iterdir())  # the database and any journal beside it
    harbor = [ticket for ticket in sqlite_lesson.EARLIER if ticket["customer_id"] == "C-1042"]
    gone = ["C-1042", "Harbor Logistics", "T-101", "T-105", "T-201", "T-202", "T-203"]
    assert [text for text in gone + [t["text"][:40] for t in harbor] if text.encode() in on_disk] == []
    assert all(text.encode() in on_disk for text in ["C-2210", "Fernwood Studio", "T-102", "T-204"])


def test_a_failing_statement_is_rolled_back_and_leaves_the_file_as_it_was(sqlite_lesson):
    sqlite_lesson.MEMORY.store.save("C-A", NOTE, p_remember=0.9, model="m")
    with pytest.raises(sqlite3.IntegrityError):
        sqlite_lesson.MEMORY.store.execute("INSERT INTO memories (customer_id, request) VALUES (?, ?)", "C-A", "{}")
    assert ids(sqlite_lesson.MEMORY.store, "C-A") == ["T-1"]


WRITER = """
import sys
from memory_cookbook.from_notebooks import stores
store = stores.SqliteStore(sys.argv[1])
memory = {"request": {"customer": {"id": sys.argv[2]}, "ticket": {"id": "T-0"}}, "jev_answered": {}}
for number in range(int(sys.argv[3])):
    memory["request"]["ticket"]["id"] = f"T-{number}"
    store.save(sys.argv[2], memory, p_remember=0.9, model="writer-test")
"""


@pytest.mark.slow
def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path, count = tmp_path / "shared.sqlite", 150
    SqliteStore(path)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), customer, str(count)], cwd=ROOT / "notebooks")
               for customer in ("C-A", "C-B")]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    for customer in ("C-A", "C-B"):
        assert ids(SqliteStore(path), customer) == [f"T-{n}" for n in range(count)]


def test_the_ledger_records_what_each_call_sent_and_got(sqlite_lesson):
    sqlite_lesson.ask_with_memory(sqlite_lesson.ticket_state(sqlite_lesson.EARLIER[0]), sqlite_lesson.ROUTE)
    sqlite_lesson.ask_with_memory(sqlite_lesson.later_state("C-1042", "Slow dashboards"), sqlite_lesson.ROUTE)
    entries = sqlite_lesson.MEMORY.ledger()
    assert [{key: value for key, value in entry.items() if key != "answer"} for entry in entries] == [
        {"customer": "C-1042", "ticket": "T-101", "questions": ["team"], "memories_sent": [], "p_remember": 0.91,
         "remember_at": 0.5, "saved": True, "input_tokens": 620, "source": "replay"},
        {"customer": "C-1042", "ticket": "T-201", "questions": ["team"], "memories_sent": ["T-101"], "p_remember": 0.08,
         "remember_at": 0.5, "saved": False, "input_tokens": 797, "source": "replay"},
    ]
    assert [jev_request.answer_in_brief(entry["answer"]["team"]) for entry in entries] == [
        "selfhosted_windows 0.57", "selfhosted_windows 0.99"]
    assert entries[0]["answer"]["team"]["type"] == "choice"  # the answer whole, as typesafe_sdk gives it


@pytest.mark.parametrize("live_request", [0, 1])
def test_the_ledger_says_live_when_either_request_of_the_call_was_live(lesson, monkeypatch, live_request):
    answered = []

    def pretend_live_for_one(model, state_json, questions_json):  # a recorded answer, counted as live for one request
        answer = original(model, state_json, questions_json)
        if len(answered) == live_request:
            replay.ASKED_LIVE += 1  # as _system_one counts an answer it asked live
        answered.append(questions_json)
        return answer

    original = replay.open_cache(replay.cache_path())(replay._system_one)  # the recorded answers, as call_jev gets them
    monkeypatch.setattr(replay, "open_cache", lambda path: lambda function: pretend_live_for_one)
    monkeypatch.setattr(replay, "ASKED_LIVE", replay.ASKED_LIVE)
    lesson.ask_with_memory(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert len(answered) == 2 and lesson.MEMORY.ledger()[-1]["source"] == "live"
    assert [call.source for call in lesson.CALLS] == ["live" if n == live_request else "replay" for n in range(2)]
    lesson.ask_with_memory(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert lesson.MEMORY.ledger()[-1]["source"] == "replay"


@pytest.mark.parametrize("budget, kept", [(10_000, ["T-101", "T-105"]), (300, ["T-105"]), (100, [])])
def test_the_budget_keeps_the_newest_memories_that_fit(lesson, monkeypatch, budget, kept):
    run_earlier_tickets(lesson)
    budgeted = BudgetedStore(lesson.MEMORY.store, max_memory_tokens=budget, tokens_per_char=0.377)
    monkeypatch.setattr(lesson.MEMORY, "store", budgeted)
    assert lesson.memory_ids("C-1042") == kept
    sent = lesson.with_memories(lesson.later_state("C-1042", "Slow dashboards"))
    assert sum(map(budgeted.estimated_tokens, sent.get(lesson.MEMORY_KEY, []))) <= budget


@pytest.mark.slow
def test_notebook_07s_fresh_process_fails_without_the_database_file(tmp_path):
    folder = copy_of_the_repository(tmp_path) / "notebooks"
    notebook = nbformat.read(folder / "07_memories_that_last.ipynb", as_version=4)
    fresh = next(i for i, cell in enumerate(notebook.cells) if cell.source.startswith("FRESH_PROCESS ="))
    committed = notebook.cells[fresh].outputs[0]["text"]
    notebook.cells[fresh:] = [nbformat.v4.new_code_cell("DB_PATH.unlink()"), notebook.cells[fresh]]
    execute(notebook, allow_errors=True, folder=folder)
    outputs = notebook.cells[fresh + 1].outputs
    assert "6/6 later messages reached the expected team" in committed
    assert "6/6" not in "".join(output.get("text", "") for output in outputs)
    assert [output.ename for output in outputs if output.output_type == "error"] == ["RuntimeError"]


class ListedStore:
    """A store that only recalls the memories it was given (what BudgetedStore wraps)."""

    def __init__(self, memories):
        self.memories = memories

    def recall(self, customer):
        return list(self.memories)


def test_the_budget_keeps_a_memory_that_fits_exactly_and_drops_one_a_token_over():
    older, newer = {"request": {"ticket": {"id": "T-1"}}}, {"request": {"ticket": {"id": "T-22"}}}
    exact = len(json.dumps(newer))  # at one token per character
    assert BudgetedStore(ListedStore([older, newer]), exact, tokens_per_char=1).recall("C-1") == [newer]
    assert BudgetedStore(ListedStore([older, newer]), exact - 1, tokens_per_char=1).recall("C-1") == []
    both = exact + len(json.dumps(older))
    assert BudgetedStore(ListedStore([older, newer]), both, tokens_per_char=1).recall("C-1") == [older, newer]
