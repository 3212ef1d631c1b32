"""Moving a whole store (memory_cookbook/desk/move.py, scripts/move_store.py): every customer recalls the same memories
in the same order afterwards, with the same history and ledger; a move run again, or stopped midway and run again,
writes nothing twice; a customer the target keeps otherwise stops it; the source's file is only read. SQLite to
PostgreSQL on the session's server (slow); the same logic between the quick stores in the quick loop."""

import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest
from conftest import run_earlier_tickets
from cookbook_tools.paths import ROOT

from memory_cookbook.desk.move import StoresDiffer, customers_of, move_store
from memory_cookbook.dict_store import DictStore
from memory_cookbook.from_notebooks.stores import SqliteStore
from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE
from memory_cookbook.records import MemoryRecord


def a_desks_store(lesson, store):
    """The published run's earlier tickets and C-1042's later messages through the wrapper into `store`, T-105 then
    invalidated; and a customer of its own restored, whose one memory has expired: three customers, history in each
    state."""
    lesson.MEMORY.store = store
    run_earlier_tickets(lesson)
    for message in lesson.LATER:
        lesson.ask_with_memory(lesson.later_state("C-1042", message["subject"]), lesson.ROUTE)
    store.invalidate("C-1042", "T-105", reason="the Enterprise desk answer was a guess", by="desk")
    store.restore("C-3300", [MemoryRecord(
        "C-3300", "T-301", {"request": {"customer": {"id": "C-3300"}, "ticket": {"id": "T-301"}},
                            "jev_answered": {"q": "a"}}, {"q": 0.8}, 0.7, 0.5, "jev-1.13.0",
        datetime(2026, 1, 1, tzinfo=UTC), expires_at=datetime(2026, 2, 1, tzinfo=UTC))],
        [{"customer": "C-3300", "ticket": "T-301"}])
    return store


def side(store, customers):
    return {customer: (store.recall(customer), store.memory_records(customer), store.ledger(customer))
            for customer in customers}


class StoppedAfter:
    """A target that stops the move (as Ctrl-C would) at its n-th restore."""

    def __init__(self, store, n):
        self.store, self.n = store, n

    def __getattr__(self, name):
        return getattr(self.store, name)

    def restore(self, customer, records, entries):
        self.n -= 1
        if self.n == 0:
            raise KeyboardInterrupt
        self.store.restore(customer, records, entries)


def test_a_move_stopped_midway_and_run_again_writes_each_customer_once(lesson, tmp_path):
    source = a_desks_store(lesson, SqliteStore(tmp_path / "memories.sqlite"))
    customers = customers_of(source)
    target = DictStore()
    with pytest.raises(KeyboardInterrupt):
        move_store(source, StoppedAfter(target, 2))
    assert customers_of(target) == customers[:1]  # one customer wholly moved, the next not at all
    report = move_store(source, target)
    assert (report.moved, report.already_there) == (customers[1:], customers[:1])
    assert side(target, customers) == side(source, customers)
    again = move_store(source, target)
    assert (again.moved, again.memories, again.ledger_entries) == ([], report.memories, report.ledger_entries)


def test_a_customer_the_target_keeps_otherwise_stops_the_move_and_is_not_written(lesson):
    source = a_desks_store(lesson, DictStore())
    target = DictStore()
    target.log({"customer": "C-2210", "ticket": "T-102"})  # another history of the same customer
    with pytest.raises(StoresDiffer, match="already keeps 0 memories and 1 ledger entries of C-2210"):
        move_store(source, target)
    assert target.memory_records("C-2210") == [] and len(target.ledger("C-2210")) == 1


@pytest.mark.slow
def test_a_sqlite_store_moved_to_postgresql_recalls_the_same_and_its_file_is_unchanged(lesson, tmp_path,
                                                                                        postgres_store):
    path = tmp_path / "memories.sqlite"
    source = a_desks_store(lesson, SqliteStore(path))
    customers, before = customers_of(source), path.read_bytes()
    report = move_store(SqliteStore(path), postgres_store)
    assert report.moved == customers == ["C-1042", "C-2210", "C-3300"]
    assert report.memories == (4, 4) and report.ledger_entries == (9, 9) and report.digests[0] == report.digests[1]
    assert side(postgres_store, customers) == side(source, customers)
    assert [len(postgres_store.recall(customer)) for customer in customers] == [1, 1, 0]  # in force only
    again = move_store(SqliteStore(path), postgres_store)
    assert (again.moved, again.already_there, again.memories) == ([], customers, (4, 4))
    assert len(postgres_store.saved()) == 4 and len(postgres_store.ledger()) == 9  # nothing twice
    assert path.read_bytes() == before


@pytest.mark.slow
def test_the_script_moves_a_file_and_run_again_moves_nothing(lesson, tmp_path, postgres_store):
    path = tmp_path / "memories.sqlite"
    a_desks_store(lesson, SqliteStore(path))

    def moved():
        return subprocess.run([sys.executable, "scripts/move_store.py", str(path), "--schema", postgres_store.schema],
                              cwd=ROOT, env={**os.environ, DATABASE_URL_VARIABLE: postgres_store.url},
                              capture_output=True, text=True, timeout=120)

    first, second = moved(), moved()
    assert (first.returncode, first.stderr, second.returncode, second.stderr) == (0, "", 0, "")
    assert "3 customers moved, 0 already there; memories 4 → 4, ledger entries 9 → 9" in first.stdout
    assert "0 customers moved, 3 already there" in second.stdout and "on both sides: the same" in second.stdout
