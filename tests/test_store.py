"""The stores (dict, SQLite, budgeted) keep one contract; SQLite's memories and ledger, the budget, and forgetting
that leaves nothing of a customer in the database file, against Jev's recorded answers."""

import json
import sqlite3
import subprocess
import sys

from memory_cookbook import jev_request
from memory_cookbook.from_notebooks import ledger
import nbformat
import pytest
from memory_cookbook.replay import calls as replay
from conftest import ROOT, copy_of_the_repository, run_earlier_tickets
from cookbook_tools.execution import execute
from memory_cookbook.from_notebooks.stores import BudgetedStore, SqliteStore

NOTE = {"request": {"customer": {"id": "C-A"}, "ticket": {"id": "T-1"}}, "jev_answered": {"q": "a"}}


def note(customer, ticket):
    return {"request": {"customer": {"id": customer}, "ticket": {"id": ticket}}, "jev_answered": {"q": ticket}}


STORES = {
    "dict": lambda module, folder: module.DictStore(),
    "sqlite": lambda module, folder: SqliteStore(folder / "memories.sqlite"),
    "budgeted": lambda module, folder: BudgetedStore(module.DictStore(), max_memory_tokens=10_000, tokens_per_char=1),
    "postgres": None,  # the session's server (conftest's postgres_store fixture): slow, it takes seconds to start
}


@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.slow] if name == "postgres" else []) for name in STORES])
def store(request, memory, monkeypatch, tmp_path):
    """Each store in turn, installed as the wrapper's STORE."""
    make = STORES[request.param]
    made = make(memory, tmp_path) if make else request.getfixturevalue("postgres_store")
    monkeypatch.setattr(memory, "STORE", made)
    return made


def ids(store, customer):
    return [jev_request.ticket_id(memory) for memory in store.recall(customer)]


def test_recall_gives_what_was_saved_in_order_per_customer(store):
    for customer, ticket in [("C-A", "T-1"), ("C-B", "T-2"), ("C-A", "T-3")]:
        store.save(customer, note(customer, ticket), p_remember=0.9, model="m")
    assert (ids(store, "C-A"), ids(store, "C-B"), ids(store, "C-none")) == (["T-1", "T-3"], ["T-2"], [])
    assert store.recall("C-A")[0] == note("C-A", "T-1")


def test_a_recalled_memory_keeps_its_keys_in_the_order_saved(store):
    memory = {"request": {"ticket": {"id": "T-1"}, "customer": {"id": "C-A"}, "b": 1, "a": 2}, "jev_answered": {"z": 1,
                                                                                                               "a": 2}}
    store.save("C-A", memory, p_remember=0.9, model="m")
    assert json.dumps(store.recall("C-A")) == json.dumps([memory])  # the cache keys hash this exact text


def test_recall_hands_out_a_copy_not_the_stores_own_list(store):
    store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    store.recall("C-A").append(note("C-A", "T-2"))
    assert ids(store, "C-A") == ["T-1"]


def test_forget_ticket_removes_that_memory_only(store):
    for ticket in ("T-1", "T-2"):
        store.save("C-A", note("C-A", ticket), p_remember=0.9, model="m")
    store.forget_ticket("T-1")
    assert ids(store, "C-A") == ["T-2"]


def test_forget_customer_removes_their_memories_and_ledger_entries_only(store, memory):
    run_earlier_tickets(memory)
    memory.ask_with_memory(memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)
    store.forget_customer("C-1042")
    assert (ids(store, "C-1042"), ids(store, "C-2210")) == ([], ["T-102"])
    assert {entry["customer"] for entry in ledger.LEDGER} == {"C-2210"}
    if hasattr(store, "ledger"):
        assert {entry["customer"] for entry in store.ledger()} == {"C-2210"}


def test_the_wrapper_sends_the_same_requests_whatever_the_store(store, memory):
    run_earlier_tickets(memory)
    with_this_store, memory.CALLS[:] = list(memory.CALLS), []
    memory.MEMORIES = type(memory.MEMORIES)(list)
    memory.STORE = memory.DictStore(memory.MEMORIES)  # the published store, empty
    run_earlier_tickets(memory)
    assert with_this_store == memory.CALLS


@pytest.fixture
def sqlite_memory(memory, monkeypatch, tmp_path):
    """jev_memory_lesson, offline, with a SqliteStore in a temporary file."""
    monkeypatch.setattr(memory, "STORE", SqliteStore(tmp_path / "memories.sqlite"))
    return memory


def test_sqlite_keeps_who_which_ticket_p_remember_and_model(sqlite_memory):
    run_earlier_tickets(sqlite_memory)
    assert [(c, t, p) for c, t, p, _ in sqlite_memory.STORE.saved()] == [
        ("C-1042", "T-101", 0.91), ("C-2210", "T-102", 0.91), ("C-1042", "T-105", 0.92)]
    assert {model for *_, model in sqlite_memory.STORE.saved()} == {"jev-1.13.0"}


def test_forget_one_memory_then_a_customer_changes_the_answers(sqlite_memory):
    run_earlier_tickets(sqlite_memory)
    slow = sqlite_memory.later_state("C-1042", "Slow dashboards")
    assert sqlite_memory.STORE.forget_ticket("T-105") == 1
    assert sqlite_memory.routed(sqlite_memory.ask_with_memory(slow, sqlite_memory.ROUTE)) == "selfhosted_windows 0.99"
    assert sqlite_memory.STORE.forget_customer("C-1042") == 1
    assert sqlite_memory.routed(sqlite_memory.ask_with_memory(slow, sqlite_memory.ROUTE)) == "cloud_ops 0.80"
    assert sqlite_memory.STORE.forget_ticket("T-999") == 0


def test_a_failed_forget_customer_leaves_the_ledger_as_it_was(sqlite_memory, monkeypatch, tmp_path):
    run_earlier_tickets(sqlite_memory)
    before = list(ledger.LEDGER)
    monkeypatch.setattr(sqlite_memory.STORE, "path", tmp_path)  # a folder: the transaction cannot even start
    with pytest.raises(sqlite3.OperationalError):
        sqlite_memory.STORE.forget_customer("C-1042")
    assert ledger.LEDGER == before and "C-1042" in {entry["customer"] for entry in before}


def test_a_forgotten_customer_is_nowhere_in_the_database_files(sqlite_memory, tmp_path):
    run_earlier_tickets(sqlite_memory)
    for customer in sqlite_memory.CUSTOMERS:
        for message in sqlite_memory.LATER:
            sqlite_memory.ask_with_memory(sqlite_memory.later_state(customer, message["subject"]), sqlite_memory.ROUTE)
    sqlite_memory.STORE.forget_customer("C-1042")
    on_disk = b"".join(path.read_bytes() for path in tmp_path.iterdir())  # the database and any journal beside it
    harbor = [ticket for ticket in sqlite_memory.EARLIER if ticket["customer_id"] == "C-1042"]
    gone = ["C-1042", "Harbor Logistics", "T-101", "T-105", "T-201", "T-202", "T-203"]
    assert [text for text in gone + [t["text"][:40] for t in harbor] if text.encode() in on_disk] == []
    assert all(text.encode() in on_disk for text in ["C-2210", "Fernwood Studio", "T-102", "T-204"])


def test_a_failing_statement_is_rolled_back_and_leaves_the_file_as_it_was(sqlite_memory):
    sqlite_memory.STORE.save("C-A", NOTE, p_remember=0.9, model="m")
    with pytest.raises(sqlite3.IntegrityError):
        sqlite_memory.STORE.execute("INSERT INTO memories (customer_id, request) VALUES (?, ?)", "C-A", "{}")
    assert ids(sqlite_memory.STORE, "C-A") == ["T-1"]


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


def test_the_ledger_records_what_each_call_sent_and_got(sqlite_memory):
    sqlite_memory.ask_with_memory(sqlite_memory.ticket_state(sqlite_memory.EARLIER[0]), sqlite_memory.ROUTE)
    sqlite_memory.ask_with_memory(sqlite_memory.later_state("C-1042", "Slow dashboards"), sqlite_memory.ROUTE)
    assert sqlite_memory.LEDGER == [
        {"customer": "C-1042", "ticket": "T-101", "questions": ["team"], "memories_sent": [],
         "answer": {"team": {"choice": "selfhosted_windows", "probability": 0.57}}, "p_remember": 0.91,
         "remember_at": 0.5, "saved": True, "input_tokens": 620, "source": "replay"},
        {"customer": "C-1042", "ticket": "T-201", "questions": ["team"], "memories_sent": ["T-101"],
         "answer": {"team": {"choice": "selfhosted_windows", "probability": 0.99}}, "p_remember": 0.08,
         "remember_at": 0.5, "saved": False, "input_tokens": 797, "source": "replay"},
    ]
    assert sqlite_memory.STORE.ledger() == sqlite_memory.LEDGER


@pytest.mark.parametrize("live_request", [0, 1])
def test_the_ledger_says_live_when_either_request_of_the_call_was_live(memory, monkeypatch, live_request):
    answered = []

    def pretend_live_for_one(model, state_json, questions_json):  # a recorded answer, counted as live for one request
        answer = original(model, state_json, questions_json)
        if len(answered) == live_request:
            replay.LIVE_CALLS.append((model, state_json, questions_json))
        answered.append(questions_json)
        return answer

    original = replay.open_cache(replay.cache_path())(replay._system_one)  # the recorded answers, as call_jev gets them
    monkeypatch.setattr(replay, "open_cache", lambda path: lambda function: pretend_live_for_one)
    memory.ask_with_memory(memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)
    assert len(answered) == 2 and memory.LEDGER[-1]["source"] == "live"
    memory.ask_with_memory(memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)
    assert memory.LEDGER[-1]["source"] == "replay"


@pytest.mark.parametrize("budget, kept", [(10_000, ["T-101", "T-105"]), (300, ["T-105"]), (100, [])])
def test_the_budget_keeps_the_newest_memories_that_fit(memory, monkeypatch, budget, kept):
    run_earlier_tickets(memory)
    budgeted = BudgetedStore(memory.STORE, max_memory_tokens=budget, tokens_per_char=0.377)
    monkeypatch.setattr(memory, "STORE", budgeted)
    assert memory.memory_ids("C-1042") == kept
    sent = memory.with_memories(memory.later_state("C-1042", "Slow dashboards"))
    assert sum(map(budgeted.estimated_tokens, sent.get(memory.MEMORY_KEY, []))) <= budget


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
