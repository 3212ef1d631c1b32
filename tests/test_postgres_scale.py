"""At a desk's size (1,000,000 memories, 50,000 customers with 20 each): forgetting a customer makes no other app
server's recall wait more than 50 ms, and after the owner's erase no file of the tables holds the customer's id,
company name or ticket ids. About two minutes and 2 GB of disk: run only with --run-scale (the suite's other
PostgreSQL tests check the same rules on a few memories)."""

import multiprocessing
import random
import time

import pytest
from psycopg import sql
from conftest import APP_ROLE
from test_postgres_store import holding, table_files

from memory_cookbook.from_notebooks.postgres_store import (PostgresStore, create_memory_tables, erase_forgotten,
                                                           grant_row_rights)

pytestmark = [pytest.mark.slow, pytest.mark.scale]
MEMORIES, PER_CUSTOMER = 1_000_000, 20
CUSTOMERS = MEMORIES // PER_CUSTOMER
FORGOTTEN = 1042  # C-01042, "Company 01042", and its 20 tickets T-0001042, T-0051042, ...
SCHEMA = "scale_million"
LONGEST_RECALL_MS = 50


def customer(number):
    return f"C-{number:05d}"  # a fixed width: no id is part of another


def fill(url):
    """The tables, made by their owner with 32 partitions each, and 1,000,000 memories the server writes itself, each
    about the size of a real one (a ticket's state and its routing answer)."""
    create_memory_tables(url, SCHEMA)
    with PostgresStore(url, schema=SCHEMA, statement_timeout=600) as store:  # a fill, not a call: minutes allowed
        with store.transaction() as db:
            db.execute(sql.SQL(
                "INSERT INTO {} (customer_id, ticket_id, request, jev_answered, p_remember, model)"
                " SELECT 'C-' || lpad(mod(n, %(customers)s)::text, 5, '0'), 'T-' || lpad(n::text, 7, '0'),"
                " json_build_object('customer', json_build_object('id', 'C-' || lpad(mod(n, %(customers)s)::text, 5,"
                "  '0'), 'company', 'Company ' || lpad(mod(n, %(customers)s)::text, 5, '0')), 'ticket',"
                "  json_build_object('id', 'T-' || lpad(n::text, 7, '0'), 'received_on', '2026-08-04', 'subject',"
                "  'Adding an admin', 'messages', json_build_array(json_build_object('from', 'customer', 'text',"
                "  repeat('We run the self-hosted edition on Windows Server 2022. ', 6))))),"
                " json_build_object('Which support team should handle `ticket`?', 'Self-hosted team, Windows:"
                "  installs, upgrades and performance of the self-hosted edition on Windows Server'), 0.9, 'scale'"
                " FROM generate_series(0, %(memories)s - 1) AS n").format(store.memories),
                {"customers": CUSTOMERS, "memories": MEMORIES})
        store.execute(sql.SQL("VACUUM ANALYZE {}").format(store.memories))
    return SCHEMA


def recalls_until_stopped(url, ready, stop, results):
    """Another app server, as the app role: recalls random customers other than the forgotten one as fast as it can;
    reports each recall's (start, end)."""
    spans = []
    with PostgresStore(url, schema=SCHEMA) as store:
        ready.set()
        while not stop.is_set():
            number = random.randrange(CUSTOMERS)
            if number != FORGOTTEN:
                started = time.time()
                assert len(store.recall(customer(number))) == PER_CUSTOMER
                spans.append((started, time.time()))
    results.put(spans)


def longest_overlapping_ms(spans, start, end):
    return max((finished - began) * 1e3 for began, finished in spans if began < end and finished > start)


def test_at_a_million_memories_a_forget_stalls_no_other_recall_and_the_erase_leaves_no_byte(
        postgres_server, app_role_url):
    fill(postgres_server.url)
    grant_row_rights(postgres_server.url, APP_ROLE, SCHEMA)
    spawn = multiprocessing.get_context("spawn")
    ready, stop, results = spawn.Event(), spawn.Event(), spawn.Queue()
    other = spawn.Process(target=recalls_until_stopped, args=(app_role_url, ready, stop, results))
    other.start()
    try:
        assert ready.wait(timeout=60)
        time.sleep(0.5)
        with PostgresStore(app_role_url, schema=SCHEMA) as app:
            started = time.time()
            app.forget_customer(customer(FORGOTTEN))
            forgot = time.time()
            assert app.recall(customer(FORGOTTEN)) == []
        time.sleep(0.3)
    finally:
        stop.set()
        spans = results.get(timeout=60)
        other.join(timeout=60)
    print(f"forget: {(forgot - started) * 1e3:.1f} ms; longest other recall meanwhile:"
          f" {longest_overlapping_ms(spans, started, forgot):.1f} ms of {len(spans)} recalls")
    assert longest_overlapping_ms(spans, started, forgot) <= LONGEST_RECALL_MS

    with PostgresStore(postgres_server.url, schema=SCHEMA) as owner:
        erase_started = time.time()
        erased = erase_forgotten(postgres_server.url, SCHEMA)["rewritten"]
        print(f"erase_forgotten: {(time.time() - erase_started) * 1e3:.0f} ms, rewrote {erased}")
        assert len(erased) == 1 and erased[0].startswith("memories_")  # its partition (no ledger was filled)
        files = table_files(owner, postgres_server)
        tickets = [f"T-{number:07d}" for number in range(FORGOTTEN, MEMORIES, CUSTOMERS)]
        assert [text for text in (customer(FORGOTTEN), f"Company {FORGOTTEN:05d}", *tickets)
                if holding(files, text)] == []
        assert holding(files, customer(FORGOTTEN + 1))  # another customer's memories are still there
        owner.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(SCHEMA)))
