"""The PostgreSQL store beyond the shared contract (tests/test_store.py): the published run's requests byte for byte,
forgetting checked in the table files on disk, one transaction per forget, the clear error for a database that cannot
be used, and many processes at once: app servers sharing one memory, eight writers. All on the session's one embedded
server (conftest's postgres_server), each test in a schema of its own; marked slow, since the server takes seconds to
start."""

import multiprocessing
import threading

import psycopg
import pytest
from psycopg import sql
from memory_cookbook.from_notebooks.app_servers import start_app_servers, stop_app_servers
from conftest import run_earlier_tickets
from memory_cookbook.postgres.errors import DatabaseRefused, DatabaseUnavailable, MemoryTablesMissing
from memory_cookbook.from_notebooks.postgres_store import PostgresStore, create_memory_tables, erase_forgotten

PASSWORD = "not-the-right-one-7c1d"


@pytest.mark.slow
def test_the_published_run_sends_the_same_requests_with_postgres(lesson, postgres_store):
    with_dict = lesson.replay_published_run()
    lesson.MEMORY.store = postgres_store
    assert lesson.replay_published_run() == with_dict and len(with_dict) == 62  # each one a cache hit, or CacheMiss


def table_files(store, server):
    """{relation: its main file's bytes, read from the disk} for the store's tables, indexes and TOAST tables."""
    store.execute("CHECKPOINT")  # the changed pages, written to the files
    with store.connection() as db:
        paths = db.execute("SELECT c.oid::regclass::text, pg_relation_filepath(c.oid) FROM pg_class c"
                           " WHERE c.relnamespace = %(schema)s::regnamespace OR c.oid IN (SELECT reltoastrelid"
                           "  FROM pg_class WHERE relnamespace = %(schema)s::regnamespace) OR c.oid IN (SELECT"
                           "  indexrelid FROM pg_index WHERE indrelid IN (SELECT reltoastrelid FROM pg_class"
                           "  WHERE relnamespace = %(schema)s::regnamespace))", {"schema": store.schema}).fetchall()
    return {name: (server.folder / path).read_bytes() for name, path in paths if path}


def holding(files, text):
    return sorted(name for name, content in files.items() if text.encode() in content)


@pytest.mark.slow
def test_a_forgotten_customer_is_in_no_file_of_the_stores_tables_once_erased(lesson, postgres_store, postgres_server):
    lesson.MEMORY.store = postgres_store
    run_earlier_tickets(lesson)
    for message in lesson.LATER:
        lesson.ask_with_memory(lesson.later_state("C-1042", message["subject"]), lesson.ROUTE)
    history = ["Harbor's Enterprise desk answer was a guess", "desk@harbor-logistics"]  # an invalidation's words
    postgres_store.invalidate("C-1042", "T-105", *history)
    postgres_store.forget_customer("C-1042")
    forgotten = table_files(postgres_store, postgres_server)
    assert len(holding(forgotten, "Harbor Logistics")) == 1  # a DELETE leaves the bytes, in one partition
    assert [len(holding(forgotten, text)) for text in history] == [1, 1]
    erased = erase_forgotten(postgres_store.url, postgres_store.schema)["rewritten"]
    assert len(erased) == 2  # one partition of each table
    files = table_files(postgres_store, postgres_server)
    assert len(files) == len(forgotten) >= 4 * 8  # per partition: its file, index, TOAST table, TOAST index
    assert [(text, holding(files, text)) for text in ("C-1042", "Harbor Logistics", "T-101", "T-105", "T-201",
                                                      *history) if holding(files, text)] == []
    assert len(holding(files, "Fernwood Studio")) == 1


@pytest.mark.slow
def test_the_write_ahead_log_still_holds_a_forgotten_customer(lesson, postgres_store, postgres_server):
    """What the store cannot do, as the notebook says: PostgreSQL's log keeps what was written."""
    lesson.MEMORY.store = postgres_store
    run_earlier_tickets(lesson)
    postgres_store.forget_customer("C-1042")
    wal = b"".join(path.read_bytes() for path in (postgres_server.folder / "pg_wal").glob("0*"))
    assert b"Harbor Logistics" in wal


@pytest.mark.slow
def test_a_failed_forget_customer_leaves_memories_and_ledger_as_they_were(lesson, postgres_store):
    lesson.MEMORY.store = postgres_store
    run_earlier_tickets(lesson)
    before = postgres_store.ledger()
    postgres_store.execute(f"ALTER TABLE {postgres_store.schema}.memories RENAME TO kept")  # its DELETE fails
    with pytest.raises(MemoryTablesMissing, match="create_memory_tables") as raised:
        postgres_store.forget_customer("C-1042")
    assert isinstance(raised.value.__cause__, psycopg.errors.UndefinedTable)
    postgres_store.execute(f"ALTER TABLE {postgres_store.schema}.kept RENAME TO memories")
    assert postgres_store.ledger() == before
    assert "C-1042" in {entry["customer"] for entry in before}
    assert lesson.memory_ids("C-1042") == ["T-101", "T-105"]


@pytest.mark.slow
def test_a_reader_never_sees_a_customer_half_forgotten(postgres_store, postgres_server):
    """While forget_customer runs again and again, a reader on its own connection counts the customer's memories and
    ledger entries in one snapshot: both or neither, never one without the other."""
    schema, seen, stop = postgres_store.schema, set(), threading.Event()

    def read():
        with psycopg.connect(postgres_server.url, autocommit=True) as db:
            while not stop.is_set():
                seen.add(db.execute(f"SELECT (SELECT count(*) FROM {schema}.memories WHERE customer_id = 'C-X'),"
                                    f" (SELECT count(*) FROM {schema}.ledger WHERE customer_id = 'C-X')"
                                    ).fetchone())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(60):
            with postgres_store.transaction() as db:  # memories and entries appear together too
                for ticket in ("T-1", "T-2"):
                    db.execute(f"INSERT INTO {schema}.memories (customer_id, ticket_id, request, jev_answered,"
                               " p_remember, model) VALUES ('C-X', %s, '{}', '{}', 1, 'm')", (ticket,))
                    db.execute(f"INSERT INTO {schema}.ledger (customer_id, entry) VALUES ('C-X', '{{}}')")
            postgres_store.forget_customer("C-X")
    finally:
        stop.set()
        reader.join()
    assert seen <= {(0, 0), (2, 2)} and len(seen) == 2, seen


@pytest.fixture(scope="module")
def password_role(postgres_server):
    """A role that must give its password over the socket (the server trusts every other role)."""
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute(f"CREATE ROLE cookbook_reader LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
        hba = postgres_server.folder / "pg_hba.conf"
        hba.write_text("local all cookbook_reader scram-sha-256\n" + hba.read_text())
        db.execute("SELECT pg_reload_conf()")
    yield postgres_server.url.replace("postgres:@", "cookbook_reader:{password}@")
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute("DROP OWNED BY cookbook_reader")
        db.execute("DROP ROLE cookbook_reader")


def failure_message(url, error=DatabaseUnavailable):
    with pytest.raises(error) as raised:
        PostgresStore(url, schema="never_made", timeout=2)
    assert isinstance(raised.value.__cause__, psycopg.OperationalError)  # psycopg's own error, chained
    return str(raised.value)


@pytest.mark.parametrize("url", [f"postgresql://support:{PASSWORD}@127.0.0.1:1/support",
                                 f"postgresql://support:{PASSWORD}@/support?host=/nowhere-7c1d"],
                         ids=["a TCP port with no server", "a socket folder with no server"])
def test_a_database_that_is_not_there_is_one_clear_error(url):
    message = failure_message(url)
    assert message.startswith(f"Cannot reach the memory database at {url.replace(PASSWORD, '***')}. Check that")
    assert PASSWORD not in message and "COOKBOOK_DATABASE_URL" not in message  # a URL written in code


@pytest.mark.slow
def test_a_wrong_password_is_one_clear_error_without_the_password(password_role):
    message = failure_message(password_role.format(password=PASSWORD[::-1]), DatabaseRefused)
    assert "password authentication failed" in message and PASSWORD[::-1] not in message and "***" in message
    create_memory_tables(password_role.format(password=PASSWORD), "with_password", partitions=1)
    store = PostgresStore(password_role.format(password=PASSWORD), schema="with_password")
    assert store.recall("C-1") == []
    store.close()


def terminate_other_backends(url):
    """What a server restart does to the store's idle connections: the server ends them (waiting until they are)."""
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity"
                   " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")


@pytest.mark.slow
def test_the_first_call_after_the_server_closed_the_pools_connections_succeeds(postgres_store, postgres_server):
    postgres_store.save("C-A", {"request": {"ticket": {"id": "T-1"}}, "jev_answered": {}}, 0.9, "m")
    pool = postgres_store.pool  # the calls' pool: each connection the pool finds closed would cost a longer back-off
    with pool.connection(), pool.connection(), pool.connection(), pool.connection():  # four idle connections in it
        pass
    with postgres_store.connection(), postgres_store.connection():  # and two in the pool that lends them
        pass
    terminate_other_backends(postgres_server.url)
    assert [memory["request"]["ticket"]["id"] for memory in postgres_store.recall("C-A")] == ["T-1"]
    assert postgres_store.execute("SELECT 1") == [(1,)]


@pytest.mark.slow
def test_a_connection_lost_mid_transaction_is_the_clear_error_and_the_next_call_reconnects(postgres_store,
                                                                                          postgres_server):
    postgres_store.save("C-A", {"request": {"ticket": {"id": "T-1"}}, "jev_answered": {}}, 0.9, "m")
    with pytest.raises(DatabaseUnavailable, match="Cannot reach the memory database at postgresql://postgres:"):
        with postgres_store.as_customer("C-A") as db:
            terminate_other_backends(postgres_server.url)
            db.execute(sql.SQL("SELECT count(*) FROM {}").format(postgres_store.memories))
    assert [memory["request"]["ticket"]["id"] for memory in postgres_store.recall("C-A")] == ["T-1"]


@pytest.fixture
def app_servers(app_store):
    """A function that starts app server processes on the test's schema, as the app role; all stopped afterwards."""
    yield lambda count: start_app_servers(app_store.url, count, schema=app_store.schema, lesson="jev_memory_lesson")
    stop_app_servers()


@pytest.mark.slow
def test_four_app_servers_share_one_memory_and_forget_everywhere(lesson, postgres_store, app_servers):
    apps = app_servers(4)
    assert len({app.send(do="recall", customer="C-1042")["pid"] for app in apps}) == 4
    for number, ticket in enumerate(lesson.EARLIER):
        apps[number % 2].send(do="ticket", ticket=ticket["id"])
    later = [(customer, message["subject"]) for customer in lesson.CUSTOMERS for message in lesson.LATER]
    for number, (customer, subject) in enumerate(later):
        apps[2 + number % 2].post(do="message", customer=customer, subject=subject)
    teams = [apps[2 + number % 2].answer()["team"] for number in range(len(later))]
    assert [team == lesson.EXPECTED[c][s] for team, (c, s) in zip(teams, later, strict=True)] == [True] * 6
    assert [apps[3].send(do="recall", customer=c)["memories"] for c in lesson.CUSTOMERS] == [["T-101", "T-105"],
                                                                                            ["T-102"]]
    for app in apps:  # each, as the app role, sees the customer it names and no other
        assert app.send(do="recall", customer="C-2210")["memories"] == ["T-102"]
    assert apps[0].send(do="forget_customer", customer="C-1042")["forgotten"] == 2
    assert [app.send(do="recall", customer="C-1042")["memories"] for app in apps] == [[]] * 4
    assert apps[2].send(do="message", customer="C-1042", subject="Slow dashboards")["routed"] == "cloud_ops 0.80"


def save_and_log(url, schema, customer, saves, go):
    """One writer process: its own store and pool; once every writer is ready, a memory and a ledger entry per save."""
    store = PostgresStore(url, schema=schema)
    go.wait()
    for number in range(saves):
        store.save(customer, {"request": {"ticket": {"id": f"T-{number}"}}, "jev_answered": {}}, 1.0, "writer")
        store.log({"customer": customer, "ticket": f"T-{number}"})
    store.close()


@pytest.mark.slow
def test_eight_processes_saving_and_logging_at_once_lose_nothing(postgres_store):
    saves, customers = 200, [f"C-W{number}" for number in range(8)]
    fork = multiprocessing.get_context("fork")  # no imports to repeat: the processes start in milliseconds
    go = fork.Event()
    writers = [fork.Process(target=save_and_log, args=(postgres_store.url, postgres_store.schema, customer, saves, go))
               for customer in customers]
    for writer in writers:
        writer.start()
    go.set()
    for writer in writers:
        writer.join(timeout=120)
    assert [writer.exitcode for writer in writers] == [0] * 8
    tickets = [f"T-{number}" for number in range(saves)]
    saved = postgres_store.saved()
    assert len(saved) == len(set((customer, ticket) for customer, ticket, _, _ in saved)) == 8 * saves
    assert all([ticket for c, ticket, _, _ in saved if c == customer] == tickets for customer in customers)
    entries = postgres_store.ledger()
    assert len(entries) == 8 * saves
    assert all([e["ticket"] for e in entries if e["customer"] == customer] == tickets for customer in customers)
