"""Generated from the `#| export postgres_store` cells of notebooks/09_many_app_servers.ipynb by
scripts/export_module.py. Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this file."""

import hashlib
import json
import psycopg
import shlex
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from memory_cookbook.contract import CustomerAlreadyKept, LedgerEntry, MemoryItem, SavedMemory
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.memory_checks import checked_entry, checked_save, non_empty_text
from memory_cookbook.postgres.errors import (DatabaseUnavailable, MemoryTablesMissing, QueryFailed, checked_id,
                                             checked_text,
                                             database_errors,
                                             earlier_store, masked,
                                             missing_tables)
from memory_cookbook.postgres.pool import connection_pool, new_session, pooled, session_options
from memory_cookbook.records import MemoryRecord, checked_restore
from pathlib import PurePosixPath
from psycopg import sql
from psycopg_pool import ConnectionPool
from typing import Any

__all__ = ["CUSTOMER_SETTING", "DESK_COLUMNS", "FUNCTIONS", "GRANTS", "IN_FORCE", "MISSING_COLUMNS", "NAME_CUSTOMER",
           "ORPHAN_FILES", "PARTITION", "PARTITIONS", "PostgresStore", "SIGNATURES", "STORE_FUNCTIONS", "STORE_MADE",
           "STORE_OBJECTS", "TABLES", "TABLE_RULES", "create_memory_tables", "dollar_quote", "erase_forgotten",
           "grant_row_rights", "orphan_files", "store_functions", "store_version"]


# %% ../../notebooks/09_many_app_servers.ipynb 0ce72fd9
PARTITIONS = 32  # hash partitions of each table, by customer: erasing one customer rewrites 1/32 of a table
CUSTOMER_SETTING = "memory_cookbook.customer"  # whose rows this transaction may see (row-level security)
# The store's functions the app role may call, with their arguments' types.
SIGNATURES = {"recall_memories": "TEXT", "save_memory": "TEXT, TEXT, JSON, JSON, DOUBLE PRECISION, TEXT, DOUBLE"
              " PRECISION, JSON, TIMESTAMPTZ", "log_entry": "TEXT, JSON", "forget_ticket": "TEXT, TEXT",
              "forget_customer": "TEXT", "memory_records": "TEXT", "ledger_entries": "TEXT",
              "invalidate_memory": "TEXT, TEXT, TEXT, TEXT", "restore_customer": "TEXT, JSON, JSON"}
FUNCTIONS = {name: len(types.split(", ")) for name, types in SIGNATURES.items()}  # how many arguments each takes

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
"""
# What a desk keeps beside a memory (notebook 10), added to tables made without it as to new ones.
DESK_COLUMNS = {"remember_at": "DOUBLE PRECISION", "answer_probabilities": "JSON NOT NULL DEFAULT '{}'",
                "expires_at": "TIMESTAMPTZ", "invalidated_at": "TIMESTAMPTZ", "invalidated_by": "TEXT",
                "invalidation_reason": "TEXT"}
IN_FORCE = "(invalidated_at IS NULL OR invalidated_at > now()) AND (expires_at IS NULL OR expires_at > now())"
# The app role's only way to the tables, on which it has no right (so it cannot lock them): each function runs with the
# owner's rights (SECURITY DEFINER) on the rows of the customer it is given, with its search_path pinned, pg_temp last.
# Those that find a customer's rows are planned for that customer: a generic plan would lock every partition first.
# {q} is a dollar-quote tag that the schema's name does not hold.
STORE_FUNCTIONS = """
CREATE OR REPLACE FUNCTION {schema}.note_for_erasure(partitions OID[]) RETURNS void
LANGUAGE plpgsql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS {q}
BEGIN  -- the one way into to_erase: partitions of the store's memories and ledger, nothing else
    IF EXISTS (SELECT FROM unnest(partitions) AS noted (oid) WHERE noted.oid NOT IN (
            SELECT i.inhrelid FROM pg_inherits i JOIN pg_class t ON t.oid = i.inhparent
            JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE n.nspname = {schema_name} AND t.relname IN ('memories', 'ledger'))) THEN
        RAISE EXCEPTION 'only partitions of the store''s memories and ledger can be noted for erasure: %',
            partitions::regclass[] USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO {schema}.to_erase (relation) SELECT DISTINCT unnest(partitions);
END {q};
CREATE OR REPLACE FUNCTION {schema}.recall_memories(customer TEXT) RETURNS TABLE (request TEXT, jev_answered TEXT)
LANGUAGE sql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
AS {q}
SELECT request::text, jev_answered::text FROM {schema}.memories WHERE customer_id = customer AND {in_force}
ORDER BY id;
{q};
DROP FUNCTION IF EXISTS {schema}.save_memory(TEXT, TEXT, JSON, JSON, DOUBLE PRECISION, TEXT);  -- an earlier version's
CREATE OR REPLACE FUNCTION {schema}.save_memory(customer TEXT, ticket TEXT, request JSON, answered JSON,
    probability DOUBLE PRECISION, model TEXT, threshold DOUBLE PRECISION, probabilities JSON, expires TIMESTAMPTZ)
RETURNS void LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS {q}
INSERT INTO {schema}.memories (customer_id, ticket_id, request, jev_answered, p_remember, model, remember_at,
                               answer_probabilities, expires_at)
VALUES (customer, ticket, request, answered, probability, model, threshold, probabilities, expires);
{q};
CREATE OR REPLACE FUNCTION {schema}.memory_records(customer TEXT) RETURNS TABLE (ticket TEXT, request TEXT,
    jev_answered TEXT, answer_probabilities TEXT, p_remember DOUBLE PRECISION, remember_at DOUBLE PRECISION,
    model TEXT, saved_at TIMESTAMPTZ, expires_at TIMESTAMPTZ, invalidated_at TIMESTAMPTZ, invalidated_by TEXT,
    invalidation_reason TEXT)
LANGUAGE sql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
AS {q}
SELECT m.ticket_id, m.request::text, m.jev_answered::text, m.answer_probabilities::text, m.p_remember, m.remember_at,
       m.model, m.saved_at, m.expires_at, m.invalidated_at, m.invalidated_by, m.invalidation_reason
FROM {schema}.memories m WHERE m.customer_id = customer ORDER BY m.id;
{q};
CREATE OR REPLACE FUNCTION {schema}.ledger_entries(customer TEXT) RETURNS TABLE (entry TEXT)
LANGUAGE sql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
AS {q}
SELECT entry::text FROM {schema}.ledger WHERE customer_id = customer ORDER BY id;
{q};
-- The memory stays, marked no longer true, when and by whom and why: recall leaves it out. Marked once only.
CREATE OR REPLACE FUNCTION {schema}.invalidate_memory(customer TEXT, ticket TEXT, why TEXT, who TEXT) RETURNS BIGINT
LANGUAGE sql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
AS {q}
WITH marked AS (UPDATE {schema}.memories SET invalidated_at = now(), invalidated_by = who, invalidation_reason = why
                WHERE customer_id = customer AND ticket_id = ticket AND invalidated_at IS NULL RETURNING 1)
SELECT count(*) FROM marked;
{q};
-- A customer's exported memories and ledger entries, in their order, into a store that keeps none of theirs; else
-- nothing is written. Returns how many memories and entries it found of theirs.
CREATE OR REPLACE FUNCTION {schema}.restore_customer(customer TEXT, memories JSON, entries JSON)
RETURNS TABLE (memories_kept BIGINT, entries_kept BIGINT)
LANGUAGE plpgsql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
AS {q}
BEGIN
    PERFORM pg_advisory_xact_lock(2027, hashtext(customer));  -- two restores of one customer take turns
    memories_kept := (SELECT count(*) FROM {schema}.memories m WHERE m.customer_id = customer);
    entries_kept := (SELECT count(*) FROM {schema}.ledger l WHERE l.customer_id = customer);
    IF memories_kept = 0 AND entries_kept = 0 THEN
        INSERT INTO {schema}.memories (customer_id, ticket_id, request, jev_answered, answer_probabilities,
            p_remember, remember_at, model, saved_at, expires_at, invalidated_at, invalidated_by, invalidation_reason)
        SELECT customer, r.ticket, r.request::json, r.jev_answered::json, r.answer_probabilities::json, r.p_remember,
            r.remember_at, r.model, r.saved_at, r.expires_at, r.invalidated_at, r.invalidated_by, r.invalidation_reason
        FROM json_to_recordset(memories) AS r (n INT, ticket TEXT, request TEXT, jev_answered TEXT,
            answer_probabilities TEXT, p_remember DOUBLE PRECISION, remember_at DOUBLE PRECISION, model TEXT,
            saved_at TIMESTAMPTZ, expires_at TIMESTAMPTZ, invalidated_at TIMESTAMPTZ, invalidated_by TEXT,
            invalidation_reason TEXT)
        ORDER BY r.n;
        INSERT INTO {schema}.ledger (customer_id, entry)
        SELECT customer, e.entry::json FROM json_array_elements_text(entries) WITH ORDINALITY AS e (entry, n)
        ORDER BY e.n;
    END IF;
    RETURN NEXT;
END {q};
CREATE OR REPLACE FUNCTION {schema}.log_entry(customer TEXT, entry JSON) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS {q}
INSERT INTO {schema}.ledger (customer_id, entry) VALUES (customer, entry);
{q};
-- Each forget deletes, then notes the partitions that still hold the rows' bytes, for erase_forgotten.
CREATE OR REPLACE FUNCTION {schema}.forget_ticket(customer TEXT, ticket TEXT) RETURNS BIGINT
LANGUAGE plpgsql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
AS {q}
DECLARE
    forgotten BIGINT;
    partitions OID[];
BEGIN
    WITH gone AS (DELETE FROM {schema}.memories WHERE customer_id = customer AND ticket_id = ticket RETURNING tableoid)
    SELECT count(*), array_agg(DISTINCT tableoid) INTO forgotten, partitions FROM gone;
    PERFORM {schema}.note_for_erasure(partitions);
    RETURN forgotten;
END {q};
CREATE OR REPLACE FUNCTION {schema}.forget_customer(customer TEXT) RETURNS BIGINT
LANGUAGE plpgsql STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
AS {q}
DECLARE
    forgotten BIGINT;
    partitions OID[];
BEGIN  -- memories and ledger entries in one statement: no query sees one without the other
    WITH ledger_gone AS (DELETE FROM {schema}.ledger WHERE customer_id = customer RETURNING tableoid),
         memories_gone AS (DELETE FROM {schema}.memories WHERE customer_id = customer RETURNING tableoid)
    SELECT (SELECT count(*) FROM memories_gone),
           ARRAY(SELECT tableoid FROM ledger_gone UNION SELECT tableoid FROM memories_gone)
    INTO forgotten, partitions;
    PERFORM {schema}.note_for_erasure(partitions);
    RETURN forgotten;
END {q};
REVOKE ALL ON FUNCTION {schema}.note_for_erasure(OID[]), {functions} FROM PUBLIC;
"""
# Each made only where it is missing: ALTER TABLE and CREATE POLICY lock the table, and app servers would wait.
TABLE_RULES = """
DO {q} BEGIN
    IF NOT (SELECT relrowsecurity FROM pg_class WHERE oid = {table_name}::regclass) THEN
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_policy WHERE polrelid = {table_name}::regclass AND polname = 'one_customer') THEN
        CREATE POLICY one_customer ON {table} USING (customer_id = current_setting({setting}, true));
    END IF;
    -- an empty id would match a connection whose setting went back to '' after a transaction named one
    IF NOT EXISTS (SELECT FROM pg_constraint WHERE conrelid = {table_name}::regclass AND conname = 'customer_named')
    THEN ALTER TABLE {table} ADD CONSTRAINT customer_named CHECK (customer_id <> '');
    END IF;
END {q};
"""
PARTITION = """
CREATE TABLE IF NOT EXISTS {partition} PARTITION OF {table} FOR VALUES WITH (MODULUS {modulus}, REMAINDER {remainder});
DO {q} BEGIN
    IF NOT (SELECT relrowsecurity FROM pg_class WHERE oid = {partition_name}::regclass) THEN
        ALTER TABLE {partition} ENABLE ROW LEVEL SECURITY;
    END IF;
END {q};
"""
MISSING_COLUMNS = """
SELECT array_agg(wanted ORDER BY wanted) FROM unnest(%s::text[]) AS wanted
WHERE NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = %s::regclass AND attname = wanted AND NOT attisdropped)
"""
# Whether every part is there as this version makes it: read from the catalog, which locks no table.
STORE_MADE = """
SELECT obj_description(to_erase.oid, 'pg_class') = %(version)s
   AND (SELECT count(*) FROM pg_inherits i JOIN pg_class t ON t.oid = i.inhparent
        WHERE t.relnamespace = n.oid AND t.relname IN ('memories', 'ledger')) = 2 * %(partitions)s
   AND (SELECT count(*) FROM pg_policy p JOIN pg_class t ON t.oid = p.polrelid
        WHERE t.relnamespace = n.oid AND t.relname IN ('memories', 'ledger') AND p.polname = 'one_customer') = 2
   AND (SELECT count(DISTINCT proname) FROM pg_proc WHERE pronamespace = n.oid AND proname = ANY (%(functions)s))
       = cardinality(%(functions)s)
FROM pg_namespace n JOIN pg_class to_erase ON to_erase.relnamespace = n.oid AND to_erase.relname = 'to_erase'
WHERE n.nspname = %(schema)s
"""


def store_version(partitions: int) -> str:
    """What create_memory_tables writes on to_erase (as its comment) once every part is made: these definitions and the
    number of partitions, as a digest."""
    made = "".join([TABLES, str(DESK_COLUMNS), STORE_FUNCTIONS, IN_FORCE, str(SIGNATURES), TABLE_RULES, PARTITION,
                    str(partitions)])
    return f"memory_cookbook store {hashlib.sha256(made.encode()).hexdigest()[:16]}"


def store_functions(schema: str) -> sql.Composed:
    """The app role's functions, each with its arguments' types: schema.recall_memories(TEXT), ..."""
    return sql.SQL(", ").join(sql.SQL("{}({})").format(sql.Identifier(schema, name), sql.SQL(types))
                              for name, types in SIGNATURES.items())


def dollar_quote(schema: str) -> str:
    """A dollar-quote tag for the functions' bodies that the schema's name does not hold: any name PostgreSQL takes
    (we$$ird, end$$) ends no body early."""
    tag, number = "$body$", 0
    while tag in schema:
        number += 1
        tag = f"$body{number}$"
    return tag


def create_memory_tables(url: str, schema: str = "memory_cookbook", partitions: int = PARTITIONS,
                         lock_timeout: float = 2) -> None:
    """Create the schema, the tables, their partitions, their policies and checks, and the store's functions, if
    they are not there: once, as a role that may create them (it owns them). Processes doing it at once take turns
    (an advisory lock). Run again when every part is there as this version makes it, it changes nothing and locks no
    table, so no app server waits. On tables an earlier version made, it adds what is missing and brings the functions
    to this version: only adding a column locks the table, briefly (no row is rewritten), and if an open transaction
    holds the table past `lock_timeout` seconds it changes nothing and says to run it again. It removes and rewrites
    nothing."""
    version, names = store_version(partitions), {"schema": sql.Identifier(schema), "q": sql.SQL(dollar_quote(schema)),
                                                  "schema_name": sql.Literal(schema),
                                                  "setting": sql.Literal(CUSTOMER_SETTING),
                                                  "in_force": sql.SQL(IN_FORCE), "functions": store_functions(schema)}
    with database_errors(url), psycopg.connect(url) as db, db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(2026)")
        made = db.execute(STORE_MADE, {"version": version, "partitions": partitions, "schema": schema,
                                       "functions": [*FUNCTIONS, "note_for_erasure"]}).fetchone()
        if made and made[0]:
            return
        db.execute(sql.SQL(TABLES).format(**names))
        memories = sql.Identifier(schema, "memories")
        missing = db.execute(MISSING_COLUMNS, (list(DESK_COLUMNS), memories.as_string(db))).fetchone()
        if missing and missing[0]:  # on the partitioned table: every partition gets them
            db.execute(sql.SQL("SET LOCAL lock_timeout = {}").format(sql.Literal(f"{lock_timeout * 1000:.0f}ms")))
            try:
                db.execute(sql.SQL("ALTER TABLE {} {}").format(memories, sql.SQL(", ").join(
                    sql.SQL("ADD COLUMN {} {}").format(sql.Identifier(column), sql.SQL(DESK_COLUMNS[column]))
                    for column in missing[0])))
            except psycopg.errors.LockNotAvailable as error:
                raise QueryFailed(
                    f"create_memory_tables waited {lock_timeout} s to add the columns {', '.join(missing[0])} to"
                    f" {schema}.memories: a transaction still holds the table. Nothing was changed; run it again"
                    " (the lock it needs is brief, but waits for transactions open on the table).", masked(url),
                    "55P03") from error
            db.execute("SET LOCAL lock_timeout = DEFAULT")
        db.execute(sql.SQL(STORE_FUNCTIONS).format(**names))
        for name in ("memories", "ledger"):
            table = sql.Identifier(schema, name)
            db.execute(sql.SQL(TABLE_RULES).format(table=table, table_name=sql.Literal(table.as_string(db)), **names))
            for remainder in range(partitions):  # a partition alone, queried by name, shows no row to other roles
                partition = sql.Identifier(schema, f"{name}_{remainder:02}")
                db.execute(sql.SQL(PARTITION).format(
                    partition=partition, partition_name=sql.Literal(partition.as_string(db)), table=table,
                    modulus=sql.Literal(partitions), remainder=sql.Literal(remainder), **names))
        db.execute(sql.SQL("COMMENT ON TABLE {} IS {}").format(sql.Identifier(schema, "to_erase"),
                                                               sql.Literal(version)))


# %% ../../notebooks/09_many_app_servers.ipynb cell-13b
GRANTS = """
GRANT USAGE ON SCHEMA {schema} TO {role};
REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role};
REVOKE ALL ON ALL SEQUENCES IN SCHEMA {schema} FROM {role};
REVOKE ALL ON FUNCTION {schema}.note_for_erasure(OID[]) FROM {role};
GRANT EXECUTE ON FUNCTION {functions} TO {role};
"""


def grant_row_rights(url: str, role: str, schema: str = "memory_cookbook") -> None:
    """Let `role` save, recall, log, forget, read a customer's records and ledger, invalidate and restore, through the
    store's functions, and nothing more: no right on a table of the schema (so no row of its own choosing, and no
    lock that would stall the others), a sequence, or note_for_erasure. Rights an earlier version granted (on the
    tables, their sequences) are taken back."""
    with database_errors(url), psycopg.connect(url) as db:
        db.execute(sql.SQL(GRANTS).format(schema=sql.Identifier(schema), role=sql.Identifier(role),
                                          functions=store_functions(schema)))


# %% ../../notebooks/09_many_app_servers.ipynb c016f4f1
NAME_CUSTOMER = "SELECT set_config(%s, %s, true)"  # for this transaction only
STORE_OBJECTS = """
SELECT (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid
        AND c.relname IN ('memories', 'ledger', 'to_erase')),
       (SELECT count(DISTINCT p.proname) FROM pg_proc p WHERE p.pronamespace = n.oid AND p.proname = ANY (%s)),
       (SELECT pg_has_role(c.relowner, 'USAGE') FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'memories')
FROM pg_namespace n WHERE n.nspname = %s
"""


class PostgresStore:
    """Memories and the ledger in PostgreSQL, shared by every process, on any machine, that has the URL. Opening
    needs only the rights grant_row_rights gives; create_memory_tables must have made the tables. Each call for a
    customer is one call of one of the store's functions, on that customer's rows only, in a transaction of its own.
    No statement runs, waits for a lock, or leaves its transaction idle longer than the limits (seconds; `options` in
    the URL may set them too)."""

    def __init__(self, url: str, schema: str = "memory_cookbook", timeout: int = 5, max_connections: int = 4,
                 statement_timeout: float = 30, lock_timeout: float = 5,
                 idle_in_transaction_timeout: float = 60) -> None:
        self.url, self.schema = url, schema
        self.memories, self.ledger_table, self.to_erase, self.note_for_erasure = (
            sql.Identifier(schema, name) for name in ("memories", "ledger", "to_erase", "note_for_erasure"))
        with database_errors(url), psycopg.connect(url, connect_timeout=timeout) as db:  # psycopg's reason, if not
            found = db.execute(STORE_OBJECTS, ([*FUNCTIONS, "note_for_erasure"], schema)).fetchone()
            tables, functions, self.owner = found or (0, 0, False)
            if tables < 3:
                raise missing_tables(url, schema)
            if functions < len(FUNCTIONS) + 1:
                raise earlier_store(url, schema)
            self.calls = {function: sql.SQL("SELECT * FROM {}({})").format(  # composed once: call() is the hot path
                sql.Identifier(schema, function), sql.SQL(", ").join([sql.Placeholder()] * arguments)).as_string(db)
                for function, arguments in FUNCTIONS.items()}
        settings = {"autocommit": True, "options": session_options(
            url, statement_timeout=statement_timeout, lock_timeout=lock_timeout,
            idle_in_transaction_session_timeout=idle_in_transaction_timeout)}
        # The store's calls run its functions only, which leave nothing in the session: their pool resets nothing.
        self.pool = connection_pool(url, min_size=1, max_size=max_connections, timeout=timeout, kwargs=settings)
        # connection(), transaction() and execute() lend a connection: it comes back to its pool as a new session.
        self.lent = connection_pool(url, min_size=0, max_size=max_connections, timeout=timeout, kwargs=settings,
                                    reset=new_session)

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    @contextmanager
    def pooled(self, pool: ConnectionPool[Any]) -> Iterator[psycopg.Connection[Any]]:
        """A connection of `pool` that the server has not closed meanwhile, back to it at the end of the block;
        psycopg's errors raised as the DatabaseError that says what happened."""
        try:
            with database_errors(self.url), pooled(pool) as db:
                yield db
        except DatabaseUnavailable:
            pool.check()  # drop broken connections: a server back up is used again at the next call
            raise
        except QueryFailed as error:
            if error.sqlstate == "42P01" and not isinstance(error, MemoryTablesMissing):  # dropped since it opened
                raise missing_tables(self.url, self.schema) from error.__cause__
            raise

    def connection(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A connection lent for the block, which comes back as a new session (whatever it was SET to): each
        statement is a transaction of its own (autocommit)."""
        return self.pooled(self.lent)

    @contextmanager
    def as_customer(self, customer: str | None) -> Iterator[psycopg.Connection[Any]]:
        """A lent connection in one transaction that may see `customer`'s rows only, if its role is under row-level
        security (with None, no customer's): committed at the end of the block, rolled back on any error."""
        with self.connection() as db, db.transaction():
            if customer is not None:
                db.execute(NAME_CUSTOMER, (CUSTOMER_SETTING, customer))
            yield db

    def transaction(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        """A lent connection in one transaction, with no customer named."""
        return self.as_customer(None)

    def call(self, function: str, *args: object) -> list[Any]:
        """One of the store's functions: a single statement, so one transaction and one round trip, prepared once per
        connection. Its rows."""
        with self.pooled(self.pool) as db:
            return db.execute(self.calls[function], args, prepare=True).fetchall()

    def execute(self, query: Any, *params: object) -> Any:
        """One statement (a string or psycopg.sql), a transaction of its own, with no customer named: its rows, or
        how many rows it changed. Without params, a % in the query is a %."""
        with self.connection() as db:
            cursor = db.execute(query, params or None, prepare=False)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer: str) -> list[MemoryItem]:
        """The customer's memories in force: neither invalidated nor expired."""
        rows = self.call("recall_memories", checked_id("customer", customer))
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str, remember_at: float | None = None,
             answer_probabilities: Mapping[str, float] | None = None, expires_at: datetime | None = None) -> None:
        kept = checked_save(customer, memory, p_remember, model, remember_at, answer_probabilities, expires_at,
                            datetime.now(UTC))  # every value checked, or a ValueError naming what is wrong
        self.call("save_memory", checked_id("customer", customer),
                  checked_id("ticket id", ticket_id(memory), optional=True), kept.request, kept.jev_answered,
                  kept.p_remember, checked_text("model", kept.model), kept.remember_at, kept.answer_probabilities,
                  kept.expires_at)

    def forget_ticket(self, customer: str, ticket: str) -> int:
        """Delete the memory `customer` saved from `ticket` (no other customer's): how many."""
        forgotten: int = self.call("forget_ticket", checked_id("customer", customer),
                                   checked_id("ticket id", ticket))[0][0]
        return forgotten

    def forget_customer(self, customer: str) -> int:
        """Delete the customer's memories and ledger entries in one statement, so that no query sees one without the
        other. Nobody waits: their bytes stay in the table files until erase_forgotten rewrites the partitions that
        hold them."""
        forgotten: int = self.call("forget_customer", checked_id("customer", customer))[0][0]
        return forgotten

    def log(self, entry: LedgerEntry) -> None:
        text = checked_entry(entry)  # JSON text, or a ValueError naming what is wrong
        self.call("log_entry", checked_id("customer", entry["customer"]), text)

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        """The ledger's entries in the order logged: the customer's (through ledger_entries), or (None) every
        customer's, the owner's view (the app role may not read the table)."""
        if customer is None:
            rows = self.execute(sql.SQL("SELECT entry::text FROM {} ORDER BY id").format(self.ledger_table))
        else:
            rows = self.call("ledger_entries", checked_id("customer", customer))
        return [json.loads(entry) for (entry,) in rows]

    def saved(self) -> list[SavedMemory]:
        """(customer, ticket, P(remember), model) for every memory, in the order saved: the owner's view."""
        return [SavedMemory(*row) for row in self.execute(sql.SQL(
            "SELECT customer_id, ticket_id, p_remember, model FROM {} ORDER BY id").format(self.memories))]

    def memory_records(self, customer: str) -> list[MemoryRecord]:
        """Every memory of the customer with what is kept beside it, in force or not."""
        return [MemoryRecord(customer, ticket, {"request": json.loads(request), "jev_answered": json.loads(answered)},
                             json.loads(probabilities), *kept)
                for ticket, request, answered, probabilities, *kept in self.call(
                    "memory_records", checked_id("customer", customer))]

    def invalidate(self, customer: str, ticket: str, reason: str, by: str) -> int:
        """Mark the customer's memory from `ticket` no longer true, keeping it: no recall sends it from now on."""
        marked: int = self.call("invalidate_memory", checked_id("customer", customer), checked_id("ticket id", ticket),
                                checked_text("reason", non_empty_text("reason", reason)),
                                checked_text("by", non_empty_text("by", by)))[0][0]
        return marked

    def restore(self, customer: str, records: Sequence[MemoryRecord], entries: Sequence[LedgerEntry]) -> None:
        """Write a customer's records and entries in one statement, into a store that keeps none of theirs."""
        texts = checked_restore(customer, records, entries)
        rows = [{"n": number, "ticket": checked_id("ticket id", r.ticket, optional=True),
                 "request": json.dumps(r.memory["request"]), "jev_answered": json.dumps(r.memory["jev_answered"]),
                 "answer_probabilities": json.dumps(r.answer_probabilities), "p_remember": r.p_remember,
                 "remember_at": r.remember_at, "model": checked_text("model", r.model),
                 "saved_at": r.saved_at.isoformat(), "expires_at": r.expires_at and r.expires_at.isoformat(),
                 "invalidated_at": r.invalidated_at and r.invalidated_at.isoformat(),
                 "invalidated_by": checked_text("invalidated_by", r.invalidated_by, optional=True),
                 "invalidation_reason": checked_text("invalidation_reason", r.invalidation_reason, optional=True)}
                for number, r in enumerate(records)]
        kept = self.call("restore_customer", checked_id("customer", customer), json.dumps(rows), json.dumps(texts))[0]
        if any(kept):
            raise CustomerAlreadyKept(customer, *kept)

    def close(self) -> None:
        self.pool.close()
        self.lent.close()


# %% ../../notebooks/09_many_app_servers.ipynb cell-14c
# The guide's query (docs/own_postgres_server.md): the files of this database's folder that no relation names, here
# only those that hold bytes (the emptied file a rewrite leaves of its old copy waits for the next checkpoint).
ORPHAN_FILES = """
SELECT current_setting('data_directory'), oid, ARRAY(
    SELECT file FROM pg_ls_dir('base/' || oid) AS file WHERE file ~ '^[0-9]+(_fsm|_vm|_init)?(\\.[0-9]+)?$'
    AND substring(file FROM '^[0-9]+')::oid NOT IN (
        SELECT pg_relation_filenode(c.oid) FROM pg_class c WHERE pg_relation_filenode(c.oid) IS NOT NULL)
    AND (pg_stat_file('base/' || oid || '/' || file, true)).size > 0
    ORDER BY 1)
FROM pg_database WHERE datname = current_database()
"""


def orphan_files(db: psycopg.Connection[Any]) -> tuple[list[str] | None, str | None]:
    """(the files of the database's folder that no relation names and that hold bytes, the guide's command that
    removes them once the server is stopped): the copies a rewrite killed midway leaves, or, while another session
    creates or rewrites a table, its new files. Looked for again after a checkpoint, as the guide does, when there are
    any. (None, None) when the role may not look (it takes a superuser)."""
    try:
        folder, database, files = db.execute(ORPHAN_FILES).fetchone() or ("", 0, [])
        if files:
            db.execute("CHECKPOINT")
            folder, database, files = db.execute(ORPHAN_FILES).fetchone() or ("", 0, [])
    except psycopg.errors.InsufficientPrivilege:
        return None, None
    paths = [str(PurePosixPath(folder, "base", str(database), file)) for file in files]
    return paths, ("rm -- " + " ".join(shlex.quote(path) for path in paths)) if paths else None


def erase_forgotten(url: str, schema: str = "memory_cookbook", lock_timeout: float = 2) -> dict[str, Any]:
    """Rewrite each partition of the store's tables in `schema` that forgetting noted (VACUUM FULL), one at a time,
    so that their bytes leave the table files: run by the tables' owner, say nightly. A rewrite not granted its lock
    within `lock_timeout` seconds gives up, and its notes stay for the next run; a note that names anything but a
    partition of these tables is skipped, and stays. Then, as a superuser, it looks for files no relation names (a
    crash during an earlier rewrite leaves them, holding the rows it was copying). {"rewritten": [...], "waited": [...],
    "skipped": [...], "orphan_files": [...], or None if not looked for, "remove_them": the command, once the server
    is stopped}."""
    to_erase = sql.Identifier(schema, "to_erase")
    done: dict[str, Any] = {"rewritten": [], "waited": [], "skipped": []}
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
        done["orphan_files"], done["remove_them"] = orphan_files(db)
    return done
