"""Generated from the notebooks' `#| export stores` cells by scripts/export_module.py: do not edit."""

import json
import math
import sqlite3
from contextlib import closing
from datetime import datetime, timezone
from memory_cookbook.checked_files import opening_memory_store
from memory_cookbook.from_notebooks.ledger import forget_entries
from memory_cookbook.jev_request import ticket_id
from pathlib import Path


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

    def __init__(self, path):
        self.path = Path(path)
        with opening_memory_store(self.path), closing(self.connect()) as db:
            db.executescript(STORE_SCHEMA)

    def connect(self):
        """A connection that overwrites deleted rows with zeros (secure_delete): what is forgotten leaves the file."""
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA secure_delete = ON")
        return db

    def execute(self, sql, *params):
        """One statement in its own transaction, committed or rolled back: its rows, or how many rows it changed."""
        with closing(self.connect()) as db, db:
            cursor = db.execute(sql, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer):
        rows = self.execute("SELECT request, jev_answered FROM memories WHERE customer_id = ? ORDER BY id", customer)
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer, memory, p_remember, model):
        self.execute(INSERT_MEMORY, customer, ticket_id(memory), json.dumps(memory["request"]),
                     json.dumps(memory["jev_answered"]), p_remember, model, datetime.now(timezone.utc).isoformat())

    def forget_ticket(self, ticket):
        return self.execute("DELETE FROM memories WHERE ticket_id = ?", ticket)

    def forget_customer(self, customer):
        """Delete the customer's memories and ledger entries in one transaction, then their entries in LEDGER."""
        with closing(self.connect()) as db, db:
            db.execute("DELETE FROM ledger WHERE json_extract(entry, '$.customer') = ?", (customer,))
            forgotten = db.execute("DELETE FROM memories WHERE customer_id = ?", (customer,)).rowcount
        forget_entries(customer)  # only once the database has forgotten them too
        return forgotten

    def log(self, entry):
        self.execute("INSERT INTO ledger (logged_at, entry) VALUES (?, ?)", datetime.now(timezone.utc).isoformat(),
                     json.dumps(entry))

    def ledger(self):
        return [json.loads(entry) for (entry,) in self.execute("SELECT entry FROM ledger ORDER BY id")]

    def saved(self):
        """(customer, ticket, P(remember), model) for every memory, in the order saved."""
        return self.execute("SELECT customer_id, ticket_id, p_remember, model FROM memories ORDER BY id")


# %% ../../notebooks/08_cost_and_threshold.ipynb 15d7f399
class BudgetedStore:
    """A store that recalls only the newest memories that fit in max_memory_tokens (estimated from their length)."""

    def __init__(self, store, max_memory_tokens, tokens_per_char):
        self.store, self.max_memory_tokens, self.tokens_per_char = store, max_memory_tokens, tokens_per_char

    def estimated_tokens(self, memory):
        return math.ceil(len(json.dumps(memory)) * self.tokens_per_char)

    def recall(self, customer):
        kept, spent = [], 0
        for memory in reversed(self.store.recall(customer)):
            spent += self.estimated_tokens(memory)
            if spent > self.max_memory_tokens:
                break
            kept.insert(0, memory)
        return kept

    def __getattr__(self, name):  # save, forget_ticket, forget_customer, log: as the wrapped store does them
        return getattr(self.store, name)
