"""The store's benchmark (tools/cookbook_tools/bench.py) on someone's server: it writes only in a schema it made,
and drops only what it made there, by name, without CASCADE; a schema of its name that it did not make, or one
holding rows it did not write, a table, a function or a partition it did not make, or something elsewhere depending
on its tables, is refused, and everything is left as it was. On the session's server (slow: it takes seconds to
start)."""

import psycopg
import pytest
from cookbook_tools import bench
from psycopg import sql

from memory_cookbook.from_notebooks.postgres_store import PostgresStore, create_memory_tables

pytestmark = pytest.mark.slow
SCHEMA = "bench_store_10"


def note(customer, ticket):
    return {"request": {"customer": {"id": customer}, "ticket": {"id": ticket}}, "jev_answered": {"q": ticket}}


def objects(url):
    """Every relation, function and view of the database outside the system's schemas, with its schema."""
    with psycopg.connect(url) as db:
        return db.execute("SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                          " WHERE n.nspname NOT LIKE 'pg\\_%%' AND n.nspname <> 'information_schema'"
                          " UNION ALL SELECT n.nspname, p.proname FROM pg_proc p JOIN pg_namespace n"
                          " ON n.oid = p.pronamespace WHERE n.nspname LIKE 'bench%%' OR n.nspname = 'desk_reports'"
                          " ORDER BY 1, 2").fetchall()


@pytest.fixture
def bench_schema(postgres_server):
    """The bench's own schema, as a run leaves it: made and marked, the store's tables in it, one row of its own."""
    url = postgres_server.url
    schema = bench.claimed_schema(url, 10)
    create_memory_tables(url, schema, partitions=2)
    with PostgresStore(url, schema=schema) as store:
        store.save("C-1", note("C-1", "T-1"), p_remember=0.9, model=bench.MODEL)
    yield url
    with psycopg.connect(url, autocommit=True) as db:
        for schema in (SCHEMA, "desk_reports"):
            db.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def test_the_benchmark_drops_and_makes_anew_a_schema_holding_only_what_it_made(bench_schema):
    assert bench.claimed_schema(bench_schema, 10) == SCHEMA
    assert [name for schema, name in objects(bench_schema) if schema == SCHEMA] == []  # new and empty


def test_the_benchmark_refuses_a_schema_of_its_name_that_it_did_not_make(postgres_server):
    url = postgres_server.url
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {SCHEMA}")  # a desk's, with no comment
    try:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(f"CREATE TABLE {SCHEMA}.kept (note TEXT)")
        before = objects(url)
        with pytest.raises(bench.ForeignSchema, match="this benchmark did not make it"):
            bench.claimed_schema(url, 10)
        assert objects(url) == before and (SCHEMA, "kept") in before
    finally:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(f"DROP SCHEMA {SCHEMA} CASCADE")


DESK_ADDITIONS = {
    "rows of another model": f"INSERT INTO {SCHEMA}.memories (customer_id, request, jev_answered, p_remember, model)"
                             " VALUES ('C-2', '{}', '{}', 1, 'a desk''s')",
    "a table of its own": f"CREATE TABLE {SCHEMA}.memories_archive (note TEXT)",
    "a partition of its own": f"ALTER TABLE {SCHEMA}.memories DETACH PARTITION {SCHEMA}.memories_01;"
                              f" DROP TABLE {SCHEMA}.memories_01; CREATE TABLE {SCHEMA}.memories_archive"
                              f" PARTITION OF {SCHEMA}.memories FOR VALUES WITH (MODULUS 2, REMAINDER 1)",
    "a function of its own": f"CREATE FUNCTION {SCHEMA}.desk_count() RETURNS INT LANGUAGE sql AS 'SELECT 1'",
    "a view elsewhere on its tables": f"CREATE SCHEMA desk_reports; CREATE VIEW desk_reports.saved AS"
                                      f" SELECT customer_id FROM {SCHEMA}.memories",
}


@pytest.mark.parametrize("addition", DESK_ADDITIONS.values(), ids=DESK_ADDITIONS)
def test_the_benchmark_refuses_its_schema_once_a_desk_added_to_it_and_drops_nothing(bench_schema, addition):
    with psycopg.connect(bench_schema, autocommit=True) as db:
        db.execute(addition)
    before = objects(bench_schema)
    with pytest.raises(bench.ForeignSchema, match="nothing was dropped"):
        bench.claimed_schema(bench_schema, 10)
    assert objects(bench_schema) == before
