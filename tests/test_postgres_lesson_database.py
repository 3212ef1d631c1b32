"""memory_cookbook/postgres/lesson_database.py: notebook 09 on a server it did not start works only in a schema it
creates, and drops only that; a refusal is shown only as a role that is really another than the owner; what 09 shows
of its schema (the partitioned tables, a role's rights, the files and the write-ahead log that hold a text) is what the
server holds. On the session's server (slow: it takes seconds to start)."""

import secrets

import psycopg
import pytest
from psycopg import sql

from conftest import APP_ROLE, TEST_PARTITIONS
from memory_cookbook.postgres import lesson_database
from memory_cookbook.postgres.lesson_database import (SchemaInUse, app_role, drop_lesson_schema, files_holding,
                                                      lesson_schema, partitioned_tables, reads_server_files,
                                                      role_rights, write_ahead_log_holds)
from memory_cookbook.from_notebooks.postgres_store import erase_forgotten

pytestmark = pytest.mark.slow


def schemas(url):
    with psycopg.connect(url) as db:
        return {name for (name,) in db.execute("SELECT nspname FROM pg_namespace")}


def test_a_schema_that_was_there_is_refused_and_left_and_its_own_is_made_then_dropped(postgres_server, monkeypatch):
    url = postgres_server.url
    monkeypatch.setenv(lesson_database.LESSON_SCHEMA_VARIABLE, "a_desks_schema")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE SCHEMA a_desks_schema")
        db.execute("CREATE TABLE a_desks_schema.kept AS SELECT 1 AS row")
    try:
        with pytest.raises(SchemaInUse, match="'a_desks_schema' is already in the database"):
            lesson_schema(url, own_server=False)
        assert drop_lesson_schema(url, "a_desks_schema").startswith("nothing")
        assert "a_desks_schema" in schemas(url)
    finally:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("DROP SCHEMA a_desks_schema CASCADE")
    monkeypatch.setenv(lesson_database.LESSON_SCHEMA_VARIABLE, "lessons_own")
    assert lesson_schema(url, own_server=False) == lesson_schema(url, own_server=False) == "lessons_own"  # run twice
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE TABLE lessons_own.made AS SELECT 1 AS row")
    said = drop_lesson_schema(url, "lessons_own")
    assert said == drop_lesson_schema(url, "lessons_own") == "schema lessons_own, with its 1 relation and 0 functions"
    assert "lessons_own" not in schemas(url)


def test_a_second_run_in_one_kernel_makes_its_schema_anew_and_drops_it_again(postgres_server, monkeypatch):
    url = postgres_server.url
    monkeypatch.setenv(lesson_database.LESSON_SCHEMA_VARIABLE, "lesson_run_twice")
    for run in (1, 2):  # the notebook's first cell to its last, twice in one kernel
        assert lesson_schema(url, own_server=False) == "lesson_run_twice"
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(f"CREATE TABLE lesson_run_twice.made_{run} AS SELECT 1 AS row")
        assert drop_lesson_schema(url, "lesson_run_twice") == ("schema lesson_run_twice, with its 1 relation and 0"
                                                                " functions")
        assert "lesson_run_twice" not in schemas(url)


@pytest.fixture
def superuser_url(postgres_server):
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute("CREATE ROLE cookbook_super LOGIN SUPERUSER")
    yield psycopg.conninfo.make_conninfo(postgres_server.url, user="cookbook_super")
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute("DROP ROLE cookbook_super")


def test_only_another_role_than_the_owner_is_a_separate_app_role(postgres_server, app_role_url, superuser_url):
    url = postgres_server.url
    assert app_role(url, None) == (url, "postgres", "no separate app role given (COOKBOOK_APP_DATABASE_URL is not"
                                                    " set), so the app servers connect as the owner, postgres")
    assert app_role(url, url).not_separate.endswith("it is the owner")
    assert app_role(url, superuser_url).not_separate.endswith("it is a superuser")
    assert app_role(url, app_role_url) == (app_role_url, "cookbook_app", None)
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(sql.SQL("GRANT postgres TO cookbook_app"))
        try:
            assert app_role(url, app_role_url).not_separate.endswith("a member of the owner's role, postgres")
        finally:
            db.execute(sql.SQL("REVOKE postgres FROM cookbook_app"))


def test_the_catalog_shows_each_partitioned_table_and_what_the_role_was_granted_a_partition_included(postgres_store,
                                                                                                        app_store):
    url, schema = postgres_store.url, postgres_store.schema  # app_store: the app role, given its row rights
    assert partitioned_tables(url, schema) == [("ledger", TEST_PARTITIONS, True), ("memories", TEST_PARTITIONS, True)]
    rights = [("EXECUTE", "forget_customer, forget_ticket, invalidate_memory, ledger_entries, log_entry,"
                          " memory_records, recall_memories, restore_customer, save_memory")]
    assert role_rights(url, APP_ROLE, schema) == rights
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(sql.SQL("GRANT SELECT ON {} TO {}").format(sql.Identifier(schema, "memories_00"),
                                                             sql.Identifier(APP_ROLE)))
    assert role_rights(url, APP_ROLE, schema) == [*rights, ("SELECT", "memories_00")]


def test_a_saved_text_stays_in_the_files_after_a_forget_until_the_erase_and_in_the_log_after_it(postgres_store,
                                                                                                app_role_url):
    url, schema, customer = postgres_store.url, postgres_store.schema, "C-FILES"
    name, large = f"Name-{secrets.token_hex(8)}", f"Large-{secrets.token_hex(8)}"
    bulk = secrets.token_hex(4000)  # 8,000 characters that do not compress: stored in the TOAST table
    postgres_store.save(customer, {"request": {"customer": {"id": customer, "name": name}, "ticket": {"id": "T-1"}},
                                   "jev_answered": {"note": bulk[:4000] + large + bulk[4000:]}}, 0.9, "test")
    saved = files_holding(url, schema, [name, large])
    assert any(file.startswith("memories_") and name in held for file, held in saved.items()), saved
    assert any(file.endswith("(TOAST)") and large in held for file, held in saved.items()), saved
    postgres_store.forget_customer(customer)
    assert files_holding(url, schema, [name, large]) == saved  # a DELETE leaves the bytes
    erase_forgotten(url, schema)
    assert files_holding(url, schema, [name, large]) == {}
    assert write_ahead_log_holds(url, name) is True
    assert write_ahead_log_holds(url, f"Never-{secrets.token_hex(8)}") is False
    assert reads_server_files(url) is True and reads_server_files(app_role_url) is False
