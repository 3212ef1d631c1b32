"""Generated from the `#| export postgres_store` cells of notebooks/09_many_app_servers.ipynb by
scripts/export_module.py. Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this file."""

import json
import psycopg
from collections.abc import Iterator
from contextlib import contextmanager
from memory_cookbook.contract import LedgerEntry, MemoryItem, SavedMemory
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.postgres.errors import (DatabaseUnavailable, MemoryTablesMissing, QueryFailed, checked_id,
                                             checked_probability,
                                             checked_text,
                                             database_errors,
                                             missing_tables)
from memory_cookbook.postgres.pool import live_connection, session_options
from psycopg import sql
from psycopg_pool import ConnectionPool
from typing import Any

__all__ = ["CUSTOMER_SETTING", "FUNCTIONS", "GRANTS", "NAME_CUSTOMER", "PARTITION", "PARTITIONS", "PostgresStore",
           "STORE_OBJECTS", "TABLES", "TABLE_RULES", "create_memory_tables", "erase_forgotten", "grant_row_rights"]


# %% ../../notebooks/09_many_app_servers.ipynb 0ce72fd9
PARTITIONS = 32  # hash partitions of each table, by customer: erasing one customer rewrites 1/32 of a table
CUSTOMER_SETTING = "memory_cookbook.customer"  # whose rows this transaction may see (row-level security)

# JSON, not JSONB, keeps the text as saved, key order included (PostgreSQL's documentation, "JSON Types"): the
# cache keys depend on that order.
TABLES = """
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.memories (
    id BIGINT GENERATED ALWAYS AS IDENTITY,
    customer_id TEXT NOT NULL,
    ticket_id TEXT,
    request JSON NOT NULL,
    jev_answered JSON NOT NULL,
    p_remember DOUBLE PRECISION NOT NULL,
    model TEXT NOT NULL,
    saved_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (customer_id, id)
) PARTITION BY HASH (customer_id);
CREATE TABLE IF NOT EXISTS {schema}.ledger (
    id BIGINT GENERATED ALWAYS AS IDENTITY,
    customer_id TEXT NOT NULL,
    logged_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    entry JSON NOT NULL,
    PRIMARY KEY (customer_id, id)
) PARTITION BY HASH (customer_id);
CREATE TABLE IF NOT EXISTS {schema}.to_erase (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    relation REGCLASS NOT NULL
);
CREATE OR REPLACE FUNCTION {schema}.note_for_erasure(partitions OID[]) RETURNS void
LANGUAGE plpgsql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN  -- runs with the owner's rights: the one way for the app role to reach to_erase
    IF EXISTS (SELECT FROM unnest(partitions) AS noted (oid) WHERE noted.oid NOT IN (
            SELECT i.inhrelid FROM pg_inherits i JOIN pg_class t ON t.oid = i.inhparent
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = {schema_name} AND t.relname IN ('memories', 'ledger'))) THEN
        RAISE EXCEPTION 'only partitions of the store''s memories and ledger can be noted for erasure: %',
            partitions::regclass[] USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO {schema}.to_erase (relation) SELECT DISTINCT unnest(partitions);
END $$;
-- Each names the customer for its statement's transaction (the policy reads it), then runs the statement: one call.
-- recall_memories is planned for its customer each time: a generic plan would lock every partition before pruning.
CREATE OR REPLACE FUNCTION {schema}.recall_memories(customer TEXT) RETURNS TABLE (request TEXT, jev_answered TEXT)
LANGUAGE sql SET plan_cache_mode = force_custom_plan AS $$
SELECT set_config({setting}, customer, true);
SELECT request::text, jev_answered::text FROM {schema}.memories WHERE customer_id = customer ORDER BY id;
$$;
CREATE OR REPLACE FUNCTION {schema}.save_memory(customer TEXT, ticket TEXT, request JSON, answered JSON,
                                                probability DOUBLE PRECISION, model TEXT) RETURNS void
LANGUAGE sql AS $$
SELECT set_config({setting}, customer, true);
INSERT INTO {schema}.memories (customer_id, ticket_id, request, jev_answered, p_remember, model)
VALUES (customer, ticket, request, answered, probability, model);
$$;
CREATE OR REPLACE FUNCTION {schema}.log_entry(customer TEXT, entry JSON) RETURNS void
LANGUAGE sql AS $$
SELECT set_config({setting}, customer, true);
INSERT INTO {schema}.ledger (customer_id, entry) VALUES (customer, entry);
$$;
REVOKE ALL ON FUNCTION {schema}.note_for_erasure(OID[]), {schema}.recall_memories(TEXT),
    {schema}.save_memory(TEXT, TEXT, JSON, JSON, DOUBLE PRECISION, TEXT), {schema}.log_entry(TEXT, JSON) FROM PUBLIC;
"""
TABLE_RULES = """
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS one_customer ON {table};
CREATE POLICY one_customer ON {table} USING (customer_id = current_setting({setting}, true));
DO $$ BEGIN  -- an empty id would match a connection whose setting went back to '' after a transaction named one
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = {table_name}::regclass AND conname = 'customer_named')
    THEN ALTER TABLE {table} ADD CONSTRAINT customer_named CHECK (customer_id <> '');
    END IF;
END $$;
"""
PARTITION = """
CREATE TABLE IF NOT EXISTS {partition} PARTITION OF {table} FOR VALUES WITH (MODULUS {modulus}, REMAINDER {remainder});
ALTER TABLE {partition} ENABLE ROW LEVEL SECURITY;
"""


def create_memory_tables(url: str, schema: str = "memory_cookbook", partitions: int = PARTITIONS) -> None:
    """Create the schema, the tables, their partitions, their policies and checks, and the store's functions, if
    they are not there: once, as a role that may create them (it owns them). Processes doing it at once take turns
    (an advisory lock). It removes and rewrites nothing."""
    with database_errors(url), psycopg.connect(url) as db, db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(2026)")
        db.execute(sql.SQL(TABLES).format(schema=sql.Identifier(schema), schema_name=sql.Literal(schema),
                                          setting=sql.Literal(CUSTOMER_SETTING)))
        for name in ("memories", "ledger"):
            table = sql.Identifier(schema, name)
            db.execute(sql.SQL(TABLE_RULES).format(table=table, table_name=sql.Literal(table.as_string(db)),
                                                   setting=sql.Literal(CUSTOMER_SETTING)))
            for remainder in range(partitions):  # a partition alone, queried by name, shows no row to other roles
                db.execute(sql.SQL(PARTITION).format(
                    partition=sql.Identifier(schema, f"{name}_{remainder:02}"), table=table,
                    modulus=sql.Literal(partitions), remainder=sql.Literal(remainder)))


# %% ../../notebooks/09_many_app_servers.ipynb cell-13b
GRANTS = """
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT, INSERT, DELETE ON {schema}.memories, {schema}.ledger TO {role};
REVOKE ALL ON {schema}.to_erase FROM {role};
GRANT EXECUTE ON FUNCTION {schema}.note_for_erasure(OID[]), {schema}.recall_memories(TEXT),
    {schema}.save_memory(TEXT, TEXT, JSON, JSON, DOUBLE PRECISION, TEXT), {schema}.log_entry(TEXT, JSON) TO {role};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role};
"""


def grant_row_rights(url: str, role: str, schema: str = "memory_cookbook") -> None:
    """Let `role` save, recall, log and forget, and nothing more: no right to change a table, to read the tables'
    partitions by name, to see a row of a customer its transaction has not named, or to write to_erase, which it
    reaches only through note_for_erasure."""
    with database_errors(url), psycopg.connect(url) as db:
        db.execute(sql.SQL(GRANTS).format(schema=sql.Identifier(schema), role=sql.Identifier(role)))


# %% ../../notebooks/09_many_app_servers.ipynb c016f4f1
NAME_CUSTOMER = "SELECT set_config(%s, %s, true)"  # for this transaction only
FUNCTIONS = {"recall_memories": 1, "save_memory": 6, "log_entry": 2, "note_for_erasure": 1}  # how many arguments
STORE_OBJECTS = """
SELECT (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid
        AND c.relname IN ('memories', 'ledger', 'to_erase'))
     + (SELECT count(DISTINCT p.proname) FROM pg_proc p WHERE p.pronamespace = n.oid AND p.proname = ANY (%s))
FROM pg_namespace n WHERE n.nspname = %s
"""


class PostgresStore:
    """Memories and the ledger in PostgreSQL, shared by every process, on any machine, that has the URL. Opening
    needs only the rights grant_row_rights gives; create_memory_tables must have made the tables. Each call for a
    customer is one transaction that first names the customer, and row-level security shows it that customer's rows
    only (a role that owns the tables sees every row, as the notebook's owner does). No statement runs, waits for a
    lock, or leaves its transaction idle longer than the limits (seconds; `options` in the URL may set them too)."""

    def __init__(self, url: str, schema: str = "memory_cookbook", timeout: int = 5, max_connections: int = 4,
                 statement_timeout: float = 30, lock_timeout: float = 5,
                 idle_in_transaction_timeout: float = 60) -> None:
        self.url, self.schema = url, schema
        self.memories, self.ledger_table, self.to_erase, self.note_for_erasure = (
            sql.Identifier(schema, name) for name in ("memories", "ledger", "to_erase", "note_for_erasure"))
        with database_errors(url), psycopg.connect(url, connect_timeout=timeout) as db:  # psycopg's reason, if not
            if (db.execute(STORE_OBJECTS, (list(FUNCTIONS), schema)).fetchone() or [0])[0] < 3 + len(FUNCTIONS):
                raise missing_tables(url, schema)
            self.calls = {function: sql.SQL("SELECT * FROM {}({})").format(  # composed once: call() is the hot path
                sql.Identifier(schema, function), sql.SQL(", ").join([sql.Placeholder()] * arguments)).as_string(db)
                for function, arguments in FUNCTIONS.items()}
        self.pool = ConnectionPool(url, min_size=1, max_size=max_connections, timeout=timeout, open=True, kwargs={
            "autocommit": True, "options": session_options(
                url, statement_timeout=statement_timeout, lock_timeout=lock_timeout,
                idle_in_transaction_session_timeout=idle_in_transaction_timeout)})

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection from the pool that the server has not closed meanwhile, back to the pool at the end of the
        block; psycopg's errors raised as the DatabaseError that says what happened. Each statement is a
        transaction of its own (autocommit)."""
        try:
            with database_errors(self.url), live_connection(self.pool) as db:
                yield db
        except DatabaseUnavailable:
            self.pool.check()  # drop broken connections: a server back up is used again at the next call
            raise
        except QueryFailed as error:
            if error.sqlstate == "42P01" and not isinstance(error, MemoryTablesMissing):  # dropped since it opened
                raise missing_tables(self.url, self.schema) from error.__cause__
            raise

    @contextmanager
    def as_customer(self, customer: str | None) -> Iterator[psycopg.Connection[Any]]:
        """A connection in one transaction that may see `customer`'s rows only (with None, no customer's, unless the
        role owns the tables): committed at the end of the block, rolled back on any error."""
        with self.connection() as db, db.transaction():
            if customer is not None:
                db.execute(NAME_CUSTOMER, (CUSTOMER_SETTING, customer))
            yield db

    def transaction(self) -> Any:
        """A connection in one transaction, with no customer named."""
        return self.as_customer(None)

    def call(self, function: str, *args: object) -> list[Any]:
        """One of the store's functions, which names the customer and runs its statement: a single statement, so
        one transaction and one round trip, prepared once per connection. Its rows."""
        with self.connection() as db:
            return db.execute(self.calls[function], args, prepare=True).fetchall()

    def execute(self, query: Any, *params: object) -> Any:
        """One statement (a string or psycopg.sql), a transaction of its own, with no customer named: its rows, or
        how many rows it changed. Without params, a % in the query is a %."""
        with self.connection() as db:
            cursor = db.execute(query, params or None, prepare=False)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer: str) -> list[MemoryItem]:
        rows = self.call("recall_memories", checked_id("customer", customer))
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str) -> None:
        self.call("save_memory", checked_id("customer", customer),
                  checked_id("ticket id", ticket_id(memory), optional=True), json.dumps(memory["request"]),
                  json.dumps(memory["jev_answered"]), checked_probability("p_remember", p_remember),
                  checked_text("model", model))

    def deleted(self, db: psycopg.Connection[Any], table: sql.Identifier, condition: str, *params: object) -> int:
        """Delete rows and note the partitions that still hold their bytes, for erase_forgotten, in one statement:
        how many rows. Never prepared, so always planned for its customer (a generic plan would lock every
        partition)."""
        return (db.execute(sql.SQL("WITH gone AS (DELETE FROM {} WHERE {} RETURNING tableoid)"
                                  " SELECT count(*), {}(array_agg(DISTINCT tableoid)) FROM gone").format(
            table, sql.SQL(condition), self.note_for_erasure), params, prepare=False).fetchone() or [0])[0]

    def forget_ticket(self, customer: str, ticket: str) -> int:
        """Delete the customer's memory saved from `ticket`, in a transaction that names the customer."""
        customer, ticket = checked_id("customer", customer), checked_id("ticket id", ticket)
        with self.as_customer(customer) as db:
            return self.deleted(db, self.memories, "customer_id = %s AND ticket_id = %s", customer, ticket)

    def forget_customer(self, customer: str) -> int:
        """Delete the customer's memories and ledger entries in one transaction, so that no query sees one without
        the other. Nobody waits: their bytes stay in the table files until erase_forgotten rewrites the partitions
        that hold them."""
        with self.as_customer(checked_id("customer", customer)) as db:
            self.deleted(db, self.ledger_table, "customer_id = %s", customer)
            return self.deleted(db, self.memories, "customer_id = %s", customer)

    def log(self, entry: LedgerEntry) -> None:
        self.call("log_entry", checked_id("customer", entry["customer"]), json.dumps(entry))

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        """The ledger's entries in the order logged: the customer's, in a transaction that names them, or (None) every
        customer's, the owner's view (a role under row-level security sees none)."""
        if customer is None:
            rows = self.execute(sql.SQL("SELECT entry::text FROM {} ORDER BY id").format(self.ledger_table))
        else:
            with self.as_customer(checked_id("customer", customer)) as db:
                rows = db.execute(sql.SQL("SELECT entry::text FROM {} WHERE customer_id = %s ORDER BY id").format(
                    self.ledger_table), (customer,)).fetchall()
        return [json.loads(entry) for (entry,) in rows]

    def saved(self) -> list[SavedMemory]:
        """(customer, ticket, P(remember), model) for every memory, in the order saved: the owner's view."""
        return [SavedMemory(*row) for row in self.execute(sql.SQL(
            "SELECT customer_id, ticket_id, p_remember, model FROM {} ORDER BY id").format(self.memories))]

    def close(self) -> None:
        self.pool.close()


# %% ../../notebooks/09_many_app_servers.ipynb cell-14c
def erase_forgotten(url: str, schema: str = "memory_cookbook", lock_timeout: float = 2) -> dict[str, list[str]]:
    """Rewrite each partition of the store's tables in `schema` that forgetting noted (VACUUM FULL), one at a time,
    so that their bytes leave the table files: run by the tables' owner, say nightly. A rewrite not granted its lock
    within `lock_timeout` seconds gives up, and its notes stay for the next run; a note that names anything but a
    partition of these tables is skipped, and stays. {"rewritten": [...], "waited": [...], "skipped": [...]}."""
    to_erase = sql.Identifier(schema, "to_erase")
    done: dict[str, list[str]] = {"rewritten": [], "waited": [], "skipped": []}
    with database_errors(url), psycopg.connect(url, autocommit=True,
                                               options=session_options(url, lock_timeout=lock_timeout)) as db:
        noted = db.execute(sql.SQL(
            "SELECT e.relation::oid, e.relation::text, max(e.id), max(p.relname) FROM {} e"
            " LEFT JOIN (pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid AND p.relkind = 'r'"
            "  JOIN pg_class t ON t.oid = i.inhparent AND t.relname IN ('memories', 'ledger')"
            "  JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = %s) ON i.inhrelid = e.relation"
            " GROUP BY 1, 2 ORDER BY 2").format(to_erase), (schema,)).fetchall()
        for oid, noted_as, last, partition in noted:
            if partition is None:  # not the store's: never rewritten here
                done["skipped"].append(noted_as)
                continue
            try:
                db.execute(sql.SQL("VACUUM FULL {}").format(sql.Identifier(schema, partition)))
            except psycopg.errors.LockNotAvailable:
                done["waited"].append(partition)
                continue
            db.execute(sql.SQL("DELETE FROM {} WHERE relation = %s::oid AND id <= %s").format(to_erase), (oid, last))
            done["rewritten"].append(partition)
    return done
