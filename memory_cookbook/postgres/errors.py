"""What went wrong with the memory database, as one of four errors that say it: the server cannot be reached
(DatabaseUnavailable), it refused the connection (DatabaseRefused), a query failed (QueryFailed), or the store's tables
are not there yet (MemoryTablesMissing). The kind follows psycopg's exception class and PostgreSQL's SQLSTATE: only a
connection that failed or was lost is "cannot reach"; a statement psycopg would not send (a wrong placeholder, a value
it cannot encode) is a failed query. Each names the database with its password masked, gives the SQLSTATE where
PostgreSQL sent one, and keeps psycopg's error as its cause. Also the checks that refuse, before anything is written,
a value PostgreSQL cannot store."""

import os
import re
from contextlib import contextmanager

import psycopg
from psycopg_pool import PoolTimeout

from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["CONNECTION_LOST", "DATABASE_URL_VARIABLE", "DatabaseError", "DatabaseRefused", "DatabaseUnavailable",
           "ID_MAX_LENGTH", "KEY_VALUE_PASSWORD", "MemoryTablesMissing", "QueryFailed", "REFUSED",
           "ROW_SECURITY_REFUSED", "TOO_MANY_CONNECTIONS", "URL_PASSWORD", "WHAT_TO_DO", "checked_id",
           "checked_probability", "checked_text", "database_errors", "from_the_variable", "masked", "missing_tables",
           "passwords", "reason", "sqlstate_of", "translated"]

DATABASE_URL_VARIABLE = "COOKBOOK_DATABASE_URL"
ID_MAX_LENGTH = 200  # characters in a customer or ticket id: far above any id in the data, far below a page

# A password in a connection string, in its three forms: postgresql://user:PASSWORD@host/db, ...?password=PASSWORD,
# and the key-value form host=h password=PASSWORD (quoted if it holds spaces).
URL_PASSWORD = re.compile(r"(?P<keep>://[^/?#@]*?:)(?P<password>[^/?#]+)(?=@)")
KEY_VALUE_PASSWORD = re.compile(r"(?P<keep>\bpassword\s*=\s*)(?P<password>'(?:[^'\\]|\\.)*'|[^&\s]*)", re.IGNORECASE)

CONNECTION_LOST = ("08", "57P01", "57P02", "57P03")  # connection exceptions; the server shutting down or starting
REFUSED = ("28", "3D000")  # authorization (wrong password, no such role), no such database
TOO_MANY_CONNECTIONS = "53300"
WHAT_TO_DO = {
    "57014": "the statement ran past statement_timeout (PostgresStore's statement_timeout), or was canceled",
    "40P01": "two transactions waited for each other (a deadlock) and PostgreSQL ended this one: try again",
    "55P03": "a lock was not granted within lock_timeout (PostgresStore's lock_timeout): another session holds it;"
             " try again",
    "25P03": "the transaction sat idle past idle_in_transaction_session_timeout and the server closed its connection:"
             " keep a transaction's block short (the next call reconnects)",
    "40001": "a concurrent transaction changed the same rows: try again",
    "42501": "the URL's role lacks a right on the store: docs/own_postgres_server.md lists the GRANTs it needs",
}
ROW_SECURITY_REFUSED = ("row-level security refused the row: its customer_id is not the customer this transaction"
                        " named (the setting memory_cookbook.customer); the role has the right, the policy said no")


def masked(conninfo):
    """The connection string with every password in it shown as ***."""
    conninfo = URL_PASSWORD.sub(r"\g<keep>***", conninfo)
    return KEY_VALUE_PASSWORD.sub(r"\g<keep>***", conninfo)


def passwords(conninfo):
    """The passwords a connection string holds, as written and as libpq reads them, to take out of messages."""
    found = {match["password"] for pattern in (URL_PASSWORD, KEY_VALUE_PASSWORD) for match in
             pattern.finditer(conninfo)}
    try:
        found.add(psycopg.conninfo.conninfo_to_dict(conninfo).get("password") or "")
    except psycopg.ProgrammingError:  # a string libpq cannot parse: the patterns above are all there is
        pass
    return sorted((password for password in found if password and password != "***"), key=len, reverse=True)


def reason(error, conninfo):
    """psycopg's message on one line, with no password of the connection string in it."""
    text = " ".join(str(error).split())
    for password in passwords(conninfo):
        text = text.replace(password, "***")
    return text


class DatabaseError(ShownAsMessage, RuntimeError):
    """The memory database could not do what was asked. `database` is its URL, password masked; `sqlstate` is
    PostgreSQL's code for the error, or None where the server sent none (it was not reached)."""

    def __init__(self, message, database, sqlstate=None):
        super().__init__(message)
        self.database, self.sqlstate = database, sqlstate


class DatabaseUnavailable(DatabaseError):
    """The database server cannot be reached, or the connection to it was lost."""


class DatabaseRefused(DatabaseError):
    """The server answered and refused the connection: a wrong password, an unknown role or database."""


class QueryFailed(DatabaseError):
    """The connection worked and a statement failed: canceled, a deadlock, a lock timeout, a missing right..."""


class MemoryTablesMissing(QueryFailed):
    """The store's tables are not in this database and schema: create_memory_tables makes them, once."""


def sqlstate_of(error):
    return getattr(error, "sqlstate", None) or getattr(getattr(error, "diag", None), "sqlstate", None)


def from_the_variable(conninfo):
    """Where the URL came from, when it is COOKBOOK_DATABASE_URL's: a URL written in code needs no such hint."""
    if conninfo != os.environ.get(DATABASE_URL_VARIABLE):
        return ""
    return (f" (the URL comes from {DATABASE_URL_VARIABLE}; without that variable, the notebook starts a server of its"
            " own, which stops with the kernel)")


def translated(error, conninfo):
    """The DatabaseError that says what `error` (a psycopg error or the pool's timeout) means."""
    database, state, said = masked(conninfo), sqlstate_of(error), reason(error, conninfo)
    code = f" (SQLSTATE {state})" if state else ""
    if isinstance(error, PoolTimeout):
        return DatabaseUnavailable(
            f"No connection to the memory database at {database} within the pool's timeout: the server cannot be"
            f" reached, or this process holds every connection of its pool at once. psycopg_pool said: {said}",
            database)
    if state == TOO_MANY_CONNECTIONS or (state is None and ("too many connections" in said
                                                            or "too many clients" in said)):  # libpq: no code
        return DatabaseRefused(
            f"The memory database at {database} refused a new connection{code}: too many connections, for the server"
            " (max_connections) or for this role (its CONNECTION LIMIT). Use fewer app servers or smaller pools"
            f" (PostgresStore's max_connections), or raise the limit. PostgreSQL said: {said}", database, state)
    if state and state.startswith(REFUSED):
        return DatabaseRefused(
            f"The memory database at {database} refused the connection{code}: check the user, the password and the"
            f" database name in the URL. PostgreSQL said: {said}", database, state)
    if state is None and "authentication failed" in said:  # libpq reports some refusals without a code
        return DatabaseRefused(
            f"The memory database at {database} refused the connection: check the user and the password in the"
            f" URL. psycopg said: {said}", database)
    if (state is None and isinstance(error, psycopg.OperationalError)) or (state or "").startswith(CONNECTION_LOST):
        return DatabaseUnavailable(
            f"Cannot reach the memory database at {database}{code}. Check that its server is running and reachable"
            f"{from_the_variable(conninfo)}. psycopg said: {said}", database, state)
    if state is None:  # psycopg did not send it: the mistake is in the statement or its values, not the server
        return QueryFailed(f"A query on the memory database at {database} was not sent: psycopg refused it"
                           f" ({type(error).__name__}), a mistake in the statement or its parameters. psycopg said:"
                           f" {said}", database)
    hint = WHAT_TO_DO.get(state, "the statement and PostgreSQL's message say which")
    if state == "42501" and "row-level security" in said:
        hint = ROW_SECURITY_REFUSED
    return QueryFailed(f"A query on the memory database at {database} failed{code}: {hint}. PostgreSQL said: {said}",
                       database, state)


@contextmanager
def database_errors(conninfo):
    """psycopg's errors inside the block, raised as the DatabaseError that says what happened (psycopg's error kept
    as its cause)."""
    try:
        yield
    except (psycopg.Error, PoolTimeout) as error:
        raise translated(error, conninfo) from error


def missing_tables(conninfo, schema):
    return MemoryTablesMissing(
        f"The memory store's tables are not in schema {schema!r} of the database at {masked(conninfo)}. Create them"
        f" once, as a role that may create tables there: create_memory_tables(url, schema={schema!r}) from"
        " memory_cookbook.from_notebooks.postgres_store, or `python scripts/create_memory_tables.py` with the URL in"
        f" {DATABASE_URL_VARIABLE}.", masked(conninfo), "42P01")


def checked_text(field, value, max_length=None, optional=False):
    """`value`, if PostgreSQL can store it in a TEXT column as `field`: a string without NUL characters, non-empty,
    at most `max_length` characters; None passes when `optional`. Otherwise a ValueError naming the field."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{field} must be a non-empty string; got {value!r}")
    if "\x00" in value:
        raise ValueError(f"{field} holds a NUL character (\\x00), which PostgreSQL text cannot store: {value!r}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:  # a lone surrogate, such as "\ud800": no UTF-8 text holds it
        raise ValueError(f"{field} holds {value[error.start]!r} at character {error.start}, which is not a"
                         f" character UTF-8 (and PostgreSQL text) can store: {value!r}") from None
    if max_length is not None and len(value) > max_length:
        raise ValueError(f"{field} is {len(value):,} characters long; the store takes at most {max_length}")
    return value


def checked_id(field, value, optional=False):
    """A customer or ticket id the store can keep: see checked_text, with ID_MAX_LENGTH."""
    return checked_text(field, value, ID_MAX_LENGTH, optional)


def checked_probability(field, value):
    """`value`, if it is a probability: a real number from 0 to 1 (NaN is not). Otherwise a ValueError naming the
    field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{field} must be a number from 0 to 1; got {value!r}")
    return value
