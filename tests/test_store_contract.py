"""The store contract (memory_cookbook.contract.MemoryStore): one set of behaviours, run on every store: the dict,
SQLite, the budgeted one and PostgreSQL (on the suite's one embedded server). A store passes all of it or is not a
store. mypy checks each factory below against the Protocol (tests/test_types.py runs it over this file too), so a
store whose methods drift from the contract fails there as well as here."""

import inspect
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_earlier_tickets
from memory_cookbook.contract import LedgerEntry, MemoryItem, MemoryStore, SavedMemory
from memory_cookbook.dict_store import DictStore
from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.from_notebooks.stores import BudgetedStore, SqliteStore
from memory_cookbook.jev_request import ticket_id


def dict_store(folder: Path) -> MemoryStore:
    return DictStore()


def sqlite_store(folder: Path) -> MemoryStore:
    return SqliteStore(folder / "memories.sqlite")


def budgeted_store(folder: Path) -> MemoryStore:
    return BudgetedStore(DictStore(), max_memory_tokens=10_000, tokens_per_char=1)


def postgres_contract(store: PostgresStore) -> MemoryStore:
    """The suite's PostgresStore (conftest's postgres_store fixture), as the contract: mypy checks the assignment."""
    return store


FACTORIES: dict[str, Callable[[Path], MemoryStore] | None] = {
    "dict": dict_store, "sqlite": sqlite_store, "budgeted": budgeted_store,
    "postgres": None,  # the session's server (conftest's postgres_store fixture): slow, it takes seconds to start
}


@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.slow] if name == "postgres" else [])
                        for name in FACTORIES])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> MemoryStore:
    """Each store in turn, new and empty."""
    make = FACTORIES[request.param]
    return make(tmp_path) if make else postgres_contract(request.getfixturevalue("postgres_store"))


def note(customer: str, ticket: str) -> MemoryItem:
    return {"request": {"customer": {"id": customer}, "ticket": {"id": ticket}}, "jev_answered": {"q": ticket}}


def ids(store: MemoryStore, customer: str) -> list[str | None]:
    return [ticket_id(memory) for memory in store.recall(customer)]


def save_notes(store: MemoryStore, *pairs: tuple[str, str]) -> None:
    for number, (customer, ticket) in enumerate(pairs):
        store.save(customer, note(customer, ticket), p_remember=0.5 + number / 100, model=f"m{number}")


def test_every_method_takes_the_contracts_arguments(store):
    assert isinstance(store, MemoryStore)
    for name, contract in inspect.getmembers(MemoryStore, inspect.isfunction):
        if not name.startswith("_"):
            kept = inspect.signature(getattr(type(store), name)).parameters.values()
            assert [(p.name, p.kind, p.default) for p in kept] == [
                (p.name, p.kind, p.default) for p in inspect.signature(contract).parameters.values()], name


def test_recall_gives_what_was_saved_in_order_per_customer(store):
    save_notes(store, ("C-A", "T-1"), ("C-B", "T-2"), ("C-A", "T-3"))
    assert (ids(store, "C-A"), ids(store, "C-B"), ids(store, "C-none")) == (["T-1", "T-3"], ["T-2"], [])
    assert store.recall("C-A")[0] == note("C-A", "T-1")


def test_a_recalled_memory_keeps_its_keys_in_the_order_saved(store):
    memory: MemoryItem = {"request": {"ticket": {"id": "T-1"}, "customer": {"id": "C-A"}, "b": 1, "a": 2},
                          "jev_answered": {"z": 1, "a": 2}}
    store.save("C-A", memory, p_remember=0.9, model="m")
    assert json.dumps(store.recall("C-A")) == json.dumps([memory])  # the cache keys hash this exact text


def test_recall_hands_out_copies_the_caller_may_change(store):
    save_notes(store, ("C-A", "T-1"))
    recalled = store.recall("C-A")
    recalled[0]["request"]["ticket"]["id"] = "T-changed"
    recalled.append(note("C-A", "T-2"))
    assert ids(store, "C-A") == ["T-1"]


def test_save_keeps_whose_which_ticket_p_remember_and_model_in_order(store):
    save_notes(store, ("C-A", "T-1"), ("C-B", "T-2"))
    assert store.saved() == [SavedMemory("C-A", "T-1", 0.5, "m0"), SavedMemory("C-B", "T-2", 0.51, "m1")]


def test_the_ledger_gives_back_each_entry_as_logged_in_order_and_per_customer(store):
    entries: list[LedgerEntry] = [
        {"customer": "C-A", "ticket": "T-1", "memories_sent": [], "p_remember": 0.9, "saved": True},
        {"customer": "C-B", "ticket": "T-2", "memories_sent": ["T-0"], "p_remember": 0.1, "saved": False},
        {"customer": "C-A", "ticket": "T-3"}]
    for entry in entries:
        store.log(entry)
    assert store.ledger() == entries
    assert (store.ledger("C-A"), store.ledger("C-none")) == ([entries[0], entries[2]], [])


def test_forget_ticket_deletes_that_customers_memory_only_and_counts_it(store):
    save_notes(store, ("C-A", "T-1"), ("C-A", "T-2"), ("C-B", "T-1"))
    assert store.forget_ticket("C-A", "T-1") == 1
    assert (ids(store, "C-A"), ids(store, "C-B")) == (["T-2"], ["T-1"])
    assert store.forget_ticket("C-A", "T-1") == 0


def test_forget_customer_deletes_their_memories_and_ledger_entries_only_and_counts(store):
    save_notes(store, ("C-A", "T-1"), ("C-B", "T-2"), ("C-A", "T-3"))
    for customer, ticket in (("C-A", "T-1"), ("C-B", "T-2")):
        store.log({"customer": customer, "ticket": ticket})
    assert store.forget_customer("C-A") == 2
    assert (ids(store, "C-A"), ids(store, "C-B")) == ([], ["T-2"])
    assert [entry["customer"] for entry in store.ledger()] == ["C-B"]
    assert [row.customer for row in store.saved()] == ["C-B"]
    assert store.forget_customer("C-A") == 0


def test_the_wrapper_sends_the_same_requests_whatever_the_store(store, lesson, monkeypatch):
    run_earlier_tickets(lesson)
    with_the_dict_store = list(lesson.CALLS)
    lesson.CALLS.clear()
    monkeypatch.setattr(lesson.MEMORY, "store", store)
    run_earlier_tickets(lesson)
    assert lesson.CALLS == with_the_dict_store and len(with_the_dict_store) == 10
    assert [entry["ticket"] for entry in store.ledger()] == ["T-101", "T-102", "T-103", "T-104", "T-105"]


def nested(levels):
    """A dict nested `levels` deep, made without recursion."""
    value: dict[str, object] = {}
    for _ in range(levels):
        value = {"a": value}
    return value


BAD_MEMORIES = {
    "a request that is a string": ({"request": "T-1", "jev_answered": {}}, r"memory\['request'\] must be a dict"),
    "a request that is None": ({"request": None, "jev_answered": {}}, r"memory\['request'\] must be a dict"),
    "a request that is a list": ({"request": [1], "jev_answered": {}}, r"memory\['request'\] must be a dict"),
    "an answer that is None": ({"request": {}, "jev_answered": None}, r"memory\['jev_answered'\] must be a dict"),
    "an answer that is a string": ({"request": {}, "jev_answered": "team"},
                                   r"memory\['jev_answered'\] must be a dict"),
    "a request 10,000 deep": ({"request": nested(10_000), "jev_answered": {}},
                              r"memory\['request'\] is nested too deeply"),
    "a memory that is a string": ("T-1", "a memory must be a dict"),
    "a memory that is a list": ([{"request": {}, "jev_answered": {}}], "a memory must be a dict"),
    "a memory with no answer": ({"request": {}}, "the memory has no 'jev_answered'"),
}


@pytest.mark.parametrize("bad, says", BAD_MEMORIES.values(), ids=BAD_MEMORIES)
def test_a_memory_that_is_not_one_is_refused_naming_what_is_wrong_and_nothing_is_saved(store, bad, says):
    with pytest.raises(ValueError, match=says):
        store.save("C-A", bad, p_remember=0.9, model="m")
    assert store.recall("C-A") == []


@pytest.mark.parametrize("entry, says", [("C-A", "a ledger entry must be a dict; got str"),
                                         (["C-A"], "a ledger entry must be a dict; got list"),
                                         ({"ticket": "T-1"}, "a ledger entry must name its customer"),
                                         ({"customer": "C-A", "deep": nested(10_000)}, "nested too deeply")],
                         ids=["a string", "a list", "no customer", "10,000 deep"])
def test_a_ledger_entry_that_is_not_one_is_refused_naming_what_is_wrong(store, entry, says):
    with pytest.raises(ValueError, match=says):
        store.log(entry)
    assert store.ledger() == []
