"""Where notebook 09 works on a PostgreSQL server, and how it leaves a server it did not start as it found it: in a
schema of its own (COOKBOOK_LESSON_SCHEMA, or memory_cookbook_lesson) that it creates, never one that was there
before, and drops at its end; as an app role that is really another role than the owner
(COOKBOOK_APP_DATABASE_URL), or it says why it cannot show what that role is refused. Also what 09 shows of that
schema from the server's catalog (its partitioned tables, a role's rights) and from the server's own files (which of
them, and whether the write-ahead log, still hold a text), which takes a superuser."""

import os
from typing import Any, NamedTuple

import psycopg
from psycopg import sql

from memory_cookbook.postgres.errors import database_errors, masked
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["APP_DATABASE_URL_VARIABLE", "AppRole", "CREATED", "DROPPED", "LESSON_SCHEMA", "LESSON_SCHEMA_VARIABLE",
           "NOT_A_SUPERUSER", "PARTITIONED_TABLES", "ROLE_RIGHTS", "SCHEMA_FILES", "SchemaInUse", "app_role",
           "drop_lesson_schema", "files_holding", "lesson_schema", "one", "partitioned_tables", "reads_server_files",
           "role_rights", "write_ahead_log_holds"]

APP_DATABASE_URL_VARIABLE = "COOKBOOK_APP_DATABASE_URL"
LESSON_SCHEMA_VARIABLE = "COOKBOOK_LESSON_SCHEMA"
LESSON_SCHEMA = "memory_cookbook_lesson"
CREATED: set[tuple[str, str]] = set()  # (URL, schema) this process made, or found on its own server: it drops them
DROPPED: dict[tuple[str, str], str] = {}  # (URL, schema) → what was dropped, said again if asked again


class SchemaInUse(ShownAsMessage, RuntimeError):
    """The lesson's schema is already in the database, and this process did not create it."""


def one(row: tuple[Any, ...] | None) -> tuple[Any, ...]:
    """The row of a query that returns one row whatever the data (a catalog function, an aggregate)."""
    assert row is not None, "the query returns a row whatever the data"
    return row


def lesson_schema(url: str, own_server: bool, name: str = LESSON_SCHEMA) -> str:
    """The schema notebook 09 (or 10, under another `name`) works in, created now by this process, or earlier by it.
    On a server the notebook did not start, a schema of that name that was already there is refused: the notebook
    writes, erases and drops only what it made. On its own server (`own_server`), everything is the notebook's."""
    schema = os.environ.get(LESSON_SCHEMA_VARIABLE) or name
    with database_errors(url), psycopg.connect(url, autocommit=True) as db:
        there = db.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
        if there and not own_server and (url, schema) not in CREATED:
            raise SchemaInUse(
                f"Schema {schema!r} is already in the database at {masked(url)}, and this kernel did not create it:"
                " notebooks 09 and 10 work only in a schema they create, so that they change nothing of yours. If an"
                f" earlier run left it (a kernel stopped before the last cell), drop it as its owner (DROP SCHEMA"
                f" {schema} CASCADE); or set {LESSON_SCHEMA_VARIABLE} to a name no schema has.")
        if not there:
            db.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        CREATED.add((url, schema))
        DROPPED.pop((url, schema), None)
    return schema


class AppRole(NamedTuple):
    url: str  # what the app servers connect with
    name: str  # the role they connect as
    not_separate: str | None  # why that role shows nothing of what the app role is refused; None when it does


def app_role(owner_url: str, app_url: str | None) -> "AppRole":
    """The app servers' role: `app_url`'s (None: the owner's, at `owner_url`). It is separate when it is another role
    than the owner, neither a superuser nor one that bypasses row-level security, nor a member of the owner's role:
    only then does it show what row-level security and the rights refuse."""
    with database_errors(owner_url), psycopg.connect(owner_url) as db:
        owner = one(db.execute("SELECT current_user").fetchone())[0]
    if app_url is None:
        return AppRole(owner_url, owner, f"no separate app role given ({APP_DATABASE_URL_VARIABLE} is not set), so"
                                         f" the app servers connect as the owner, {owner}")
    with database_errors(app_url), psycopg.connect(app_url) as db:
        role, superuser, bypasses, member = one(db.execute(
            "SELECT rolname, rolsuper, rolbypassrls, pg_has_role(rolname, %s, 'MEMBER') FROM pg_roles"
            " WHERE rolname = current_user", (owner,)).fetchone())
    why = ("it is the owner" if role == owner else "it is a superuser" if superuser else
           "it bypasses row-level security" if bypasses else f"it is a member of the owner's role, {owner}"
           if member else None)
    return AppRole(app_url, role, why and f"{APP_DATABASE_URL_VARIABLE}'s role, {role}, is no separate app role:"
                                          f" {why}")


def drop_lesson_schema(url: str, schema: str) -> str:
    """Drop the schema that lesson_schema created, with everything in it: what was dropped, in words. Asked again,
    the same words (nothing more is dropped); a schema this process did not create is left alone."""
    key = (url, schema)
    if key in DROPPED:
        return DROPPED[key]
    if key not in CREATED:
        return f"nothing: schema {schema} was not made by this notebook"
    with database_errors(url), psycopg.connect(url, autocommit=True) as db:
        relations, functions = db.execute(
            "SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = n.oid),"
            " (SELECT count(*) FROM pg_proc WHERE pronamespace = n.oid) FROM pg_namespace n WHERE nspname = %s",
            (schema,)).fetchone() or (0, 0)
        db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    CREATED.discard(key)
    DROPPED[key] = (f"schema {schema}, with its {relations} relation{'s' * (relations != 1)} and {functions}"
                    f" function{'s' * (functions != 1)}")
    return DROPPED[key]


PARTITIONED_TABLES = """
SELECT c.relname, count(p.inhrelid), c.relrowsecurity FROM pg_class c LEFT JOIN pg_inherits p ON p.inhparent = c.oid
WHERE c.relkind = 'p' AND c.relnamespace = %s::regnamespace GROUP BY 1, 3 ORDER BY 1
"""
ROLE_RIGHTS = """
SELECT privileges, string_agg(name, ', ' ORDER BY name) FROM (
    SELECT table_name AS name, string_agg(privilege_type, ', ' ORDER BY privilege_type) AS privileges
    FROM information_schema.role_table_grants WHERE grantee = %(role)s AND table_schema = %(schema)s GROUP BY 1
    UNION ALL
    SELECT routine_name, privilege_type FROM information_schema.role_routine_grants
    WHERE grantee = %(role)s AND routine_schema = %(schema)s) AS granted
GROUP BY 1 ORDER BY 1
"""


def partitioned_tables(url: str, schema: str) -> list[tuple[str, int, bool]]:
    """[(table, how many partitions, whether row-level security is on)] for each partitioned table of `schema`."""
    with database_errors(url), psycopg.connect(url) as db:
        return db.execute(PARTITIONED_TABLES, (schema,)).fetchall()


def role_rights(url: str, role: str, schema: str) -> list[tuple[str, str]]:
    """What `role` was granted in `schema`, on its tables and functions: [(privileges, "name, name")], the objects
    with the same privileges together. A partition granted by name is listed under its own name."""
    with database_errors(url), psycopg.connect(url) as db:
        return db.execute(ROLE_RIGHTS, {"role": role, "schema": schema}).fetchall()


# The files of every table and index of a schema, and of its tables' TOAST tables (where large values go) and their
# indexes, as paths in the server's data folder.
SCHEMA_FILES = """
SELECT c.relname, pg_relation_filepath(c.oid) FROM pg_class c
WHERE c.relnamespace = %(schema)s::regnamespace AND c.relkind IN ('r', 'i')
UNION ALL
SELECT c.relname || ' (TOAST)', pg_relation_filepath(c.reltoastrelid) FROM pg_class c
WHERE c.relnamespace = %(schema)s::regnamespace AND c.reltoastrelid <> 0
UNION ALL
SELECT c.relname || ' (TOAST index)', pg_relation_filepath(x.indexrelid) FROM pg_class c
JOIN pg_index x ON x.indrelid = c.reltoastrelid WHERE c.relnamespace = %(schema)s::regnamespace
"""
NOT_A_SUPERUSER = "(skipped: reading the server's files takes a superuser, and this URL's user is not one)"


def reads_server_files(url: str) -> bool:
    """Whether the URL's role may read the server's files (CHECKPOINT, pg_read_binary_file, pg_ls_waldir): here,
    whether it is a superuser."""
    with database_errors(url), psycopg.connect(url) as db:
        return bool(one(db.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone())[0])


def files_holding(url: str, schema: str, texts: list[str]) -> dict[str, list[str]]:
    """{file: which of `texts` its bytes hold} for each file of `schema`'s tables, indexes and TOAST tables that holds
    any, after a checkpoint has written every changed page to the files. Needs a superuser."""
    with database_errors(url), psycopg.connect(url, autocommit=True) as db:
        db.execute("CHECKPOINT")
        found: dict[str, list[str]] = {}
        for name, path in sorted(db.execute(SCHEMA_FILES, {"schema": schema}).fetchall()):
            if path is None:  # a relation with no file of its own
                continue
            held = bytes(one(db.execute("SELECT pg_read_binary_file(%s)", (path,)).fetchone())[0])
            if holds := [text for text in texts if text.encode() in held]:
                found[name] = holds
        return found


def write_ahead_log_holds(url: str, text: str) -> bool:
    """Whether any segment of the server's write-ahead log (pg_wal/) holds `text`. Needs a superuser."""
    with database_errors(url), psycopg.connect(url) as db:
        return bool(one(db.execute(
            "SELECT coalesce(bool_or(position(%s::bytea IN pg_read_binary_file('pg_wal/' || name)) > 0), false)"
            " FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{24}$'", (text.encode(),)).fetchone())[0])
