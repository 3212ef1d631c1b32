"""Benchmark: the dict, SQLite and PostgreSQL stores on this machine, in one run; prints a Markdown table.

    python scripts/bench_store.py               # recall at 10, 100, 1,000 memories per customer; 1, 4, 8 writers
    python scripts/bench_store.py --saves 100   # fewer saves per writing process

Recall: each store holds CUSTOMERS customers with N memories each, every memory shaped and sized like a real one (T-101
and its routing answer); p50 and p99 of one `recall(customer)` over random customers, decoded memories returned.
Saves: 1, 4 and 8 processes each save SAVES memories (one transaction each, as `save` does) for a customer of its own,
all at once; saves per second = all saves / the time from the first start to the last end. The dict store keeps its
memories in each process's own memory, so its processes share nothing (and lose everything when they stop).
PostgreSQL is an embedded server in a temporary folder, or COOKBOOK_DATABASE_URL's. Not a test: the figures depend on
the machine.
"""

import argparse
import json
import multiprocessing
import os
import platform
import random
import sqlite3
import statistics
import tempfile
import time
from contextlib import closing
from pathlib import Path

from memory_cookbook import postgres_store, stores
from memory_cookbook.locations import load_lesson

basic_memory = load_lesson()  # the lesson, by its path: this script does not run in notebooks/

CUSTOMERS = 20
MODEL = "bench"


def memory_for(customer, number):
    """A memory shaped and sized like a real one: T-101 with its routing answer, under another customer and ticket."""
    state = basic_memory.ticket_state(basic_memory.EARLIER[0])
    state["customer"]["id"], state["ticket"]["id"] = customer, f"T-{number}"
    team = basic_memory.ROUTE["team"]
    return {"request": state, "jev_answered": {team.instructions: team.criteria["selfhosted_windows"]}}


def rows(per_customer):
    for number in range(CUSTOMERS * per_customer):
        customer = f"C-{number % CUSTOMERS}"
        memory = memory_for(customer, number)
        yield customer, f"T-{number}", json.dumps(memory["request"]), json.dumps(memory["jev_answered"]), 0.9, MODEL


def filled_dict(per_customer):
    store = basic_memory.DictStore()
    for customer, _, request, answered, *_ in rows(per_customer):
        store.memories[customer].append({"request": json.loads(request), "jev_answered": json.loads(answered)})
    return store


def filled_sqlite(folder, per_customer):
    path = Path(folder) / f"recall-{per_customer}.sqlite"
    store = stores.SqliteStore(path)
    with closing(sqlite3.connect(path)) as db, db:
        db.executemany(stores.INSERT_MEMORY, [(*row, "2026-12-01T00:00:00+00:00") for row in rows(per_customer)])
    return store


def filled_postgres(url, per_customer):
    store = postgres_store.PostgresStore(url, schema=f"bench_recall_{per_customer}")
    with store.transaction() as db:
        db.execute(f"TRUNCATE {store.schema}.memories")
        db.cursor().executemany(f"INSERT INTO {store.schema}.memories (customer_id, ticket_id, request, jev_answered,"
                                " p_remember, model) VALUES (%s, %s, %s, %s, %s, %s)", list(rows(per_customer)))
    store.execute(f"VACUUM ANALYZE {store.schema}.memories")
    return store


def recall_percentiles_us(store, per_customer, recalls):
    """p50 and p99 microseconds of one recall of a random customer."""
    random.seed(0)
    times = []
    for _ in range(recalls):
        customer = f"C-{random.randrange(CUSTOMERS)}"
        started = time.perf_counter()
        memories = store.recall(customer)
        times.append((time.perf_counter() - started) * 1e6)
        assert len(memories) == per_customer
    cuts = statistics.quantiles(times, n=100)
    return cuts[49], cuts[98]


def store_for_writer(kind, where):
    if kind == "dict":
        return basic_memory.DictStore()
    if kind == "SQLite":
        return stores.SqliteStore(where)
    return postgres_store.PostgresStore(where, schema="bench_saves")


def writer(kind, where, customer, saves, ready, go, results):
    """One writing process: waits for every writer to be ready, saves, reports (start, end) in wall-clock seconds."""
    store = store_for_writer(kind, where)
    ready.wait()
    go.wait()
    memory = memory_for(customer, 0)
    started = time.time()
    for number in range(saves):
        memory["request"]["ticket"]["id"] = f"T-{number}"
        store.save(customer, memory, p_remember=0.9, model=MODEL)
    results.put((started, time.time()))
    if kind == "PostgreSQL":
        store.close()


def saves_per_second(kind, where, processes, saves):
    spawn = multiprocessing.get_context("spawn")
    ready, go, results = spawn.Barrier(processes + 1), spawn.Barrier(processes + 1), spawn.Queue()
    workers = [spawn.Process(target=writer, args=(kind, where, f"C-W{n}", saves, ready, go, results))
               for n in range(processes)]
    for worker in workers:
        worker.start()
    ready.wait()
    go.wait()
    spans = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0
    return processes * saves / (max(end for _, end in spans) - min(start for start, _ in spans))


def machine():
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()},"
            f" SQLite {sqlite3.sqlite_version}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-customer", type=int, nargs="+", default=[10, 100, 1_000])
    parser.add_argument("--recalls", type=int, default=300, help="recalls timed per store and size")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--saves", type=int, default=300, help="saves per writing process")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url, server = postgres_store.memory_database(Path(folder) / "postgres")
        try:
            version = postgres_store.PostgresStore(url, schema="bench_saves").execute("SHOW server_version")[0][0]
            recall_rows = []
            for per_customer in args.per_customer:
                measured = {"dict": filled_dict(per_customer), "SQLite": filled_sqlite(folder, per_customer),
                            "PostgreSQL": filled_postgres(url, per_customer)}
                percentiles = {kind: recall_percentiles_us(store, per_customer, args.recalls)
                               for kind, store in measured.items()}
                recall_rows.append((per_customer, percentiles))
                measured["PostgreSQL"].execute(f"DROP SCHEMA {measured['PostgreSQL'].schema} CASCADE")
                measured["PostgreSQL"].close()
            save_rows = []
            for processes in args.processes:
                rates = {"dict": saves_per_second("dict", None, processes, args.saves),
                         "SQLite": saves_per_second("SQLite", Path(folder) / f"saves-{processes}.sqlite", processes,
                                                    args.saves),
                         "PostgreSQL": saves_per_second("PostgreSQL", url, processes, args.saves)}
                save_rows.append((processes, rates))
        finally:
            if server:
                server.stop()
    kinds = ("dict", "SQLite", "PostgreSQL")
    print("| measure | " + " | ".join(kinds) + " | PostgreSQL / SQLite |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for per_customer, percentiles in recall_rows:
        for index, name in ((0, "p50"), (1, "p99")):
            cells = [f"{percentiles[kind][index]:,.{1 if percentiles[kind][index] < 100 else 0}f} µs" for kind in kinds]
            ratio = percentiles["PostgreSQL"][index] / percentiles["SQLite"][index]
            print(f"| recall, {per_customer:,} memories, {name} | " + " | ".join(cells) + f" | {ratio:.2f}× |")
    for processes, rates in save_rows:
        cells = [f"{rates[kind]:,.0f}" for kind in kinds]
        ratio = rates["PostgreSQL"] / rates["SQLite"]
        print(f"| saves per second, {processes} process{'es' if processes > 1 else ''} | " + " | ".join(cells)
              + f" | {ratio:.2f}× |")
    print(f"\n{machine()}, PostgreSQL {version}; {CUSTOMERS} customers, {args.recalls} recalls per cell,"
          f" {args.saves} saves per process; the dict's processes share nothing.")


if __name__ == "__main__":
    main()
