"""Benchmark: recalling one customer's memories from the SQLite store against the published dict, as the store grows.

    python scripts/bench_store.py                         # 1k, 100k and 1M stored memories
    python scripts/bench_store.py --sizes 1000 10000      # other sizes

Each store holds SIZE memories, MEMORIES_PER_CUSTOMER per customer, each the size of a real memory (T-101 and its
routing answer). The store is filled in one bulk transaction; then the median time of one `recall(customer)` over
random customers is measured, for SqliteStore (open, indexed query, JSON decoding, close) and for DictStore. Not a
test: the figures depend on the machine.
"""

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

import basic_memory
from memory_cookbook import stores

MEMORIES_PER_CUSTOMER = 10


def memory_for(customer):
    """A memory shaped and sized like a real one: T-101 with its routing answer, under another customer id."""
    state = basic_memory.ticket_state(basic_memory.EARLIER[0])
    state["customer"]["id"] = customer
    team = basic_memory.ROUTE["team"]
    return {"request": state, "jev_answered": {team.instructions: team.criteria["selfhosted_windows"]}}


def fill_sqlite(path, size):
    """A SqliteStore with `size` memories, written in one transaction (a save() each would take hours at 1M)."""
    store = stores.SqliteStore(path)
    template = memory_for("C-0")

    def rows():
        for number in range(size):
            customer = f"C-{number // MEMORIES_PER_CUSTOMER}"
            request = json.dumps({**template["request"], "customer": {"id": customer, "company": "Bench"}})
            yield (customer, f"T-{number}", request, json.dumps(template["jev_answered"]), 0.9, "bench",
                   "2026-11-29T00:00:00+00:00")

    with closing(sqlite3.connect(path)) as db, db:
        db.executemany(stores.INSERT_MEMORY, rows())
    return store


def fill_dict(size):
    """basic_memory.MEMORIES with `size` memories (one memory object per customer, shared by its entries)."""
    basic_memory.MEMORIES.clear()
    for first in range(0, size, MEMORIES_PER_CUSTOMER):
        customer = f"C-{first // MEMORIES_PER_CUSTOMER}"
        basic_memory.MEMORIES[customer] = [memory_for(customer)] * min(MEMORIES_PER_CUSTOMER, size - first)
    return basic_memory.DictStore()


def median_recall_us(store, customers, recalls):
    """Median microseconds of one recall, over `recalls` random customers."""
    times = []
    for customer in random.sample(customers, min(recalls, len(customers))):
        started = time.perf_counter()
        memories = store.recall(customer)
        times.append((time.perf_counter() - started) * 1e6)
        assert len(memories) == MEMORIES_PER_CUSTOMER
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000, 1_000_000])
    parser.add_argument("--recalls", type=int, default=500, help="recalls timed per store")
    args = parser.parse_args()
    random.seed(0)
    header = [("memories", 10), ("customers", 10), ("fill s", 7), ("db MB", 7), ("sqlite µs", 10), ("dict µs", 8),
              ("ratio", 6)]
    print(" ".join(f"{name:>{width}}" for name, width in header))
    for size in args.sizes:
        customers = [f"C-{n}" for n in range(size // MEMORIES_PER_CUSTOMER)]
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            sqlite_store = fill_sqlite(Path(folder) / "bench.sqlite", size)
            fill_seconds = time.perf_counter() - started
            megabytes = (Path(folder) / "bench.sqlite").stat().st_size / 1e6
            sqlite_us = median_recall_us(sqlite_store, customers, args.recalls)
        dict_us = median_recall_us(fill_dict(size), customers, args.recalls)
        print(f"{size:>10,} {len(customers):>10,} {fill_seconds:>7.1f} {megabytes:>7.0f} {sqlite_us:>10.1f}"
              f" {dict_us:>8.2f} {sqlite_us / dict_us:>6.0f}", flush=True)
    print(f"sqlite {sqlite3.sqlite_version}, Python {sys.version.split()[0]}, {MEMORIES_PER_CUSTOMER} memories per"
          " customer; µs = median of one recall(customer), returning decoded memories")


if __name__ == "__main__":
    main()
