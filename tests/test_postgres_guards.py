"""The PostgreSQL store's guards, each tried as the fault it guards against: the app role cannot queue anything but
the store's own partitions for erasing, and erase_forgotten rewrites nothing else, leaves no note of what it rewrote,
and gives up on a lock it is not granted; a query's own mistake is never "cannot reach the database"; no call waits
without limit; a pooled connection keeps no customer; the tables refuse a row with no customer; the first call after
the server closed the pool's connections succeeds; the connection limit and a row-level-security refusal say what they
are. On the session's server (slow: it takes seconds to start)."""

import re
import threading

import psycopg
import pytest
from conftest import APP_ROLE, TEST_PARTITIONS
from cookbook_tools.paths import ROOT
from psycopg import sql

from memory_cookbook.postgres.errors import DatabaseRefused, DatabaseUnavailable, MemoryTablesMissing, QueryFailed
from memory_cookbook.from_notebooks.postgres_store import (CUSTOMER_SETTING, PostgresStore, create_memory_tables,
                                                           erase_forgotten, grant_row_rights)

pytestmark = pytest.mark.slow


def note(customer, ticket):
    return {"request": {"customer": {"id": customer}, "ticket": {"id": ticket}}, "jev_answered": {"q": ticket}}


def partition_of(store, customer):
    """The memories partition that holds `customer`'s rows, by name."""
    return store.execute(sql.SQL("SELECT tableoid::regclass::text FROM {} WHERE customer_id = %s LIMIT 1").format(
        store.memories), customer)[0][0]


def notes(store):
    return sorted(relation for (relation,) in store.execute(sql.SQL("SELECT relation::text FROM {}").format(
        store.to_erase)))


def test_the_app_role_can_neither_write_to_erase_nor_note_anything_for_erasure(app_store):
    partition = f"{app_store.schema}.memories_00"
    with pytest.raises(QueryFailed, match="SQLSTATE 42501"):
        app_store.execute(sql.SQL("INSERT INTO {} (relation) VALUES (%s::regclass)").format(app_store.to_erase),
                          partition)
    with pytest.raises(QueryFailed, match="SQLSTATE 42501"):  # nor through PUBLIC's right to run a function
        app_store.execute(sql.SQL("SELECT {}(ARRAY[%s::regclass::oid])").format(app_store.note_for_erasure),
                          partition)


def test_note_for_erasure_takes_the_partitions_of_its_own_schemas_tables_only(postgres_store, postgres_server):
    other = f"{postgres_store.schema}_other"
    create_memory_tables(postgres_server.url, other, partitions=1)
    note_oid = sql.SQL("SELECT {}(ARRAY[%s::regclass::oid])").format(postgres_store.note_for_erasure)
    try:
        for relation in ("pg_catalog.pg_class", f"{postgres_store.schema}.memories", f"{other}.memories_00"):
            with pytest.raises(QueryFailed, match="SQLSTATE 22023.*only partitions of the store's memories and ledger"):
                postgres_store.execute(note_oid, relation)
        postgres_store.execute(note_oid, f"{postgres_store.schema}.memories_00")
        assert notes(postgres_store) == [f"{postgres_store.schema}.memories_00"]
    finally:
        postgres_store.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(other)))


def test_note_for_erasure_reads_the_real_catalog_whatever_its_callers_search_path(postgres_store):
    with postgres_store.transaction() as db:  # a caller's temporary pg_inherits, first on its search_path
        db.execute("SET LOCAL search_path = pg_temp, pg_catalog")
        db.execute("CREATE TEMP TABLE pg_inherits ON COMMIT DROP AS SELECT 'pg_class'::regclass::oid AS inhrelid,"
                   " %s::regclass::oid AS inhparent", (f"{postgres_store.schema}.memories",))
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            db.execute(sql.SQL("SELECT {}(ARRAY['pg_class'::regclass::oid])").format(postgres_store.note_for_erasure))
    assert notes(postgres_store) == []


def file_nodes(store):
    """{relation: its file's number} for every table and partition of the store's schema, and pg_class's."""
    return dict(store.execute("SELECT oid::regclass::text, pg_relation_filenode(oid) FROM pg_class WHERE relkind = 'r'"
                              " AND (relnamespace = %s::regnamespace OR oid = 'pg_class'::regclass)", store.schema))


def test_erase_forgotten_rewrites_only_the_noted_partitions_of_its_schema_and_skips_the_rest(postgres_store,
                                                                                            postgres_server):
    other = f"{postgres_store.schema}_other"
    create_memory_tables(postgres_server.url, other, partitions=1)
    try:
        for customer in ("C-A", "C-B"):
            postgres_store.save(customer, note(customer, "T-1"), p_remember=0.9, model="m")
            postgres_store.log({"customer": customer, "ticket": "T-1"})
        postgres_store.forget_customer("C-A")
        forgotten = notes(postgres_store)
        strangers = sorted(["pg_class", f"{postgres_store.schema}.memories", f"{other}.memories_00"])
        postgres_store.execute(sql.SQL("INSERT INTO {} (relation) SELECT unnest(%s::regclass[])").format(
            postgres_store.to_erase), strangers)  # as the owner may: never the app role
        before = file_nodes(postgres_store)
        erased = erase_forgotten(postgres_store.url, postgres_store.schema)
        assert (erased["rewritten"], sorted(erased["skipped"]), erased["waited"]) == (
            [name.split(".")[1] for name in forgotten], strangers, [])
        changed = sorted(name for name, node in file_nodes(postgres_store).items() if before[name] != node)
        assert changed == forgotten  # the partitions that held C-A, and nothing else
        assert notes(postgres_store) == strangers  # the rewritten ones' notes are gone; the others stay, reported
    finally:
        postgres_store.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(other)))


def test_a_rewrite_not_granted_its_lock_in_time_gives_up_and_its_notes_stay(postgres_store):
    postgres_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    postgres_store.forget_ticket("C-A", "T-1")
    [partition], done = notes(postgres_store), []
    with psycopg.connect(postgres_store.url) as reader:  # a transaction still reading the partition
        reader.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.SQL(partition)))
        eraser = threading.Thread(target=lambda: done.append(erase_forgotten(postgres_store.url, postgres_store.schema,
                                                                             lock_timeout=0.2)))
        eraser.start()
        eraser.join(timeout=5)
        assert done, "erase_forgotten waited for its lock beyond its lock_timeout"
    assert (done[0]["rewritten"], done[0]["waited"], done[0]["skipped"]) == ([], [partition.split(".")[1]], [])
    assert notes(postgres_store) == [partition]


def test_a_mistake_in_a_query_is_a_failed_query_and_a_percent_sign_is_a_percent_sign(postgres_store):
    assert postgres_store.execute("SELECT 'a%'") == [("a%",)]
    with pytest.raises(QueryFailed, match="was not sent: psycopg refused it \\(ProgrammingError\\)") as raised:
        postgres_store.execute("SELECT %s, %s", 1)
    assert not isinstance(raised.value, DatabaseUnavailable) and raised.value.sqlstate is None


def test_a_pooled_connection_keeps_no_customer_after_a_forget(app_role_url, app_store):
    app_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    with PostgresStore(app_role_url, schema=app_store.schema, max_connections=1) as store:
        store.forget_customer("C-A")
        with store.pool.connection() as db:  # the store's calls' one connection
            assert db.execute("SELECT current_setting(%s, true)", (CUSTOMER_SETTING,)).fetchone()[0] in ("", None)


def test_a_lent_connection_comes_back_as_a_new_session_whatever_its_borrower_set(postgres_store, app_role_url,
                                                                                 app_store):
    setting = sql.SQL("SELECT current_setting({}, true), current_setting('lock_timeout'), current_user").format(
        sql.Literal(CUSTOMER_SETTING))
    with PostgresStore(app_role_url, schema=app_store.schema, max_connections=1, lock_timeout=1.5) as store:
        store.execute(f"SET {CUSTOMER_SETTING} = 'C-A'")  # a session setting, not SET LOCAL
        with store.connection() as db:  # the same, only connection
            db.execute("SET lock_timeout = 0")
            db.execute("SELECT set_config(%s, 'C-A', false)", (CUSTOMER_SETTING,))
        with store.connection() as db:
            assert db.execute(setting).fetchone() in [("", "1500ms", APP_ROLE), (None, "1500ms", APP_ROLE)]
        for _ in range(8):  # the store's prepared calls still work: past psycopg's prepare threshold
            assert store.execute(setting)[0][2] == APP_ROLE and store.recall("C-A") == []


def frontend_messages(trace):
    """The kinds of message the client sent, in order, from libpq's trace (regress mode: no timestamps)."""
    return [line.split("\t")[2] for line in trace.read_text().splitlines() if line.startswith("F\t")]


def test_a_recall_a_save_and_a_log_are_each_one_prepared_statement_in_one_round_trip(postgres_store, tmp_path):
    with PostgresStore(postgres_store.url, schema=postgres_store.schema, max_connections=1) as store:
        calls = [lambda: store.recall("C-A"), lambda: store.save("C-A", note("C-A", "T-1"), 0.9, "m"),
                 lambda: store.log({"customer": "C-A", "ticket": "T-1"})]
        for call in calls:  # each prepared on this, the only connection
            call()
        trace = tmp_path / "trace.txt"
        with store.pool.connection() as db:  # the calls' pool's one connection, back in the pool before the calls
            pass
        with trace.open("w") as file:
            db.pgconn.trace(file.fileno())
            db.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS | psycopg.pq.Trace.REGRESS_MODE)
            for call in calls:
                call()
            db.pgconn.untrace()
    assert frontend_messages(trace) == ["Bind", "Describe", "Execute", "Sync"] * 3  # no Parse: each one prepared


def test_a_failed_call_raises_the_error_that_names_it_and_keeps_nothing(postgres_store):
    with pytest.raises(QueryFailed, match="postgresql://postgres:.*SQLSTATE 22P02") as raised:
        postgres_store.call("save_memory", "C-A", "T-1", '{"request": ', "{}", 0.9, "m", 0.5, "{}", None)  # not JSON
    assert isinstance(raised.value.__cause__, psycopg.errors.InvalidTextRepresentation)
    assert postgres_store.saved() == []


@pytest.fixture
def earlier_role_url(postgres_store):
    """A role given the rights the guide listed before issue 28: the tables' rows and sequences, no EXECUTE."""
    with psycopg.connect(postgres_store.url, autocommit=True) as db:
        db.execute("CREATE ROLE cookbook_earlier LOGIN")
        db.execute(sql.SQL("GRANT USAGE ON SCHEMA {schema} TO cookbook_earlier;"
                           " GRANT SELECT, INSERT, DELETE ON {schema}.memories, {schema}.ledger TO cookbook_earlier;"
                           " GRANT USAGE ON ALL SEQUENCES IN SCHEMA {schema} TO cookbook_earlier").format(
            schema=sql.Identifier(postgres_store.schema)))
    yield psycopg.conninfo.make_conninfo(postgres_store.url, user="cookbook_earlier")
    with psycopg.connect(postgres_store.url, autocommit=True) as db:
        db.execute("DROP OWNED BY cookbook_earlier")
        db.execute("DROP ROLE cookbook_earlier")


def test_a_role_with_an_earlier_versions_rights_is_refused_by_name_until_they_are_granted_again(postgres_store,
                                                                                                earlier_role_url):
    with PostgresStore(earlier_role_url, schema=postgres_store.schema) as store:
        with pytest.raises(QueryFailed, match="SQLSTATE 42501.*grant_row_rights.*--grant ROLE") as raised:
            store.recall("C-A")
        assert "row-level security" not in str(raised.value)  # a missing right, not a policy's refusal
        grant_row_rights(postgres_store.url, "cookbook_earlier", postgres_store.schema)
        store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
        assert len(store.recall("C-A")) == 1 and store.forget_customer("C-A") == 1
        with pytest.raises(QueryFailed, match="SQLSTATE 42501"):  # and the earlier table rights are gone
            store.execute(sql.SQL("SELECT count(*) FROM {}").format(store.memories))


def test_a_row_level_security_refusal_says_so(earlier_role_url, postgres_store):
    with PostgresStore(earlier_role_url, schema=postgres_store.schema) as store:
        with pytest.raises(QueryFailed, match="row-level security refused the row") as raised:
            with store.as_customer("C-A") as db:
                db.execute(sql.SQL("INSERT INTO {} (customer_id, entry) VALUES ('C-B', '{{}}')").format(
                    store.ledger_table))
    assert raised.value.sqlstate == "42501" and "GRANT" not in str(raised.value)


def test_the_tables_refuse_a_row_with_no_customer(postgres_store):
    with psycopg.connect(postgres_store.url, autocommit=True) as db:  # the owner: not bound by the policy
        with db.transaction():  # afterwards the setting is '' on this connection, not unset
            db.execute("SELECT set_config(%s, 'C-A', true)", (CUSTOMER_SETTING,))
        for table in (postgres_store.memories, postgres_store.ledger_table):
            columns = ("(customer_id, entry) VALUES ('', '{}')" if table is postgres_store.ledger_table else
                       "(customer_id, request, jev_answered, p_remember, model) VALUES ('', '{}', '{}', 1, 'm')")
            with pytest.raises(psycopg.errors.CheckViolation):
                db.execute(sql.SQL("INSERT INTO {} ").format(table) + sql.SQL(columns))


@pytest.mark.parametrize("ticket", ["T-\x00", "T" * 201])
def test_forget_ticket_refuses_an_id_the_store_could_never_have_saved(postgres_store, ticket):
    postgres_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    with pytest.raises(ValueError, match="ticket id"):
        postgres_store.forget_ticket("C-A", ticket)
    assert len(postgres_store.saved()) == 1


def test_a_nan_p_remember_is_refused_before_anything_is_written(postgres_store):
    with pytest.raises(ValueError, match="p_remember must be a number from 0 to 1"):
        postgres_store.save("C-A", note("C-A", "T-1"), p_remember=float("nan"), model="m")
    assert postgres_store.saved() == []


@pytest.mark.parametrize("missing", ["TABLE {schema}.to_erase", "TABLE {schema}.ledger",
                                     "FUNCTION {schema}.note_for_erasure"])
def test_a_store_does_not_open_on_a_schema_that_lacks_one_of_its_parts(postgres_server, missing):
    create_memory_tables(postgres_server.url, "lacking_one", partitions=1)
    try:
        with psycopg.connect(postgres_server.url, autocommit=True) as db:
            db.execute(f"DROP {missing.format(schema='lacking_one')} CASCADE")
        with pytest.raises(MemoryTablesMissing, match="create_memory_tables"):
            PostgresStore(postgres_server.url, schema="lacking_one")
    finally:
        with psycopg.connect(postgres_server.url, autocommit=True) as db:
            db.execute("DROP SCHEMA lacking_one CASCADE")


def test_the_ledger_comes_back_in_the_order_logged(postgres_store):
    customers = [f"C-{number}" for number in range(8)]  # in several partitions
    assert len({partition_after_save(postgres_store, customer) for customer in customers}) > 1
    logged = [(customer, f"T-{turn}") for turn in range(3) for customer in reversed(customers)]
    for customer, ticket in logged:
        postgres_store.log({"customer": customer, "ticket": ticket})
    assert [(entry["customer"], entry["ticket"]) for entry in postgres_store.ledger()] == logged


def partition_after_save(store, customer):
    store.save(customer, note(customer, "T-1"), p_remember=0.9, model="m")
    return partition_of(store, customer)


def test_a_call_waits_for_a_lock_no_longer_than_lock_timeout(postgres_store):
    postgres_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    with PostgresStore(postgres_store.url, schema=postgres_store.schema, lock_timeout=0.2) as store:
        with psycopg.connect(postgres_store.url) as holder:  # as an app role's LOCK TABLE would
            holder.execute(f"LOCK TABLE {partition_of(postgres_store, 'C-A')} IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(QueryFailed, match="SQLSTATE 55P03.*lock_timeout"):
                store.recall("C-A")


def test_a_statement_runs_no_longer_than_statement_timeout_and_the_urls_options_win(postgres_store):
    with PostgresStore(postgres_store.url, schema=postgres_store.schema, statement_timeout=0.2) as store:
        with pytest.raises(QueryFailed, match="SQLSTATE 57014.*statement_timeout"):
            store.execute("SELECT pg_sleep(3)")
    url = psycopg.conninfo.make_conninfo(postgres_store.url, options="-c lock_timeout=1234")
    with PostgresStore(url, schema=postgres_store.schema) as store:
        assert store.execute("SHOW lock_timeout") == [("1234ms",)]


def test_a_transaction_left_idle_is_ended_by_the_server_and_says_so(postgres_store):
    with PostgresStore(postgres_store.url, schema=postgres_store.schema, idle_in_transaction_timeout=0.1) as store:
        with pytest.raises(QueryFailed, match="SQLSTATE 25P03.*idle_in_transaction_session_timeout"):
            with store.transaction() as db:
                db.execute("SELECT 1").fetchone()  # the transaction is open on the server
                threading.Event().wait(0.4)
                db.execute("SELECT 1").fetchone()
        assert store.recall("C-A") == []  # the next call reconnects


def test_recalls_repeated_on_one_connection_lock_only_their_customers_partition(postgres_store, app_role_url,
                                                                                app_store):
    customers = [f"C-{number}" for number in range(12)]
    for customer in customers:
        app_store.save(customer, note(customer, "T-1"), p_remember=0.9, model="m")
    locked = partition_of(postgres_store, customers[0])
    elsewhere = [customer for customer in customers if partition_of(postgres_store, customer) != locked]
    with PostgresStore(app_role_url, schema=app_store.schema, max_connections=1, lock_timeout=0.5) as store:
        for _ in range(3):  # past the five custom plans after which PostgreSQL may switch to a generic one
            for customer in elsewhere:
                store.recall(customer)
        with psycopg.connect(postgres_store.url) as eraser:  # as erase_forgotten holds it while rewriting
            eraser.execute(f"LOCK TABLE {locked} IN ACCESS EXCLUSIVE MODE")
            assert [len(store.recall(customer)) for customer in elsewhere] == [1] * len(elsewhere)


@pytest.fixture
def limited_role_url(postgres_store):
    """An app role with row rights on postgres_store's schema (no connection limit yet)."""
    with psycopg.connect(postgres_store.url, autocommit=True) as db:
        db.execute("CREATE ROLE cookbook_limited LOGIN")
    grant_row_rights(postgres_store.url, "cookbook_limited", postgres_store.schema)
    yield psycopg.conninfo.make_conninfo(postgres_store.url, user="cookbook_limited")
    with psycopg.connect(postgres_store.url, autocommit=True) as db:
        db.execute("DROP OWNED BY cookbook_limited")
        db.execute("DROP ROLE cookbook_limited")


def test_a_connection_limit_reached_says_so(limited_role_url, postgres_store):
    with PostgresStore(limited_role_url, schema=postgres_store.schema, timeout=0.3, max_connections=2) as store:
        store.pool.wait(timeout=30)  # its first connection made; then the role may have no other
        postgres_store.execute("ALTER ROLE cookbook_limited CONNECTION LIMIT 1")  # binds no superuser
        with store.pool.connection():  # that one connection, held
            with pytest.raises(DatabaseRefused, match="refused a new connection: too many connections"):
                store.recall("C-A")


def last_rows(db, statements):
    """The rows of the last of several statements sent at once."""
    cursor = db.execute(statements)
    while cursor.nextset():  # the cursor stays on the last result once there is no next one
        rows = cursor.fetchall() if cursor.description else None
    return rows


def test_the_guides_query_lists_the_files_no_table_names_as_a_crash_during_a_rewrite_leaves(postgres_server):
    guide = (ROOT / "docs" / "own_postgres_server.md").read_text()
    [query] = [block for block in re.findall(r"```sql\n(.*?)```", guide, re.S) if "pg_ls_dir" in block]
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        database = db.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
        assert last_rows(db, query) == []
        left = [postgres_server.folder / "base" / str(database) / name
                for name in ("3999999999", "3999999999.1", "3999999999_fsm")]  # a copy's files, a segment, its map
        try:
            for path in left:
                path.write_bytes(b"a copy of other customers' rows")
            assert last_rows(db, query) == [(path.name,) for path in left]
        finally:
            for path in left:
                path.unlink(missing_ok=True)


def test_creating_the_tables_again_keeps_every_row_and_file(postgres_store):
    postgres_store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
    postgres_store.log({"customer": "C-A", "ticket": "T-1"})
    before = file_nodes(postgres_store), postgres_store.saved(), postgres_store.ledger()
    create_memory_tables(postgres_store.url, postgres_store.schema, partitions=TEST_PARTITIONS)
    assert (file_nodes(postgres_store), postgres_store.saved(), postgres_store.ledger()) == before


@pytest.mark.parametrize("schema", ["we$$ird", "end$$", "$body$ and $body1$"])
def test_a_schema_name_holding_dollar_quotes_makes_a_store_that_works(postgres_server, schema):
    create_memory_tables(postgres_server.url, schema, partitions=1)
    try:
        with PostgresStore(postgres_server.url, schema=schema) as store:
            store.save("C-A", note("C-A", "T-1"), p_remember=0.9, model="m")
            store.log({"customer": "C-A", "ticket": "T-1"})
            assert [memory["request"]["ticket"]["id"] for memory in store.recall("C-A")] == ["T-1"]
            assert store.forget_customer("C-A") == 1 and store.ledger() == []
        assert erase_forgotten(postgres_server.url, schema)["rewritten"] == ["ledger_00", "memories_00"]
    finally:
        with psycopg.connect(postgres_server.url, autocommit=True) as db:
            db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def test_the_app_role_has_a_right_on_the_stores_functions_and_nothing_else_in_its_schema(postgres_store, app_store):
    rights = postgres_store.execute(
        "SELECT c.relname, c.relkind FROM pg_class c WHERE c.relnamespace = %s::regnamespace AND ("
        "  has_table_privilege(%s, c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER, MAINTAIN')"
        "  OR (c.relkind = 'S' AND has_sequence_privilege(%s, c.oid, 'USAGE, SELECT, UPDATE')))"
        " UNION ALL SELECT p.proname, 'f' FROM pg_proc p WHERE p.pronamespace = %s::regnamespace"
        "  AND has_function_privilege(%s, p.oid, 'EXECUTE') ORDER BY 1",
        postgres_store.schema, APP_ROLE, APP_ROLE, postgres_store.schema, APP_ROLE)
    assert rights == [(name, "f") for name in (
        "forget_customer", "forget_ticket", "invalidate_memory", "ledger_entries", "log_entry", "memory_records",
        "recall_memories", "restore_customer", "save_memory")]


def test_an_app_role_holding_a_transaction_open_without_its_idle_limit_stalls_no_other_app_server(app_role_url,
                                                                                                 app_store):
    for customer in ("C-A", "C-B"):
        app_store.save(customer, note(customer, "T-1"), p_remember=0.9, model="m")
    with psycopg.connect(app_role_url) as holder:  # careless, or compromised: no limit on its idle transaction
        holder.execute("SET idle_in_transaction_session_timeout = 0")
        for mode in ("ACCESS EXCLUSIVE", "EXCLUSIVE", "SHARE ROW EXCLUSIVE", "SHARE"):  # it may lock no table
            with pytest.raises(psycopg.errors.InsufficientPrivilege), holder.transaction():
                holder.execute(sql.SQL("LOCK TABLE {} IN " + mode + " MODE").format(app_store.memories))
        for call, arguments in [("recall_memories", ("C-A",)), ("log_entry", ("C-A", "{}")),
                                ("save_memory", ("C-A", "T-2", "{}", "{}", 0.9, "m", 0.5, "{}", None)),
                                ("memory_records", ("C-A",)), ("ledger_entries", ("C-A",)),
                                ("invalidate_memory", ("C-A", "T-2", "a test", "the holder")),
                                ("restore_customer", ("C-R", "[]", '["{\\"customer\\": \\"C-R\\"}"]')),
                                ("forget_ticket", ("C-A", "T-1"))]:
            holder.execute(app_store.calls[call], arguments)
        with PostgresStore(app_role_url, schema=app_store.schema, lock_timeout=0.5) as other:  # another app server
            other.save("C-A", note("C-A", "T-3"), p_remember=0.9, model="m")
            other.log({"customer": "C-A", "ticket": "T-3"})
            assert len(other.recall("C-A")) == 2 and len(other.recall("C-B")) == 1  # T-1 and T-3: not T-2, not yet
            assert other.forget_ticket("C-A", "T-3") == 1 and other.forget_customer("C-B") == 1
        holder.rollback()


def test_erase_forgotten_reports_the_files_no_relation_names_with_the_command_that_removes_them(postgres_store,
                                                                                               postgres_server):
    with psycopg.connect(postgres_server.url) as db:
        database = db.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
    left = [postgres_server.folder / "base" / str(database) / name for name in ("3999999998", "3999999998_fsm")]
    try:
        for path in left:  # as a crash during a rewrite leaves them
            path.write_bytes(b"a copy of other customers' rows")
        erased = erase_forgotten(postgres_store.url, postgres_store.schema)
    finally:
        for path in left:
            path.unlink(missing_ok=True)
    assert erased["orphan_files"] == [str(path) for path in left]
    assert erased["remove_them"] == "rm -- " + " ".join(str(path) for path in left)
    assert erase_forgotten(postgres_store.url, postgres_store.schema)["orphan_files"] == []


@pytest.mark.parametrize("customer", [None, "", 1042, "C-\x00"], ids=["None", "empty", "a number", "a NUL"])
def test_recall_refuses_an_id_no_customer_can_have_naming_it(app_store, customer):
    with pytest.raises(ValueError, match="customer must be a non-empty string|customer holds a NUL character"):
        app_store.recall(customer)


@pytest.mark.parametrize("store", ["postgres_store", "app_store"], ids=["the owner", "the app role"])
def test_forget_ticket_for_one_customer_leaves_another_customers_memory_of_the_same_ticket(request, postgres_store,
                                                                                           store):
    store = request.getfixturevalue(store)
    for customer in ("C-A", "C-B"):
        store.save(customer, note(customer, "T-1"), p_remember=0.9, model="m")
    assert store.forget_ticket("C-A", "T-1") == 1
    assert [customer for customer, *_ in postgres_store.saved()] == ["C-B"]
