"""Generated from the `#| export stores` cells of notebooks/07_memories_that_last.ipynb and 08_cost_and_threshold.ipynb
by scripts/export_module.py. Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this
file."""

import json
import math
import sqlite3
from contextlib import closing
from datetime import datetime, timezone
from memory_cookbook.checked_files import opening_memory_store
from memory_cookbook.contract import LedgerEntry, MemoryItem, MemoryStore, SavedMemory
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.memory_checks import checked_entry, checked_memory
from pathlib import Path
from typing import Any

__all__ = ["BudgetedStore", "INSERT_MEMORY", "STORE_SCHEMA", "SqliteStore"]


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
INSERT_MEMORY = ("INSERT INTO memories (customer_id, ticket_id, request, jev_answered, p_remember, model, saved_at)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?)")


# %% ../../notebooks/07_memories_that_last.ipynb c65d593f
class SqliteStore:
    """Memories and the ledger in one SQLite file: they outlive the kernel, and processes can share them."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with opening_memory_store(self.path), closing(self.connect()) as db:
            db.executescript(STORE_SCHEMA)

    def connect(self) -> sqlite3.Connection:
        """A connection that overwrites deleted rows with zeros (secure_delete): what is forgotten leaves the file."""
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA secure_delete = ON")
        return db

    def execute(self, sql: str, *params: object) -> Any:
        """One statement in its own transaction, committed or rolled back: its rows, or how many rows it changed."""
        with closing(self.connect()) as db, db:
            cursor = db.execute(sql, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer: str) -> list[MemoryItem]:
        rows = self.execute("SELECT request, jev_answered FROM memories WHERE customer_id = ? ORDER BY id", customer)
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str) -> None:
        request, answered = checked_memory(memory)  # JSON text, or a ValueError naming what is wrong
        self.execute(INSERT_MEMORY, customer, ticket_id(memory), request, answered, p_remember, model,
                     datetime.now(timezone.utc).isoformat())

    def forget_ticket(self, customer: str, ticket: str) -> int:
        return self.execute("DELETE FROM memories WHERE customer_id = ? AND ticket_id = ?", customer, ticket)

    def forget_customer(self, customer: str) -> int:
        """Delete the customer's memories and ledger entries in one transaction: how many memories."""
        with closing(self.connect()) as db, db:
            db.execute("DELETE FROM ledger WHERE json_extract(entry, '$.customer') = ?", (customer,))
            return db.execute("DELETE FROM memories WHERE customer_id = ?", (customer,)).rowcount

    def log(self, entry: LedgerEntry) -> None:
        self.execute("INSERT INTO ledger (logged_at, entry) VALUES (?, ?)", datetime.now(timezone.utc).isoformat(),
                     checked_entry(entry))

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        rows = self.execute("SELECT entry FROM ledger WHERE ? IS NULL OR json_extract(entry, '$.customer') = ?"
                            " ORDER BY id", customer, customer)
        return [json.loads(entry) for (entry,) in rows]

    def saved(self) -> list[SavedMemory]:
        """(customer, ticket, P(remember), model) for every memory, in the order saved."""
        rows = self.execute("SELECT customer_id, ticket_id, p_remember, model FROM memories ORDER BY id")
        return [SavedMemory(*row) for row in rows]


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

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str) -> None:
        self.store.save(customer, memory, p_remember, model)

    def log(self, entry: LedgerEntry) -> None:
        self.store.log(entry)

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        return self.store.ledger(customer)

    def saved(self) -> list[SavedMemory]:
        return self.store.saved()

    def forget_ticket(self, customer: str, ticket: str) -> int:
        return self.store.forget_ticket(customer, ticket)

    def forget_customer(self, customer: str) -> int:
        return self.store.forget_customer(customer)
