"""Benchmark: the dict, SQLite and PostgreSQL stores on this machine, in one run; prints a Markdown table.

    python scripts/bench_store.py                          # 10,000, 100,000 and 1,000,000 memories; 1, 4, 8 writers
    python scripts/bench_store.py --sizes 10000 --saves 100   # a quick run

Recall: the store holds SIZE memories, PER_CUSTOMER (20) for each of SIZE / 20 customers, every memory shaped and sized
like a real one (T-101 and its routing answer); p50 and p99 of one `recall(customer)` over random customers.
Forget: `forget_customer` of FORGETS customers in turn, while another process recalls random other customers as fast
as it can; the slowest of those recalls that overlapped a forget. For PostgreSQL the same for `erase_forgotten`, which
rewrites the partitions the forgets noted (a recall of a customer in the partition being rewritten waits for it).
Saves: 1, 4 and 8 processes each save SAVES memories (one transaction each, as `save` does) for a customer of its own,
all at once; saves per second = all saves / the time from the first start to the last end. The dict store keeps its
memories in each process's own memory, so its processes share nothing (and lose everything when they stop).
PostgreSQL is an embedded server in a temporary folder, or COOKBOOK_DATABASE_URL's (its user must be able to create
schemas). Not a test: the figures depend on the machine.
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

import psutil
from psycopg import sql

from memory_cookbook import postgres_server, postgres_store, stores
from memory_cookbook.locations import load_lesson

basic_memory = load_lesson()  # the lesson, by its path: this script does not run in notebooks/

PER_CUSTOMER, FORGETS, MODEL = 20, 5, "bench"


def memory_for(customer, number):
    """A memory shaped and sized like a real one: T-101 with its routing answer, under another customer and ticket."""
    state = basic_memory.ticket_state(basic_memory.EARLIER[0])
    state["customer"]["id"], state["ticket"]["id"] = customer, f"T-{number}"
    team = basic_memory.ROUTE["team"]
    return {"request": state, "jev_answered": {team.instructions: team.criteria["selfhosted_windows"]}}


def customer_of(number, size):
    return f"C-{number % (size // PER_CUSTOMER)}"


def rows(size):
    for number in range(size):
        customer = customer_of(number, size)
        memory = memory_for(customer, number)
        yield customer, f"T-{number}", json.dumps(memory["request"]), json.dumps(memory["jev_answered"]), 0.9, MODEL


def filled_dict(size):
    store = basic_memory.DictStore()
    shared = memory_for("C-0", 0)  # one object for all: a dict's recall cost does not depend on the memory's size
    for number in range(size):
        store.memories[customer_of(number, size)].append(shared)
    return store


def filled_sqlite(folder, size):
    path = Path(folder) / f"recall-{size}.sqlite"
    stores.SqliteStore(path)  # its tables
    with closing(sqlite3.connect(path)) as db, db:
        db.executemany(stores.INSERT_MEMORY, ((*row, "2026-12-01T00:00:00+00:00") for row in rows(size)))
    return path


def filled_postgres(url, size):
    """The schema bench_SIZE, its memories made by the server itself from one real memory's text."""
    schema = f"bench_{size}"
    postgres_store.create_memory_tables(url, schema)
    template = memory_for("C-TEMPLATE", "TEMPLATE")
    with postgres_store.PostgresStore(url, schema=schema) as store, store.transaction() as db:
        db.execute(sql.SQL("TRUNCATE {}").format(store.memories))
        db.execute(sql.SQL(
            "INSERT INTO {} (customer_id, ticket_id, request, jev_answered, p_remember, model)"
            " SELECT 'C-' || mod(n, %(customers)s), 'T-' || n,"
            " replace(replace(%(request)s, 'C-TEMPLATE', 'C-' || mod(n, %(customers)s)), 'T-TEMPLATE', 'T-' || n)"
            "::json,"
            " %(answered)s::json, 0.9, %(model)s FROM generate_series(0, %(size)s - 1) AS n").format(store.memories),
            {"customers": size // PER_CUSTOMER, "request": json.dumps(template["request"]),
             "answered": json.dumps(template["jev_answered"]), "model": MODEL, "size": size})
    with postgres_store.PostgresStore(url, schema=schema) as store:
        store.execute(sql.SQL("VACUUM ANALYZE {}").format(store.memories))
    return schema


def store_of(kind, where, schema=None):
    if kind == "dict":
        return basic_memory.DictStore()
    if kind == "SQLite":
        return stores.SqliteStore(where)
    return postgres_store.PostgresStore(where, schema=schema)


def recall_percentiles_us(store, size, recalls):
    """p50 and p99 microseconds of one recall of a random customer."""
    random.seed(0)
    times = []
    for _ in range(recalls):
        customer = f"C-{random.randrange(size // PER_CUSTOMER)}"
        started = time.perf_counter()
        memories = store.recall(customer)
        times.append((time.perf_counter() - started) * 1e6)
        assert len(memories) == PER_CUSTOMER, (customer, len(memories))
    cuts = statistics.quantiles(times, n=100)
    return cuts[49], cuts[98]


def recaller(kind, where, schema, size, spared, ready, stop, results):
    """Another app server: recalls random customers other than the ones forgotten, until told to stop; reports each
    recall's (start, end) in wall-clock seconds."""
    store = store_of(kind, where, schema)
    spans, customers = [], size // PER_CUSTOMER
    ready.set()
    while not stop.is_set():
        customer = f"C-{random.randrange(customers)}"
        if customer in spared:
            continue
        started = time.time()
        store.recall(customer)
        spans.append((started, time.time()))
    results.put(spans)


def worst_overlapping_ms(spans, windows):
    return max(((end - start) * 1e3 for start, end in spans
                if any(start < window_end and end > window_start for window_start, window_end in windows)), default=0)


def forget_figures(kind, where, schema, size):
    """(median forget ms, worst concurrent recall ms during the forgets, erase ms, worst recall ms during it)."""
    forgotten = [f"C-{number}" for number in range(FORGETS)]
    spawn = multiprocessing.get_context("spawn")
    ready, stop, results = spawn.Event(), spawn.Event(), spawn.Queue()
    other = spawn.Process(target=recaller, args=(kind, where, schema, size, forgotten, ready, stop, results))
    other.start()
    ready.wait(timeout=120)
    time.sleep(0.5)
    store, forgets, erases = store_of(kind, where, schema), [], []
    for customer in forgotten:
        started = time.time()
        store.forget_customer(customer)
        forgets.append((started, time.time()))
        time.sleep(0.1)
    if kind == "PostgreSQL":
        started = time.time()
        postgres_store.erase_forgotten(where, schema)
        erases.append((started, time.time()))
        store.close()
    time.sleep(0.2)
    stop.set()
    spans = results.get(timeout=120)
    other.join()
    median_forget = statistics.median((end - start) * 1e3 for start, end in forgets)
    erase = (erases[0][1] - erases[0][0]) * 1e3 if erases else None
    return median_forget, worst_overlapping_ms(spans, forgets), erase, worst_overlapping_ms(spans, erases)


def writer(kind, where, customer, saves, ready, go, results):
    """One writing process: waits for every writer to be ready, saves, reports (start, end) in wall-clock seconds."""
    store = store_of(kind, where, "bench_saves")
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
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}),"
            f" {psutil.virtual_memory().total / 2**30:.0f} GiB memory, Python {platform.python_version()},"
            f" SQLite {sqlite3.sqlite_version}")


def cell(value, unit=""):
    if value is None:
        return "-"
    return f"{value:,.{1 if value < 100 else 0}f}{unit}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--recalls", type=int, default=300, help="recalls timed per store and size")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--saves", type=int, default=300, help="saves per writing process")
    args = parser.parse_args()
    kinds = ("dict", "SQLite", "PostgreSQL")
    table = []
    with tempfile.TemporaryDirectory() as folder:
        url, server = postgres_server.memory_database(Path(folder) / "postgres")
        try:
            postgres_store.create_memory_tables(url, "bench_saves")
            with postgres_store.PostgresStore(url, schema="bench_saves") as store:
                version = store.execute("SHOW server_version")[0][0]
            for size in args.sizes:
                started = time.time()
                where = {"dict": None, "SQLite": filled_sqlite(folder, size), "PostgreSQL": url}
                schema = filled_postgres(url, size)
                print(f"{size:,} memories filled in {time.time() - started:.0f} s", flush=True)
                measured = {"dict": filled_dict(size), "SQLite": store_of("SQLite", where["SQLite"]),
                            "PostgreSQL": store_of("PostgreSQL", url, schema)}
                percentiles = {kind: recall_percentiles_us(store, size, args.recalls)
                               for kind, store in measured.items()}
                measured["PostgreSQL"].close()
                for index, name in ((0, "p50"), (1, "p99")):
                    table.append((f"recall, {size:,} memories, {name}",
                                  [cell(percentiles[kind][index], " µs") for kind in kinds]))
                forgets = {kind: forget_figures(kind, where[kind], schema, size) for kind in ("SQLite", "PostgreSQL")}
                table.append((f"forget_customer, {size:,} memories, median",
                              ["-", *(cell(forgets[kind][0], " ms") for kind in ("SQLite", "PostgreSQL"))]))
                table.append((f"worst other recall during a forget, {size:,} memories",
                              ["-", *(cell(forgets[kind][1], " ms") for kind in ("SQLite", "PostgreSQL"))]))
                table.append((f"erase_forgotten ({FORGETS} customers), {size:,} memories",
                              ["-", "-", cell(forgets["PostgreSQL"][2], " ms")]))
                table.append((f"worst other recall during erase_forgotten, {size:,} memories",
                              ["-", "-", cell(forgets["PostgreSQL"][3], " ms")]))
                with postgres_store.PostgresStore(url, schema=schema) as store:
                    store.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
                Path(where["SQLite"]).unlink()
                print(f"{size:,} memories measured after {time.time() - started:.0f} s", flush=True)
            for processes in args.processes:
                rates = {"dict": saves_per_second("dict", None, processes, args.saves),
                         "SQLite": saves_per_second("SQLite", Path(folder) / f"saves-{processes}.sqlite", processes,
                                                    args.saves),
                         "PostgreSQL": saves_per_second("PostgreSQL", url, processes, args.saves)}
                table.append((f"saves per second, {processes} process{'es' if processes > 1 else ''}",
                              [f"{rates[kind]:,.0f}" for kind in kinds]))
        finally:
            if server:
                server.stop()
    print("\n| measure | " + " | ".join(kinds) + " |")
    print("| --- | ---: | ---: | ---: |")
    for name, cells in table:
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n{machine()}, PostgreSQL {version} ({postgres_store.PARTITIONS} partitions per table);"
          f" {PER_CUSTOMER} memories per customer, {args.recalls} recalls per cell, {FORGETS} forgets per size,"
          f" {args.saves} saves per process; the dict's processes share nothing.")


if __name__ == "__main__":
    main()
