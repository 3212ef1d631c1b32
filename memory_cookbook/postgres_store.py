"""Generated from the notebooks' `#| export postgres_store` cells by scripts/export_module.py: do not edit."""

import json
import psycopg
from contextlib import contextmanager
from memory_cookbook.database_errors import (DatabaseUnavailable, MemoryTablesMissing, QueryFailed, checked_id,
                                             checked_text,
                                             database_errors,
                                             missing_tables)
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.ledger import forget_entries
from psycopg import sql
from psycopg_pool import ConnectionPool


# %% ../notebooks/09_many_app_servers.ipynb 0ce72fd9
PARTITIONS = 32  # hash partitions of each table, by customer: erasing one customer rewrites 1/32 of a table
CUSTOMER_SETTING = "memory_cookbook.customer"  # whose rows this transaction may see (row-level security)

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
POLICY = """
ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS one_customer ON {table};
CREATE POLICY one_customer ON {table} USING (customer_id = current_setting({setting}, true));
"""
PARTITION = """
CREATE TABLE IF NOT EXISTS {partition} PARTITION OF {table} FOR VALUES WITH (MODULUS {modulus}, REMAINDER {remainder});
ALTER TABLE {partition} ENABLE ROW LEVEL SECURITY;
"""


def create_memory_tables(url, schema="memory_cookbook", partitions=PARTITIONS):
    """Create the schema, the tables, their partitions and their policies, if they are not there: once, as a role
    that may create them (it owns them). Processes doing it at once take turns (an advisory lock)."""
    with database_errors(url), psycopg.connect(url) as db, db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(2026)")
        db.execute(sql.SQL(TABLES).format(schema=sql.Identifier(schema)))
        for name in ("memories", "ledger"):
            table = sql.Identifier(schema, name)
            db.execute(sql.SQL(POLICY).format(table=table, setting=sql.Literal(CUSTOMER_SETTING)))
            for remainder in range(partitions):  # a partition alone, queried by name, shows no row to other roles
                db.execute(sql.SQL(PARTITION).format(
                    partition=sql.Identifier(schema, f"{name}_{remainder:02}"), table=table,
                    modulus=sql.Literal(partitions), remainder=sql.Literal(remainder)))


# %% ../notebooks/09_many_app_servers.ipynb cell-13b
GRANTS = """
GRANT USAGE ON SCHEMA {schema} TO {role};
GRANT SELECT, INSERT, DELETE ON {schema}.memories, {schema}.ledger TO {role};
GRANT INSERT ON {schema}.to_erase TO {role};
GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO {role};
"""


def grant_row_rights(url, role, schema="memory_cookbook"):
    """Let `role` save, recall, log and forget, and nothing more: no right to change a table, to read the tables'
    partitions by name, or to see a row of a customer its transaction has not named."""
    with database_errors(url), psycopg.connect(url) as db:
        db.execute(sql.SQL(GRANTS).format(schema=sql.Identifier(schema), role=sql.Identifier(role)))


# %% ../notebooks/09_many_app_servers.ipynb c016f4f1
class PostgresStore:
    """Memories and the ledger in PostgreSQL, shared by every process, on any machine, that has the URL. Opening
    needs only the rights grant_row_rights gives; create_memory_tables must have made the tables. Each call for a
    customer is one transaction that first names the customer, and row-level security shows it that customer's rows
    only (a role that owns the tables sees every row, as the notebook's owner does)."""

    def __init__(self, url, schema="memory_cookbook", timeout=5, max_connections=4):
        self.url, self.schema = url, schema
        self.memories, self.ledger_table, self.to_erase = (sql.Identifier(schema, name) for name in
                                                           ("memories", "ledger", "to_erase"))
        with database_errors(url), psycopg.connect(url, connect_timeout=timeout) as db:  # psycopg's reason, if not
            found = db.execute("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                               " WHERE n.nspname = %s AND c.relname IN ('memories', 'ledger', 'to_erase')",
                               (schema,)).fetchone()[0]
            if found < 3:
                raise missing_tables(url, schema)
            self.row_security = db.execute("SELECT row_security_active(%s)",
                                           (self.memories.as_string(db),)).fetchone()[0]
        # prepare_threshold=None: never a generic plan, which would lock every partition before pruning; each
        # statement is planned with its customer, and locks only that customer's partition.
        self.pool = ConnectionPool(url, min_size=1, max_size=max_connections, timeout=timeout, open=True,
                                   kwargs={"autocommit": True, "prepare_threshold": None})

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    @contextmanager
    def connection(self):
        """A connection from the pool, back to the pool at the end of the block; psycopg's errors raised as the
        DatabaseError that says what happened. Each statement is a transaction of its own (autocommit)."""
        try:
            with database_errors(self.url), self.pool.connection() as db:
                yield db
        except DatabaseUnavailable:
            self.pool.check()  # drop broken connections: a server back up is used again at the next call
            raise
        except QueryFailed as error:
            if error.sqlstate == "42P01" and not isinstance(error, MemoryTablesMissing):  # dropped since it opened
                raise missing_tables(self.url, self.schema) from error.__cause__
            raise

    @contextmanager
    def as_customer(self, customer):
        """A connection in one transaction that may see `customer`'s rows only (with None, no customer's, unless the
        role owns the tables): committed at the end of the block, rolled back on any error."""
        with self.connection() as db, db.transaction():
            if customer is not None:
                db.execute("SELECT set_config(%s, %s, true)", (CUSTOMER_SETTING, customer))
            yield db

    def transaction(self):
        """A connection in one transaction, with no customer named."""
        return self.as_customer(None)

    def execute(self, query, *params):
        """One statement (a string or psycopg.sql), a transaction of its own, with no customer named: its rows, or
        how many rows it changed."""
        with self.connection() as db:
            cursor = db.execute(query, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer):
        with self.as_customer(checked_id("customer", customer)) as db:
            rows = db.execute(sql.SQL("SELECT request::text, jev_answered::text FROM {} WHERE customer_id = %s"
                                      " ORDER BY id").format(self.memories), (customer,)).fetchall()
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer, memory, p_remember, model):
        row = (checked_id("customer", customer), checked_id("ticket id", ticket_id(memory), optional=True),
               json.dumps(memory["request"]), json.dumps(memory["jev_answered"]), p_remember,
               checked_text("model", model))
        with self.as_customer(customer) as db:
            db.execute(sql.SQL("INSERT INTO {} (customer_id, ticket_id, request, jev_answered, p_remember, model)"
                               " VALUES (%s, %s, %s, %s, %s, %s)").format(self.memories), row)

    def deleted(self, db, table, condition, *params):
        """Delete rows; note the partitions that still hold their bytes, for erase_forgotten. How many rows."""
        partitions = [oid for (oid,) in db.execute(sql.SQL("DELETE FROM {} WHERE {} RETURNING tableoid").format(
            table, sql.SQL(condition)), params)]
        if partitions:
            db.execute(sql.SQL("INSERT INTO {} (relation) SELECT DISTINCT unnest(%s::oid[])").format(self.to_erase),
                       (partitions,))
        return len(partitions)

    def forget_ticket(self, ticket, customer=None):
        """Delete the memory saved from `ticket`. A role under row-level security must name its customer."""
        if customer is None and self.row_security:
            raise ValueError("forget_ticket needs the customer: this role sees a customer's rows only once named")
        with self.as_customer(checked_id("customer", customer, optional=True)) as db:
            return self.deleted(db, self.memories, "ticket_id = %s", checked_id("ticket id", ticket))

    def forget_customer(self, customer):
        """Delete the customer's memories and ledger entries in one transaction, so that no query sees one without
        the other, then their entries in LEDGER. Nobody waits: their bytes stay in the table files until
        erase_forgotten rewrites the partitions that hold them."""
        with self.as_customer(checked_id("customer", customer)) as db:
            self.deleted(db, self.ledger_table, "customer_id = %s", customer)
            forgotten = self.deleted(db, self.memories, "customer_id = %s", customer)
        forget_entries(customer)  # only once the database has forgotten them too
        return forgotten

    def log(self, entry):
        customer = checked_id("customer", entry["customer"])
        with self.as_customer(customer) as db:
            db.execute(sql.SQL("INSERT INTO {} (customer_id, entry) VALUES (%s, %s)").format(self.ledger_table),
                       (customer, json.dumps(entry)))

    def ledger(self):
        """Every ledger entry, in the order logged: the owner's view (a role under row-level security sees none)."""
        rows = self.execute(sql.SQL("SELECT entry::text FROM {} ORDER BY id").format(self.ledger_table))
        return [json.loads(entry) for (entry,) in rows]

    def saved(self):
        """(customer, ticket, P(remember), model) for every memory, in the order saved: the owner's view."""
        return self.execute(sql.SQL("SELECT customer_id, ticket_id, p_remember, model FROM {} ORDER BY id").format(
            self.memories))

    def close(self):
        self.pool.close()


# %% ../notebooks/09_many_app_servers.ipynb cell-14c
def erase_forgotten(url, schema="memory_cookbook"):
    """Rewrite each partition that holds forgotten rows (VACUUM FULL), one at a time, so that their bytes leave the
    table files: run by the tables' owner, say nightly. The partitions rewritten, by name."""
    to_erase = sql.Identifier(schema, "to_erase")
    with database_errors(url), psycopg.connect(url, autocommit=True) as db:
        noted = db.execute(sql.SQL("SELECT c.oid, c.relname, max(e.id) FROM {} e JOIN pg_class c ON c.oid = e.relation"
                                   " GROUP BY c.oid, c.relname ORDER BY c.relname").format(to_erase)).fetchall()
        for oid, name, last in noted:
            db.execute(sql.SQL("VACUUM FULL {}").format(sql.Identifier(schema, name)))
            db.execute(sql.SQL("DELETE FROM {} WHERE relation = %s::oid AND id <= %s").format(to_erase), (oid, last))
    return [name for _, name, _ in noted]
