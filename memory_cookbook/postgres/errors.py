"""What went wrong with the memory database, as one of four errors that say it: the server cannot be reached
(DatabaseUnavailable), it refused the connection (DatabaseRefused), a query failed (QueryFailed), or the store's tables
are not there yet (MemoryTablesMissing). The kind follows psycopg's exception class and PostgreSQL's SQLSTATE: only a
connection that failed or was lost is "cannot reach"; a statement psycopg would not send (a wrong placeholder, a value
it cannot encode) is a failed query. Each names the database with its password masked, gives the SQLSTATE where
PostgreSQL sent one, and keeps psycopg's error as its cause; each is a psycopg error too (the two about the connection a
psycopg.OperationalError). Also the checks that refuse, before anything is written, a value PostgreSQL cannot store."""

import os
import re
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import PoolTimeout

from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["CONNECTION_LOST", "DATABASE_URL_VARIABLE", "DatabaseError", "DatabaseRefused", "DatabaseUnavailable",
           "ID_MAX_LENGTH", "KEY_VALUE", "MemoryTablesMissing", "QueryFailed", "REFUSED", "ROW_SECURITY_REFUSED",
           "TOO_MANY_CONNECTIONS", "URI_SCHEMES", "WHAT_TO_DO", "checked_id", "checked_text", "database_errors",
           "earlier_store", "from_the_variable", "masked", "masking", "missing_tables", "password_spans", "passwords",
           "reason", "sqlstate_of", "translated"]

DATABASE_URL_VARIABLE = "COOKBOOK_DATABASE_URL"
ID_MAX_LENGTH = 200  # characters in a customer or ticket id: far above any id in the data, far below a page

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
    "42501": "the URL's role lacks a right on the store. A role given an earlier version's rights gets this version's"
             " when the owner runs grant_row_rights(url, role) again (or `python scripts/create_memory_tables.py"
             " --grant ROLE`); docs/own_postgres_server.md lists the GRANTs",
}
ROW_SECURITY_REFUSED = ("row-level security refused the row: its customer_id is not the customer this transaction"
                        " named (the setting memory_cookbook.customer); the role has the right, the policy said no")


URI_SCHEMES = ("postgresql://", "postgres://")
# One key = value pair of libpq's key-value form: a value in quotes (backslash escapes), or up to the next blank.
KEY_VALUE = re.compile(r"\s*(?P<key>[^\s=]+)\s*=\s*(?P<value>'(?:[^'\\]|\\.)*'|(?:[^\s\\]|\\.)*)")


def password_spans(conninfo: str) -> list[tuple[int, int]]:
    """Where `conninfo` writes a password, read the way libpq reads it (its conninfo_uri_parse_options and
    conninfo_parse): [(start, end)]. In a URL, the user information runs to the first @ before any /, and the password
    from its first colon (so it may hold #, ?, a colon); then any password=... among the parameters after ?. In the
    key-value form, every password = value."""
    if conninfo.startswith(URI_SCHEMES):
        start = conninfo.index("://") + 3
        spans, after_user = [], start
        at = re.search(r"[@/]", conninfo[start:])
        if at and at.group() == "@":
            after_user = start + at.start() + 1
            user_info = conninfo[start:after_user - 1]
            if ":" in user_info:
                spans.append((start + user_info.index(":") + 1, after_user - 1))
        query = conninfo.find("?", after_user)
        position = query + 1 if query >= 0 else len(conninfo)
        while 0 < position <= len(conninfo) and query >= 0:
            end = conninfo.find("&", position)
            end = len(conninfo) if end < 0 else end
            key, equals, _ = conninfo[position:end].partition("=")
            if equals and urllib.parse.unquote(key) == "password":
                spans.append((position + len(key) + 1, end))
            position = end + 1
        return spans
    spans, position = [], 0
    while position < len(conninfo.rstrip()):
        pair = KEY_VALUE.match(conninfo, position)
        if not pair or pair.end() == position:
            break  # not libpq's form: the check in masking() decides
        if pair["key"] == "password":
            spans.append(pair.span("value"))
        position = pair.end()
    return spans


def masking(conninfo: str) -> tuple[str, list[str]]:
    """(the connection string with its password shown as ***, the passwords as written in it). When libpq would read
    the string otherwise than as masked here, the whole string is given again from what libpq reads, in the key-value
    form, its password ***."""
    spans = password_spans(conninfo)
    parts: list[str] = []
    written: list[str] = []
    last = 0
    for start, end in sorted(span for span in spans if span[0] < span[1]):  # an empty password hides nothing
        parts += [conninfo[last:start], "***"]
        written.append(conninfo[start:end])
        last = end
    shown = "".join(parts) + conninfo[last:]
    try:
        read = psycopg.conninfo.conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:  # libpq cannot parse it, so cannot connect with it: masked as written
        return shown, written
    if read.get("password"):
        written.append(str(read["password"]))
        try:
            masked_read = psycopg.conninfo.conninfo_to_dict(shown)
        except psycopg.ProgrammingError:
            masked_read = None
        if masked_read != {**read, "password": "***"}:
            shown = psycopg.conninfo.make_conninfo("", **{**read, "password": "***"})
    return shown, written


def masked(conninfo: str) -> str:
    """The connection string with the password libpq would read in it shown as ***, however it is written (in a URL's
    user information, percent-encoded or not, as ?password=, or as password=... in the key-value form)."""
    return masking(conninfo)[0]


def passwords(conninfo: str) -> list[str]:
    """The passwords a connection string holds, as written and as libpq reads them, to take out of messages."""
    return sorted({password for password in masking(conninfo)[1] if password and password != "***"}, key=len,
                  reverse=True)


def reason(error: BaseException, conninfo: str) -> str:
    """psycopg's message on one line, with no password of the connection string in it."""
    text = " ".join(str(error).split())
    for password in passwords(conninfo):
        text = text.replace(password, "***")
    return text


class DatabaseError(ShownAsMessage, psycopg.DatabaseError):
    """The memory database could not do what was asked. `database` is its URL, password masked; `sqlstate` is
    PostgreSQL's code for the error, or None where the server sent none (it was not reached). A psycopg error: a desk's
    `except psycopg.DatabaseError` (or psycopg.OperationalError, for the two that are about the connection) catches it;
    psycopg's own error is its __cause__."""

    def __init__(self, message: str, database: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.database, self.sqlstate = database, sqlstate


class DatabaseUnavailable(DatabaseError, psycopg.OperationalError):
    """The database server cannot be reached, or the connection to it was lost."""


class DatabaseRefused(DatabaseError, psycopg.OperationalError):
    """The server answered and refused the connection: a wrong password, an unknown role or database."""


class QueryFailed(DatabaseError):
    """The connection worked and a statement failed: canceled, a deadlock, a lock timeout, a missing right..."""


class MemoryTablesMissing(QueryFailed, psycopg.ProgrammingError):
    """The store's tables are not in this database and schema: create_memory_tables makes them, once."""


def sqlstate_of(error: BaseException) -> str | None:
    return getattr(error, "sqlstate", None) or getattr(getattr(error, "diag", None), "sqlstate", None)


def from_the_variable(conninfo: str) -> str:
    """Where the URL came from, when it is COOKBOOK_DATABASE_URL's: a URL written in code needs no such hint."""
    if conninfo != os.environ.get(DATABASE_URL_VARIABLE):
        return ""
    return (f" (the URL comes from {DATABASE_URL_VARIABLE}; without that variable, the notebook starts a server of its"
            " own, which stops with the kernel)")


def translated(error: BaseException, conninfo: str) -> DatabaseError:
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
def database_errors(conninfo: str) -> Iterator[None]:
    """psycopg's errors inside the block, raised as the DatabaseError that says what happened (psycopg's error kept
    as its cause)."""
    try:
        yield
    except DatabaseError:  # said already
        raise
    except (psycopg.Error, PoolTimeout) as error:
        raise translated(error, conninfo) from error


def missing_tables(conninfo: str, schema: str) -> MemoryTablesMissing:
    return MemoryTablesMissing(
        f"The memory store's tables are not in schema {schema!r} of the database at {masked(conninfo)}. Create them"
        f" once, as a role that may create tables there: create_memory_tables(url, schema={schema!r}) from"
        " memory_cookbook.from_notebooks.postgres_store, or `python scripts/create_memory_tables.py` with the URL in"
        f" {DATABASE_URL_VARIABLE}.", masked(conninfo), "42P01")


def checked_text(field: str, value: object, max_length: int | None = None, optional: bool = False) -> Any:
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


def checked_id(field: str, value: object, optional: bool = False) -> Any:
    """A customer or ticket id the store can keep: see checked_text, with ID_MAX_LENGTH."""
    return checked_text(field, value, ID_MAX_LENGTH, optional)


def earlier_store(conninfo: str, schema: str) -> MemoryTablesMissing:
    """The store's tables are there, but not every function this version calls: an earlier version made them."""
    return MemoryTablesMissing(
        f"The memory store in schema {schema!r} of the database at {masked(conninfo)} was made by an earlier version"
        " of the cookbook: it lacks functions this version calls. Its owner upgrades it once, with"
        f" create_memory_tables(url, schema={schema!r}) then grant_row_rights(url, role, schema={schema!r}), or"
        " `python scripts/create_memory_tables.py --grant ROLE` (docs/own_postgres_server.md, \"Upgrading a store an"
        " earlier version made\").", masked(conninfo), "42883")
