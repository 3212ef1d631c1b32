"""What a desk asks of the PostgreSQL store beyond the contract suite (tests/test_store_contract.py): the app role
reaches a customer's records, ledger, invalidation and restore only through the store's functions and only for the
customer it names; a store an earlier version made is upgraded by running create_memory_tables again, adding the
columns under a lock it waits for no longer than its lock_timeout, and everything else without locking a table. On
the session's server (slow)."""

import threading
import time

import psycopg
import pytest
from psycopg import sql

from conftest import APP_ROLE, TEST_PARTITIONS
from memory_cookbook.from_notebooks.postgres_store import (DESK_COLUMNS, PostgresStore, create_memory_tables,
                                                           grant_row_rights)
from memory_cookbook.postgres.errors import MemoryTablesMissing, QueryFailed
from test_postgres_desk import ids, note

pytestmark = pytest.mark.slow


def test_the_app_role_reads_and_invalidates_only_the_rows_of_the_customer_it_names(app_store, app_role_url):
    app_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    app_store.save("C-B", note("C-B", "T-2"), p_remember=0.9, model="m")
    app_store.log({"customer": "C-B", "ticket": "T-2"})
    assert app_store.invalidate("C-A", "T-2", reason="C-B's memory, named as C-A's", by="an app server") == 0
    assert ids(app_store, "C-B") == ["T-2"] and app_store.memory_records("C-B")[0].invalidated_at is None
    assert [record.ticket for record in app_store.memory_records("C-A")] == ["T-1"]
    assert (app_store.ledger("C-A"), [entry["ticket"] for entry in app_store.ledger("C-B")]) == ([], ["T-2"])
    with psycopg.connect(app_role_url, autocommit=True) as db:
        for function, arguments in [("memory_records", (None,)), ("ledger_entries", ("",)),
                                    ("invalidate_memory", (None, "T-2", "why", "who"))]:
            placeholders = sql.SQL(", ").join([sql.Placeholder()] * len(arguments))
            call = sql.SQL("SELECT * FROM {}({})").format(sql.Identifier(app_store.schema, function), placeholders)
            assert db.execute(call, arguments).fetchall() in ([], [(None,)]), function  # naming no one: nothing
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # the new columns: no table right, as before
            db.execute(sql.SQL("SELECT invalidation_reason FROM {}").format(app_store.memories))
    assert ids(app_store, "C-B") == ["T-2"]


def as_an_earlier_version(store):
    """The store's schema as the version before issue 35 made it: no desk columns, its six-argument save_memory, none
    of the desk's functions, an earlier version's mark on to_erase."""
    store.execute(sql.SQL("ALTER TABLE {} {}").format(store.memories, sql.SQL(", ").join(
        sql.SQL("DROP COLUMN {}").format(sql.Identifier(column)) for column in DESK_COLUMNS)))
    for function in ("save_memory", "memory_records", "ledger_entries", "invalidate_memory", "restore_customer"):
        store.execute(sql.SQL("DROP FUNCTION {}").format(sql.Identifier(store.schema, function)))
    store.execute(sql.SQL(
        "CREATE OR REPLACE FUNCTION {schema}.recall_memories(customer TEXT) RETURNS TABLE (request TEXT, jev_answered"
        " TEXT) LANGUAGE sql STRICT SECURITY DEFINER AS $$ SELECT request::text, jev_answered::text FROM {memories}"
        " WHERE customer_id = customer ORDER BY id $$").format(schema=sql.Identifier(store.schema),
                                                               memories=store.memories))
    store.execute(sql.SQL(
        "CREATE FUNCTION {schema}.save_memory(customer TEXT, ticket TEXT, request JSON, answered JSON,"
        " probability DOUBLE PRECISION, model TEXT) RETURNS void LANGUAGE sql SECURITY DEFINER AS $$"
        " INSERT INTO {memories} (customer_id, ticket_id, request, jev_answered, p_remember, model)"
        " VALUES (customer, ticket, request, answered, probability, model) $$").format(
        schema=sql.Identifier(store.schema), memories=store.memories))
    store.execute(sql.SQL("COMMENT ON TABLE {} IS 'memory_cookbook store 0123456789abcdef'").format(store.to_erase))
    store.execute(sql.SQL("SELECT {}('C-A', 'T-1', %s, '{{}}', 0.9, 'jev-1.13.0')").format(
        sql.Identifier(store.schema, "save_memory")), '{"customer": {"id": "C-A"}, "ticket": {"id": "T-1"}}')


def test_create_memory_tables_upgrades_a_store_an_earlier_version_made_keeping_its_memories(postgres_store):
    as_an_earlier_version(postgres_store)
    with pytest.raises(MemoryTablesMissing, match="made by an earlier version.*create_memory_tables"):
        PostgresStore(postgres_store.url, schema=postgres_store.schema)
    create_memory_tables(postgres_store.url, postgres_store.schema, partitions=TEST_PARTITIONS)
    with PostgresStore(postgres_store.url, schema=postgres_store.schema) as store:
        [kept] = store.memory_records("C-A")
        assert (kept.ticket, kept.remember_at, kept.answer_probabilities, kept.model) == ("T-1", None, {}, "jev-1.13.0")
        store.save("C-A", note("C-A", "T-2"), p_remember=0.9, model="m", remember_at=0.5)
        assert store.invalidate("C-A", "T-1", reason="upgraded", by="desk") == 1 and ids(store, "C-A") == ["T-2"]
        assert store.execute("SELECT count(*) FROM pg_proc WHERE proname = 'save_memory' AND pronamespace = %s::"
                             "regnamespace", postgres_store.schema) == [(1,)]  # the earlier one is gone


def create_in_a_thread(store, **limits):
    done = []
    creating = threading.Thread(target=lambda: done.append(create_memory_tables(
        store.url, store.schema, partitions=TEST_PARTITIONS, **limits)), daemon=True)
    return creating, done


def test_adding_the_columns_waits_no_longer_than_its_lock_timeout_and_changes_nothing_then(postgres_store, app_store,
                                                                                           app_role_url):
    as_an_earlier_version(postgres_store)
    failed = []
    with psycopg.connect(app_role_url) as holder:  # an app server's transaction, open on the table
        holder.execute(sql.SQL("SELECT * FROM {}('C-A')").format(
            sql.Identifier(app_store.schema, "recall_memories"))).fetchall()
        started = time.monotonic()
        try:
            create_memory_tables(postgres_store.url, postgres_store.schema, partitions=TEST_PARTITIONS,
                                 lock_timeout=0.5)
        except QueryFailed as error:
            failed.append((error.sqlstate, str(error), time.monotonic() - started))
    [(state, message, waited)] = failed
    assert state == "55P03" and "run it again" in message and waited < 3
    assert postgres_store.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = %s AND"
                                  " column_name = 'invalidated_at'", postgres_store.schema) == [(0,)]  # unchanged
    create_memory_tables(postgres_store.url, postgres_store.schema, partitions=TEST_PARTITIONS)  # nothing open now
    grant_row_rights(postgres_store.url, APP_ROLE, postgres_store.schema)
    with PostgresStore(app_role_url, schema=postgres_store.schema) as store:
        assert [record.ticket for record in store.memory_records("C-A")] == ["T-1"]


def test_an_upgrade_that_finds_the_columns_there_locks_no_table(postgres_store, app_store, app_role_url):
    """A store with every table, column and rule there but the functions of another version: the re-run replaces
    the functions and waits for no app server's open transaction, nor makes one wait."""
    app_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    postgres_store.execute(sql.SQL("COMMENT ON TABLE {} IS 'memory_cookbook store 0123456789abcdef'").format(
        postgres_store.to_erase))
    with psycopg.connect(app_role_url) as holder:
        holder.execute(sql.SQL("SELECT * FROM {}('C-A')").format(
            sql.Identifier(app_store.schema, "recall_memories"))).fetchall()
        creating, done = create_in_a_thread(postgres_store)
        creating.start()
        creating.join(timeout=5)
        waited = creating.is_alive()
        with PostgresStore(app_role_url, schema=app_store.schema, lock_timeout=0.5) as other:
            other.save("C-A", note("C-A", "T-2"), p_remember=0.9, model="m")
            assert ids(other, "C-A") == ["T-1", "T-2"]
    creating.join(timeout=30)
    assert not waited and done == [None]
