"""The PostgreSQL store as a support desk runs it: an app role with row rights only opens it and does everything;
PostgreSQL itself keeps customers apart; a forget waits for no reader and no reader waits for it; the tables are
made once, by processes starting at once too; recall keeps its order when a freed slot is reused; one process may
hold several connections; app servers are started anew when the URL or the schema changes. On the session's server
(slow: it takes seconds to start)."""

import multiprocessing
import threading

import psycopg
import pytest
from psycopg import sql

from conftest import TEST_PARTITIONS
from memory_cookbook.from_notebooks.app_servers import start_app_servers, stop_app_servers
from memory_cookbook.postgres.errors import MemoryTablesMissing, QueryFailed
from memory_cookbook.from_notebooks.postgres_store import CUSTOMER_SETTING, PostgresStore, create_memory_tables

pytestmark = pytest.mark.slow


def note(customer, ticket):
    return {"request": {"customer": {"id": customer}, "ticket": {"id": ticket}}, "jev_answered": {"q": ticket}}


def ids(store, customer):
    return [memory["request"]["ticket"]["id"] for memory in store.recall(customer)]


def test_an_app_role_with_row_rights_only_saves_recalls_logs_and_forgets(app_store, postgres_store):
    for customer, ticket in [("C-A", "T-1"), ("C-B", "T-2"), ("C-A", "T-3")]:
        app_store.save(customer, note(customer, ticket), p_remember=0.9, model="m")
        app_store.log({"customer": customer, "ticket": ticket})
    assert (ids(app_store, "C-A"), ids(app_store, "C-B")) == (["T-1", "T-3"], ["T-2"])
    assert app_store.forget_ticket("C-A", "T-3") == 1 and app_store.forget_customer("C-B") == 1
    assert [entry["ticket"] for entry in postgres_store.ledger()] == ["T-1", "T-3"]  # the owner reads it whole
    assert [entry["ticket"] for entry in postgres_store.ledger("C-A")] == ["T-1", "T-3"]
    with pytest.raises(QueryFailed, match="SQLSTATE 42501") as raised:  # and the role may change no table
        app_store.execute(sql.SQL("ALTER TABLE {} ADD COLUMN x int").format(app_store.memories))
    assert isinstance(raised.value.__cause__, psycopg.errors.InsufficientPrivilege)


def test_opening_a_schema_without_the_tables_names_the_step_that_makes_them(postgres_server):
    with pytest.raises(MemoryTablesMissing, match=r"create_memory_tables\(url, schema='never_made'\)"):
        PostgresStore(postgres_server.url, schema="never_made")


def test_the_app_role_reaches_only_the_rows_of_the_customer_a_call_names_and_no_table(app_store, app_role_url):
    app_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    app_store.save("C-B", note("C-B", "T-2"), p_remember=0.9, model="m")
    app_store.log({"customer": "C-A", "ticket": "T-1"})
    with psycopg.connect(app_role_url, autocommit=True) as db:
        for name in ("memories", "ledger", "memories_00", "to_erase"):  # no table, nor a partition by its own name
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                db.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(app_store.schema, name)))
        recall = sql.SQL("SELECT count(*) FROM {}(%s)").format(sql.Identifier(app_store.schema, "recall_memories"))
        counts = [db.execute(recall, (customer,)).fetchone()[0] for customer in (None, "", "C-A", "C-none")]
        assert counts == [0, 0, 1, 0]
    assert ids(app_store, "C-A") == ["T-1"] and ids(app_store, "C-B") == ["T-2"]


def test_a_role_given_the_tables_sees_no_row_of_a_customer_its_transaction_has_not_named(postgres_store):
    """Row-level security stays on the tables, for a role a desk grants them to (a report's, say)."""
    postgres_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    postgres_store.save("C-B", note("C-B", "T-2"), p_remember=0.9, model="m")
    postgres_store.log({"customer": "C-A", "ticket": "T-1"})
    memories, ledger = postgres_store.memories, postgres_store.ledger_table
    with psycopg.connect(postgres_store.url, autocommit=True) as db:
        db.execute("CREATE ROLE cookbook_reports LOGIN")
        db.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO cookbook_reports; GRANT SELECT ON {}, {} TO cookbook_reports")
                   .format(sql.Identifier(postgres_store.schema), memories, ledger))
    try:
        with psycopg.connect(psycopg.conninfo.make_conninfo(postgres_store.url, user="cookbook_reports")) as db:
            count = sql.SQL("SELECT (SELECT count(*) FROM {}), (SELECT count(*) FROM {})").format(memories, ledger)
            assert db.execute(count).fetchone() == (0, 0)
            db.execute("SELECT set_config(%s, 'C-B', true)", (CUSTOMER_SETTING,))  # no WHERE: the policy alone
            assert db.execute(sql.SQL("SELECT customer_id FROM {}").format(memories)).fetchall() == [("C-B",)]
            db.rollback()
            with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor a partition, read by its own name
                db.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(postgres_store.schema,
                                                                                    "memories_00")))
    finally:
        with psycopg.connect(postgres_store.url, autocommit=True) as db:
            db.execute("DROP OWNED BY cookbook_reports")
            db.execute("DROP ROLE cookbook_reports")


def forget_in_a_thread(store, customer):
    thread = threading.Thread(target=store.forget_customer, args=(customer,))
    thread.start()
    thread.join(timeout=3)
    return not thread.is_alive()


def test_a_forget_waits_for_no_reader_and_an_erase_locks_one_partition_only(postgres_store, app_store):
    customers = [f"C-{number}" for number in range(40)]
    for customer in customers:
        app_store.save(customer, note(customer, "T-1"), p_remember=0.9, model="m")
    with psycopg.connect(postgres_store.url) as reader:  # a long transaction that read every partition
        reader.execute(sql.SQL("SELECT count(*) FROM {}").format(postgres_store.memories))
        assert forget_in_a_thread(app_store, "C-0"), "forget_customer waited for a reader's lock"
    partition = postgres_store.execute(sql.SQL("SELECT relation::text FROM {}").format(postgres_store.to_erase))[0][0]
    elsewhere = [customer for customer in customers[1:] if postgres_store.execute(
        sql.SQL("SELECT tableoid::regclass::text FROM {} WHERE customer_id = %s").format(postgres_store.memories),
        customer)[0][0] != partition]
    for customer in elsewhere[8:14]:  # past the five custom plans after which PostgreSQL may switch to a generic one
        app_store.forget_ticket(customer, "T-1")
        app_store.forget_customer(customer)
    recalled = []
    with psycopg.connect(postgres_store.url) as eraser:  # as erase_forgotten holds it while rewriting the partition
        eraser.execute(f"LOCK TABLE {partition} IN ACCESS EXCLUSIVE MODE")
        recalls = threading.Thread(target=lambda: recalled.extend(ids(app_store, customer) for customer in
                                                                  elsewhere[:8]))  # 8 recalls, in other partitions
        recalls.start()
        recalls.join(timeout=3)
        assert not recalls.is_alive(), "a recall in another partition waited for the partition being rewritten"
        assert forget_in_a_thread(app_store, elsewhere[14]), "a forget in another partition waited for it too"
        forget = threading.Thread(target=app_store.forget_ticket, args=("T-1", elsewhere[15]))
        forget.start()
        forget.join(timeout=3)
        assert not forget.is_alive(), "forget_ticket in another partition waited for the partition being rewritten"
    assert recalled == [["T-1"]] * 8


def create_at_once(url, schema, go):
    go.wait()
    create_memory_tables(url, schema, partitions=TEST_PARTITIONS)


def test_processes_creating_the_tables_at_once_all_succeed(postgres_server):
    fork = multiprocessing.get_context("fork")
    go = fork.Event()
    creators = [fork.Process(target=create_at_once, args=(postgres_server.url, "made_at_once", go)) for _ in range(6)]
    for creator in creators:
        creator.start()
    go.set()
    for creator in creators:
        creator.join(timeout=60)
    try:
        assert [creator.exitcode for creator in creators] == [0] * 6
    finally:
        with psycopg.connect(postgres_server.url, autocommit=True) as db:
            db.execute("DROP SCHEMA IF EXISTS made_at_once CASCADE")


def test_recall_keeps_the_order_saved_when_a_freed_slot_is_reused(postgres_store):
    for ticket in ("T-1", "T-2", "T-3"):
        postgres_store.save("C-A", note("C-A", ticket), p_remember=0.9, model="m")
    postgres_store.forget_ticket("C-A", "T-1")
    postgres_store.execute(sql.SQL("VACUUM {}").format(postgres_store.memories))  # T-1's slot is free again
    postgres_store.save("C-A", note("C-A", "T-4"), p_remember=0.9, model="m")
    assert ids(postgres_store, "C-A") == ["T-2", "T-3", "T-4"]


def test_one_process_may_hold_several_connections_at_once(postgres_store):
    with PostgresStore(postgres_store.url, schema=postgres_store.schema, timeout=1) as store:
        with store.connection(), store.connection(), store.connection():
            assert store.recall("C-A") == []  # a fourth, while three are held


def test_app_servers_are_started_anew_when_the_url_or_the_schema_changes(postgres_store, postgres_server):
    other = f"{postgres_store.schema}_other"
    create_memory_tables(postgres_server.url, other, partitions=1)
    try:
        with PostgresStore(postgres_server.url, schema=other) as store:
            store.save("C-A", note("C-A", "T-9"), p_remember=0.9, model="m")
        first = start_app_servers(postgres_server.url, 1, schema=postgres_store.schema, lesson="jev_memory_lesson")[0]
        assert first.send(do="recall", customer="C-A")["memories"] == []
        second = start_app_servers(postgres_server.url, 1, schema=other, lesson="jev_memory_lesson")[0]
        assert second is not first and second.send(do="recall", customer="C-A")["memories"] == ["T-9"]
        key_value = psycopg.conninfo.make_conninfo(postgres_server.url, connect_timeout=10)  # the server, another URL
        third = start_app_servers(key_value, 1, schema=other, lesson="jev_memory_lesson")[0]
        assert third is not second and third.url == key_value and first.process.poll() is not None
    finally:
        stop_app_servers()
        with psycopg.connect(postgres_server.url, autocommit=True) as db:
            db.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(other)))


def test_an_id_postgresql_cannot_store_is_a_value_error_before_anything_is_written(app_store, postgres_store):
    with pytest.raises(ValueError, match="customer holds a NUL character"):
        app_store.save("C-\x00", note("C-\x00", "T-1"), p_remember=0.9, model="m")
    with pytest.raises(ValueError, match="ticket id is 201 characters long"):
        app_store.save("C-A", note("C-A", "T" * 201), p_remember=0.9, model="m")
    assert postgres_store.saved() == []


def test_creating_the_tables_again_while_an_app_transaction_is_open_waits_for_nothing_and_fails_no_call(postgres_store,
                                                                                                  app_store,
                                                                                                  app_role_url):
    app_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    done, failed = [], []
    with psycopg.connect(app_role_url) as holder:  # an app server's transaction, open on the tables
        holder.execute(app_store.calls["recall_memories"], ("C-A",)).fetchall()
        holder.execute(app_store.calls["save_memory"], ("C-A", "T-2", "{}", "{}", 0.9, "m", None, "{}", None))
        again = threading.Thread(target=lambda: done.append(create_memory_tables(
            postgres_store.url, postgres_store.schema, partitions=TEST_PARTITIONS)))
        again.start()
        again.join(timeout=3)
        with PostgresStore(app_role_url, schema=app_store.schema, lock_timeout=0.5) as other:  # another app server
            try:
                other.save("C-A", note("C-A", "T-3"), p_remember=0.9, model="m")
                other.recall("C-A")
            except QueryFailed as error:
                failed.append(error)
        waited = again.is_alive()
    again.join(timeout=30)
    assert not waited, "create_memory_tables, run again, waited for an app server's transaction"
    assert failed == [] and done == [None]
