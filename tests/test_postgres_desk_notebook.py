"""Notebook 09 run on a support desk's own server, as docs/own_postgres_server.md describes, leaves the desk's store
as it found it: the desk's owner made its tables with create_memory_tables and holds memories, ledger entries and a
note to erase of its own customers; 09 runs top to bottom with the owner's URL alone and, at the same time and in a
lesson schema of its own, with the app role's URL too. Afterwards every relation of the desk's schema is there with
the same files, rights and policies, its rows are byte-identical, and nothing 09 made is left. One kernel per run, on
the session's server (slow: seconds)."""

import os
from concurrent.futures import ThreadPoolExecutor

import nbformat
import psycopg
import pytest
from cookbook_tools import execution
from cookbook_tools.paths import NOTEBOOKS
from psycopg import sql

from conftest import APP_ROLE
from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE
from memory_cookbook.postgres.lesson_database import APP_DATABASE_URL_VARIABLE, LESSON_SCHEMA, LESSON_SCHEMA_VARIABLE
from memory_cookbook.from_notebooks.postgres_store import PostgresStore, create_memory_tables, grant_row_rights

pytestmark = pytest.mark.slow
DESK_SCHEMA = "memory_cookbook"  # the desk's store, under the name the guide gives it
NOTEBOOK = NOTEBOOKS / "09_many_app_servers.ipynb"

RELATIONS = """
SELECT c.relname, c.relkind, c.relfilenode, c.relacl::text, c.relrowsecurity, c.relhastriggers,
       (SELECT string_agg(p.polname || ':' || pg_get_expr(p.polqual, p.polrelid), ', ' ORDER BY p.polname)
        FROM pg_policy p WHERE p.polrelid = c.oid),
       (SELECT string_agg(pg_get_constraintdef(k.oid), ', ' ORDER BY k.conname) FROM pg_constraint k
        WHERE k.conrelid = c.oid)
FROM pg_class c WHERE c.relnamespace = %s::regnamespace ORDER BY c.relname
"""


def desk_state(url):
    """Everything of the desk's schema that 09 could change: each relation (its file, rights, policy, constraints),
    each function, and the text of every row of its tables."""
    with psycopg.connect(url) as db:
        relations = db.execute(RELATIONS, (DESK_SCHEMA,)).fetchall()
        functions = db.execute("SELECT p.proname, md5(p.prosrc), p.proacl::text FROM pg_proc p"
                               " WHERE p.pronamespace = %s::regnamespace ORDER BY 1", (DESK_SCHEMA,)).fetchall()
        rows = {name: db.execute(sql.SQL("SELECT t::text FROM {} t ORDER BY t::text").format(
            sql.Identifier(DESK_SCHEMA, name))).fetchall() for name in ("memories", "ledger", "to_erase")}
        schemas = db.execute("SELECT nspname FROM pg_namespace ORDER BY 1").fetchall()
        roles = db.execute("SELECT rolname FROM pg_roles ORDER BY 1").fetchall()
    return {"relations": relations, "functions": functions, "rows": rows, "schemas": schemas, "roles": roles}


@pytest.fixture
def desk(postgres_server, app_role_url):
    """The desk's store on the session's server: its tables, its app role's rights, five memories of its own
    customers with their ledger entries, and one forgotten memory noted for erasure. Dropped afterwards."""
    url = postgres_server.url
    create_memory_tables(url, DESK_SCHEMA)
    grant_row_rights(url, APP_ROLE, DESK_SCHEMA)
    with PostgresStore(url, schema=DESK_SCHEMA) as store:
        for number in range(1, 7):
            customer = f"D-{number}"
            store.save(customer, {"request": {"customer": {"id": customer}, "ticket": {"id": f"DT-{number}"}},
                                  "jev_answered": {"q": "a"}}, p_remember=0.9, model="desk")
            store.log({"customer": customer, "ticket": f"DT-{number}"})
        store.forget_ticket("D-6", "DT-6")  # a note in to_erase, which 09's erase step must leave for the desk's own
    try:
        yield url
    finally:
        with psycopg.connect(url, autocommit=True) as db:
            for schema in (DESK_SCHEMA, LESSON_SCHEMA, OTHER_LESSON_SCHEMA):  # and whatever a failed run left
                db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def run_notebook_09(settings):
    """Notebook 09, top to bottom, in one kernel with these settings: {cell id: its printed text}."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in (DATABASE_URL_VARIABLE, APP_DATABASE_URL_VARIABLE, LESSON_SCHEMA_VARIABLE)}
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    execution.execute(notebook, env={**environment, **settings})
    return {cell.id: "".join(output.get("text", "") for output in cell.get("outputs", [])) for cell in notebook.cells}


REFUSALS = ("the app role cannot read a partition by name", "the app role cannot drop a table",
            "the app role cannot write to_erase", "the app role cannot lock a table")
CLEANUP = "c531d503"  # the last cell, which drops what 09 made
SEEN = "cell-31c"  # the cell that counts what the app role sees
REFUSED = "app-role-refusals"  # the cell that shows what the app role is refused


OTHER_LESSON_SCHEMA = "lesson_beside_the_desk"  # the second run's, named by its setting: the two run side by side


def test_notebook_09_on_a_desks_server_leaves_the_desks_store_as_it_found_it(desk, app_role_url):
    before = desk_state(desk)
    assert len(before["rows"]["memories"]) == 5 and len(before["rows"]["to_erase"]) == 1
    with ThreadPoolExecutor(2) as runs:  # one kernel each, at once: each in a lesson schema of its own
        owner_alone = runs.submit(run_notebook_09, {DATABASE_URL_VARIABLE: desk})
        with_app_role = runs.submit(run_notebook_09, {DATABASE_URL_VARIABLE: desk, APP_DATABASE_URL_VARIABLE:
                                                      app_role_url, LESSON_SCHEMA_VARIABLE: OTHER_LESSON_SCHEMA})
        printed, printed_with_app_role = owner_alone.result(), with_app_role.result()
    assert desk_state(desk) == before
    assert printed[SEEN].startswith("skipped: no separate app role given")
    assert printed[REFUSED].startswith("skipped: no separate app role given")
    assert not any(refusal in printed[REFUSED] for refusal in REFUSALS)
    assert f"schema {LESSON_SCHEMA}, with its " in printed[CLEANUP]
    printed = printed_with_app_role
    assert all(refusal in printed[REFUSED] for refusal in REFUSALS) and "naming no customer: 0" in printed[SEEN]
    assert f"schema {OTHER_LESSON_SCHEMA}, with its " in printed[CLEANUP]
