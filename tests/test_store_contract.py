"""The store contract (memory_cookbook.contract.MemoryStore): one set of behaviours, run on every store: the dict,
SQLite, the budgeted one and PostgreSQL (on the suite's one embedded server). A store passes all of it or is not a
store. mypy checks each factory below against the Protocol (tests/test_types.py runs it over this file too), so a
store whose methods drift from the contract fails there as well as here."""

import inspect
import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import run_earlier_tickets
from memory_cookbook.contract import CustomerAlreadyKept, LedgerEntry, MemoryItem, MemoryStore, SavedMemory
from memory_cookbook.dict_store import DictStore
from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.from_notebooks.stores import BudgetedStore, SqliteStore
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.records import MemoryRecord


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


# What a desk asks of a store (issue 35): what is kept beside a memory, the customer's records, invalidation, expiry,
# restoring an export; every behaviour on every store.

QUESTION = "Which support team should handle `ticket`?"


def answered(customer: str, ticket: str, answer: str = "Enterprise desk") -> MemoryItem:
    return {"request": {"customer": {"id": customer}, "ticket": {"id": ticket}}, "jev_answered": {QUESTION: answer}}


def test_save_keeps_the_threshold_and_the_answers_probability_beside_the_memory_not_in_it(store):
    before = datetime.now(UTC)
    store.save("C-A", answered("C-A", "T-1"), p_remember=0.92, model="jev-1.13.0", remember_at=0.5,
               answer_probabilities={QUESTION: 0.35})
    store.save("C-A", answered("C-A", "T-2"), p_remember=0.6, model="m")  # neither given: not known, none
    [first, second] = store.memory_records("C-A")
    assert (first.customer, first.ticket, first.p_remember, first.remember_at, first.answer_probabilities,
            first.model) == ("C-A", "T-1", 0.92, 0.5, {QUESTION: 0.35}, "jev-1.13.0")
    assert (second.remember_at, second.answer_probabilities) == (None, {})
    assert before <= first.saved_at <= second.saved_at <= datetime.now(UTC) and first.saved_at.tzinfo is not None
    assert json.dumps(store.recall("C-A")) == json.dumps([answered("C-A", "T-1"), answered("C-A", "T-2")])


def test_memory_records_are_the_customers_alone_in_the_order_saved(store):
    save_notes(store, ("C-A", "T-1"), ("C-B", "T-2"), ("C-A", "T-3"))
    assert [(record.customer, record.ticket, record.memory) for record in store.memory_records("C-A")] == [
        ("C-A", "T-1", note("C-A", "T-1")), ("C-A", "T-3", note("C-A", "T-3"))]
    assert store.memory_records("C-none") == []


def test_an_invalidated_memory_is_no_longer_recalled_and_stays_as_history_with_when_who_and_why(store):
    save_notes(store, ("C-A", "T-1"), ("C-A", "T-5"), ("C-B", "T-5"))
    before = datetime.now(UTC)
    assert store.invalidate("C-A", "T-5", reason="a guess, not a fact", by="desk@harbor") == 1
    assert (ids(store, "C-A"), ids(store, "C-B")) == (["T-1"], ["T-5"])  # the other customer's T-5 is untouched
    invalidated = store.memory_records("C-A")[1]
    assert (invalidated.ticket, invalidated.invalidated_by, invalidated.invalidation_reason) == (
        "T-5", "desk@harbor", "a guess, not a fact")
    assert invalidated.invalidated_at is not None and before <= invalidated.invalidated_at <= datetime.now(UTC)
    assert invalidated.status_at(datetime.now(UTC)) == "invalidated"
    assert store.invalidate("C-A", "T-5", reason="again", by="someone else") == 0  # the first invalidation stays
    assert store.memory_records("C-A")[1] == invalidated
    assert [record.invalidated_at for record in store.memory_records("C-B")] == [None]


@pytest.mark.parametrize("reason, by, says", [("", "desk", "reason must be a non-empty string"),
                                              ("a guess", "  ", "by must be a non-empty string")])
def test_an_invalidation_without_its_reason_or_who_is_refused_and_changes_nothing(store, reason, by, says):
    save_notes(store, ("C-A", "T-1"))
    with pytest.raises(ValueError, match=says):
        store.invalidate("C-A", "T-1", reason=reason, by=by)
    assert ids(store, "C-A") == ["T-1"]


def test_a_memory_past_its_expiry_is_no_longer_recalled_and_stays_as_history(store):
    now = datetime.now(UTC)
    expired = MemoryRecord("C-A", "T-1", note("C-A", "T-1"), {}, 0.9, 0.5, "m", saved_at=now - timedelta(days=2),
                           expires_at=now - timedelta(minutes=1))
    store.restore("C-A", [expired], [])
    store.save("C-A", note("C-A", "T-2"), p_remember=0.9, model="m", expires_at=now + timedelta(days=1))
    assert ids(store, "C-A") == ["T-2"]
    assert [(record.expires_at, record.status_at(datetime.now(UTC))) for record in store.memory_records("C-A")] == [
        (now - timedelta(minutes=1), "expired"), (now + timedelta(days=1), "in force")]


BAD_SAVES = {
    "a threshold above 1": ({"remember_at": 1.5}, "remember_at must be a number from 0 to 1"),
    "a probability of a question not answered": ({"answer_probabilities": {"Another question?": 0.5}},
                                                "answer_probabilities names a question the memory has no answer to"),
    "a probability above 1": ({"answer_probabilities": {QUESTION: 2}}, "must be a number from 0 to 1"),
    "probabilities in a list": ({"answer_probabilities": [0.35]}, "answer_probabilities must be a dict"),
    "an expiry without a time zone": ({"expires_at": datetime(2030, 1, 1)}, "expires_at has no time zone"),
    "an expiry already past": ({"expires_at": datetime(2020, 1, 1, tzinfo=UTC)}, "expires_at .* must be after"),
    "a P(remember) above 1": ({"p_remember": 1.2}, "p_remember must be a number from 0 to 1"),
    "an empty model": ({"model": ""}, "model must be a non-empty string"),
}


@pytest.mark.parametrize("changes, says", BAD_SAVES.values(), ids=BAD_SAVES)
def test_what_is_kept_beside_a_memory_is_refused_naming_what_is_wrong_and_nothing_is_saved(store, changes, says):
    arguments = {"p_remember": 0.9, "model": "m", **changes}
    with pytest.raises(ValueError, match=says):
        store.save("C-A", answered("C-A", "T-1"), **arguments)
    assert store.memory_records("C-A") == []


def test_a_memory_of_another_customer_is_refused_and_nothing_is_saved(store):
    with pytest.raises(ValueError, match="customer is 'C-A', but the memory is of customer 'C-B'"):
        store.save("C-A", answered("C-B", "T-1"), p_remember=0.9, model="m")
    assert (store.memory_records("C-A"), store.memory_records("C-B")) == ([], [])


def exported(customer: str = "C-A") -> tuple[list[MemoryRecord], list[LedgerEntry]]:
    """A customer's records as another store kept them: one in force, one invalidated, one expired, with times of
    their own; and two ledger entries."""
    saved = datetime(2026, 9, 28, 9, 0, 0, 123456, tzinfo=UTC)
    in_force = MemoryRecord(customer, "T-1", answered(customer, "T-1"), {QUESTION: 0.35}, 0.92, 0.5, "jev-1.13.0",
                            saved_at=saved)
    records = [
        in_force,
        replace(in_force, ticket="T-5", memory=answered(customer, "T-5"), saved_at=saved + timedelta(minutes=1),
                invalidated_at=saved + timedelta(days=3), invalidated_by="desk", invalidation_reason="a guess"),
        replace(in_force, ticket="T-7", memory=answered(customer, "T-7"), saved_at=saved + timedelta(minutes=2),
                expires_at=saved + timedelta(days=30), remember_at=None, answer_probabilities={})]
    return records, [{"customer": customer, "ticket": "T-1", "memories_sent": []},
                     {"customer": customer, "ticket": "T-9", "memories_sent": ["T-1", "T-5"]}]


def test_restore_keeps_the_records_as_they_were_and_recall_sends_those_in_force(store):
    records, entries = exported()
    store.restore("C-A", records, entries)
    assert store.memory_records("C-A") == records  # their times, expiry and invalidation as they were
    assert (ids(store, "C-A"), store.ledger("C-A")) == (["T-1"], entries)
    save_notes(store, ("C-A", "T-8"))  # a later save comes after them
    assert [record.ticket for record in store.memory_records("C-A")] == ["T-1", "T-5", "T-7", "T-8"]


@pytest.mark.parametrize("kept", ["a memory", "a ledger entry"])
def test_restore_refuses_a_customer_the_store_keeps_anything_of_and_writes_nothing(store, kept):
    if kept == "a memory":
        save_notes(store, ("C-A", "T-0"))
    else:
        store.log({"customer": "C-A", "ticket": "T-0"})
    before = store.memory_records("C-A"), store.ledger()
    records, entries = exported()
    with pytest.raises(CustomerAlreadyKept, match=f"already keeps {1 if kept == 'a memory' else 0} memor"):
        store.restore("C-A", records, entries)
    assert (store.memory_records("C-A"), store.ledger()) == before


def test_restore_refuses_another_customers_record_or_entry_and_writes_nothing(store):
    records, entries = exported()
    with pytest.raises(ValueError, match=r"records\[0\] is not a MemoryRecord of C-B"):
        store.restore("C-B", records, [])
    with pytest.raises(ValueError, match=r"entries\[1\] is a ledger entry of 'C-A', not of C-B"):
        store.restore("C-B", [], [{"customer": "C-B"}, entries[0]])
    assert (store.memory_records("C-A"), store.memory_records("C-B"), store.ledger()) == ([], [], [])


def test_forget_customer_erases_their_history_too(store):
    store.restore("C-A", *exported())
    save_notes(store, ("C-B", "T-2"))
    store.invalidate("C-B", "T-2", reason="wrong", by="desk")
    assert store.forget_customer("C-A") == 3 and store.memory_records("C-A") == [] and store.ledger("C-A") == []
    assert store.forget_ticket("C-B", "T-2") == 1 and store.memory_records("C-B") == []


def test_the_wrapper_keeps_each_memorys_answer_probability_and_threshold(store, lesson, monkeypatch):
    monkeypatch.setattr(lesson.MEMORY, "store", store)
    run_earlier_tickets(lesson)
    kept = [(record.ticket, round(record.p_remember, 2), record.remember_at, record.answer_probabilities)
            for record in store.memory_records("C-1042")]
    assert kept == [("T-101", 0.91, 0.5, {QUESTION: 0.57}), ("T-105", 0.92, 0.5, {QUESTION: 0.35})]
