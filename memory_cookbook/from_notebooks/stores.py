"""Generated from the `#| export stores` cells of notebooks/07_memories_that_last.ipynb and 08_cost_and_threshold.ipynb
by scripts/export_module.py. Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this
file."""

import json
import math
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime
from memory_cookbook.checked_files import marked_store_file, opened_store_file, opening_memory_store
from memory_cookbook.contract import CustomerAlreadyKept, LedgerEntry, MemoryItem, MemoryStore, SavedMemory
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.memory_checks import checked_entry, checked_save, non_empty_text
from memory_cookbook.records import MemoryRecord, checked_restore
from pathlib import Path
from typing import Any

__all__ = ["BudgetedStore", "DESK_COLUMNS", "INSERT_MEMORY", "IN_FORCE", "MEMORY_COLUMNS", "STORE_SCHEMA",
           "SqliteStore", "read_time", "stamp"]


# %% ../../notebooks/07_memories_that_last.ipynb 444eaa5d
STORE_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id TEXT NOT NULL,
    ticket_id TEXT,
    request TEXT NOT NULL,
    jev_answered TEXT NOT NULL,
    p_remember REAL NOT NULL,
    model TEXT NOT NULL,
    saved_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_by_customer ON memories (customer_id, id);
CREATE TABLE IF NOT EXISTS ledger (id INTEGER PRIMARY KEY AUTOINCREMENT, logged_at TEXT NOT NULL, entry TEXT NOT NULL);
"""
# What a desk keeps beside a memory (notebook 10), added to a file made without it as to a new one. Times are
# ISO 8601 in UTC to the microsecond, so that comparing the texts compares the times.
DESK_COLUMNS = {"remember_at": "REAL", "answer_probabilities": "TEXT NOT NULL DEFAULT '{}'", "expires_at": "TEXT",
                "invalidated_at": "TEXT", "invalidated_by": "TEXT", "invalidation_reason": "TEXT"}
MEMORY_COLUMNS = ["ticket_id", "request", "jev_answered", "answer_probabilities", "p_remember", "remember_at",
                  "model", "saved_at", "expires_at", "invalidated_at", "invalidated_by", "invalidation_reason"]
INSERT_MEMORY = (f"INSERT INTO memories (customer_id, {', '.join(MEMORY_COLUMNS)})"
                 f" VALUES ({', '.join('?' * (1 + len(MEMORY_COLUMNS)))})")
IN_FORCE = "(invalidated_at IS NULL OR invalidated_at > ?) AND (expires_at IS NULL OR expires_at > ?)"


def stamp(moment: datetime | None) -> str | None:
    """A time as the file keeps it, '2026-09-28T09:14:03.000000+00:00', or None."""
    return None if moment is None else moment.astimezone(UTC).isoformat(timespec="microseconds")


def read_time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


# %% ../../notebooks/07_memories_that_last.ipynb c65d593f
class SqliteStore:
    """Memories and the ledger in one SQLite file: they outlive the kernel, and processes can share them."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with opening_memory_store(self.path), closing(sqlite3.connect(self.path, timeout=30)) as db:
            db.executescript(STORE_SCHEMA)
            there = {column for _, column, *_ in db.execute("PRAGMA table_info(memories)")}
            for column, kind in DESK_COLUMNS.items():
                if column not in there:  # a file made without it: the column is added, no row is rewritten
                    db.execute(f"ALTER TABLE memories ADD COLUMN {column} {kind}")
            self.file_mark = marked_store_file(db)

    def connect(self) -> sqlite3.Connection:
        """A connection that overwrites deleted rows with zeros (secure_delete): what is forgotten leaves the file.
        Deleted or made anew since __init__ opened it, the file is an error, not another store's memories."""
        db = opened_store_file(self.path, self.file_mark)
        db.execute("PRAGMA secure_delete = ON")
        return db

    def execute(self, sql: str, *params: object) -> Any:
        """One statement in its own transaction, committed or rolled back: its rows, or how many rows it changed."""
        with closing(self.connect()) as db, db:
            cursor = db.execute(sql, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer: str) -> list[MemoryItem]:
        """The customer's memories in force: neither invalidated nor expired."""
        now = stamp(datetime.now(UTC))
        rows = self.execute(f"SELECT request, jev_answered FROM memories WHERE customer_id = ? AND {IN_FORCE}"
                            " ORDER BY id", customer, now, now)
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str, remember_at: float | None = None,
             answer_probabilities: Mapping[str, float] | None = None, expires_at: datetime | None = None) -> None:
        now = datetime.now(UTC)  # every value checked, or a ValueError naming what is wrong
        kept = checked_save(customer, memory, p_remember, model, remember_at, answer_probabilities, expires_at, now)
        self.execute(INSERT_MEMORY, customer, ticket_id(memory), kept.request, kept.jev_answered,
                     kept.answer_probabilities, kept.p_remember, kept.remember_at, kept.model, stamp(now),
                     stamp(kept.expires_at), None, None, None)

    def forget_ticket(self, customer: str, ticket: str) -> int:
        return self.execute("DELETE FROM memories WHERE customer_id = ? AND ticket_id = ?", customer, ticket)

    def forget_customer(self, customer: str) -> int:
        """Delete the customer's memories and ledger entries in one transaction: how many memories."""
        with closing(self.connect()) as db, db:
            db.execute("DELETE FROM ledger WHERE json_extract(entry, '$.customer') = ?", (customer,))
            return db.execute("DELETE FROM memories WHERE customer_id = ?", (customer,)).rowcount

    def log(self, entry: LedgerEntry) -> None:
        self.execute("INSERT INTO ledger (logged_at, entry) VALUES (?, ?)", stamp(datetime.now(UTC)),
                     checked_entry(entry))

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        rows = self.execute("SELECT entry FROM ledger WHERE ? IS NULL OR json_extract(entry, '$.customer') = ?"
                            " ORDER BY id", customer, customer)
        return [json.loads(entry) for (entry,) in rows]

    def saved(self) -> list[SavedMemory]:
        """(customer, ticket, P(remember), model) for every memory, in the order saved."""
        rows = self.execute("SELECT customer_id, ticket_id, p_remember, model FROM memories ORDER BY id")
        return [SavedMemory(*row) for row in rows]

    def memory_records(self, customer: str) -> list[MemoryRecord]:
        """Every memory of the customer with what is kept beside it, in force or not."""
        rows = self.execute(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE customer_id = ? ORDER BY id",
                            customer)
        return [MemoryRecord(customer, ticket, {"request": json.loads(request), "jev_answered": json.loads(answered)},
                             json.loads(probabilities), p_remember, remember_at, model, datetime.fromisoformat(saved),
                             read_time(expires), read_time(invalidated), by, why)
                for ticket, request, answered, probabilities, p_remember, remember_at, model, saved, expires,
                invalidated, by, why in rows]

    def invalidate(self, customer: str, ticket: str, reason: str, by: str) -> int:
        """Mark the memory no longer true, keeping it: recall leaves it out from now on."""
        return self.execute("UPDATE memories SET invalidated_at = ?, invalidated_by = ?, invalidation_reason = ?"
                            " WHERE customer_id = ? AND ticket_id = ? AND invalidated_at IS NULL",
                            stamp(datetime.now(UTC)), non_empty_text("by", by), non_empty_text("reason", reason),
                            customer, ticket)

    def restore(self, customer: str, records: Sequence[MemoryRecord], entries: Sequence[LedgerEntry]) -> None:
        """Write a customer's records and entries in one transaction, into a file that keeps none of theirs."""
        texts = checked_restore(customer, records, entries)
        with closing(self.connect()) as db, db:
            db.execute("BEGIN IMMEDIATE")  # no other process writes between the count and the rows
            kept = db.execute("SELECT (SELECT count(*) FROM memories WHERE customer_id = ?), (SELECT count(*) FROM"
                              " ledger WHERE json_extract(entry, '$.customer') = ?)", (customer, customer)).fetchone()
            if any(kept):
                raise CustomerAlreadyKept(customer, *kept)
            db.executemany(INSERT_MEMORY, [
                (customer, r.ticket, json.dumps(r.memory["request"]), json.dumps(r.memory["jev_answered"]),
                 json.dumps(r.answer_probabilities), r.p_remember, r.remember_at, r.model, stamp(r.saved_at),
                 stamp(r.expires_at), stamp(r.invalidated_at), r.invalidated_by, r.invalidation_reason)
                for r in records])
            db.executemany("INSERT INTO ledger (logged_at, entry) VALUES (?, ?)",
                           [(stamp(datetime.now(UTC)), text) for text in texts])


# %% ../../notebooks/08_cost_and_threshold.ipynb 15d7f399
class BudgetedStore:
    """A store that recalls only the newest memories that fit in max_memory_tokens (estimated from their length);
    the rest it hands to the store it wraps."""

    def __init__(self, store: MemoryStore, max_memory_tokens: int, tokens_per_char: float) -> None:
        self.store, self.max_memory_tokens, self.tokens_per_char = store, max_memory_tokens, tokens_per_char

    def estimated_tokens(self, memory: MemoryItem) -> int:
        return math.ceil(len(json.dumps(memory)) * self.tokens_per_char)

    def recall(self, customer: str) -> list[MemoryItem]:
        kept: list[MemoryItem] = []
        spent = 0
        for memory in reversed(self.store.recall(customer)):
            spent += self.estimated_tokens(memory)
            if spent > self.max_memory_tokens:
                break
            kept.insert(0, memory)
        return kept

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str, remember_at: float | None = None,
             answer_probabilities: Mapping[str, float] | None = None, expires_at: datetime | None = None) -> None:
        self.store.save(customer, memory, p_remember, model, remember_at, answer_probabilities, expires_at)

    def log(self, entry: LedgerEntry) -> None:
        self.store.log(entry)

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        return self.store.ledger(customer)

    def saved(self) -> list[SavedMemory]:
        return self.store.saved()

    def memory_records(self, customer: str) -> list[MemoryRecord]:
        return self.store.memory_records(customer)

    def invalidate(self, customer: str, ticket: str, reason: str, by: str) -> int:
        return self.store.invalidate(customer, ticket, reason, by)

    def restore(self, customer: str, records: Sequence[MemoryRecord], entries: Sequence[LedgerEntry]) -> None:
        self.store.restore(customer, records, entries)

    def forget_ticket(self, customer: str, ticket: str) -> int:
        return self.store.forget_ticket(customer, ticket)

    def forget_customer(self, customer: str) -> int:
        return self.store.forget_customer(customer)
