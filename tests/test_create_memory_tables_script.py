"""scripts/create_memory_tables.py, run as an owner would, with a password libpq reads whole from a URL although it
holds a #: it makes the tables and grants the app role the store's functions, and says where without the password;
--erase-forgotten prints what it rewrote, the notes it skipped and the files no relation names with the command that
removes them, and exits 1 when any of those is left (0 when none). On the session's server (slow: seconds)."""

import os
import subprocess
import sys

import psycopg
import pytest
from conftest import APP_ROLE
from cookbook_tools.paths import ROOT
from psycopg import sql

from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE
from memory_cookbook.postgres.lesson_database import role_rights

pytestmark = pytest.mark.slow
PASSWORD, SCHEMA = "Desk#Pw-4471x", "made_by_the_script"


@pytest.fixture
def owner_url(postgres_server, app_role_url):
    """A superuser that must give its password, one with a # (the server trusts every other role)."""
    hba = postgres_server.folder / "pg_hba.conf"
    rules = hba.read_text()
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute(sql.SQL("CREATE ROLE cookbook_owner LOGIN SUPERUSER PASSWORD {}").format(sql.Literal(PASSWORD)))
        hba.write_text("local all cookbook_owner scram-sha-256\n" + rules)
        db.execute("SELECT pg_reload_conf()")
    yield postgres_server.url.replace("postgres:@", f"cookbook_owner:{PASSWORD}@")
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(SCHEMA)))
        db.execute("DROP OWNED BY cookbook_owner")
        db.execute("DROP ROLE cookbook_owner")
        hba.write_text(rules)
        db.execute("SELECT pg_reload_conf()")


def script(url, *arguments):
    return subprocess.run([sys.executable, "scripts/create_memory_tables.py", "--schema", SCHEMA, *arguments],
                          cwd=ROOT, env={**os.environ, DATABASE_URL_VARIABLE: url}, capture_output=True, text=True,
                          timeout=120)


def test_the_script_makes_the_tables_grants_the_app_role_and_erases_saying_what_it_left(owner_url, postgres_server):
    made = script(owner_url, "--grant", APP_ROLE)
    assert (made.returncode, made.stderr) == (0, "")
    masked = owner_url.replace(PASSWORD, "***")
    assert made.stdout == f"the tables of schema {SCHEMA} are in {masked}; {APP_ROLE} may use them\n"
    assert role_rights(owner_url, APP_ROLE, SCHEMA) == [
        ("EXECUTE", "forget_customer, forget_ticket, invalidate_memory, ledger_entries, log_entry, memory_records,"
                    " recall_memories, restore_customer, save_memory")]
    with PostgresStore(owner_url, schema=SCHEMA) as store:
        store.save("C-A", {"request": {"ticket": {"id": "T-1"}}, "jev_answered": {}}, p_remember=0.9, model="m")
        store.forget_customer("C-A")
        partition = store.execute(sql.SQL("SELECT relation::text FROM {}").format(store.to_erase))[0][0]
        store.execute(sql.SQL("INSERT INTO {} (relation) VALUES ('pg_class')").format(store.to_erase))
        database = store.execute("SELECT oid FROM pg_database WHERE datname = current_database()")[0][0]
    left = postgres_server.folder / "base" / str(database) / "3999999997"
    try:
        left.write_bytes(b"a copy of other customers' rows")
        erased = script(owner_url, "--erase-forgotten")
    finally:
        left.unlink(missing_ok=True)
    assert erased.returncode == 1 and PASSWORD not in erased.stdout + erased.stderr
    assert erased.stdout.splitlines() == [
        f"rewrote: {partition.split('.')[1]}",
        f"skipped, as no partition of {SCHEMA}'s tables (the owner may delete these notes from {SCHEMA}.to_erase):"
        " pg_class",
        "files no table names, such as a crash during a rewrite leaves (they may hold forgotten customers' rows; a"
        " table another session was making meanwhile has such files too: check again with nothing else running):"
        f" {left}",
        f"to remove them, stop the server, then run: rm -- {left}"]
    with psycopg.connect(owner_url, autocommit=True) as db:
        db.execute(sql.SQL("DELETE FROM {}").format(sql.Identifier(SCHEMA, "to_erase")))
    assert script(owner_url, "--erase-forgotten").returncode == 0
