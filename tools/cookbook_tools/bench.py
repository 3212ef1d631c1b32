"""Benchmark: notebook 09's PostgreSQL store against the plain SQL it runs, side by side, at each size; prints the
pairs and their ratios, and writes them as JSON.

    python scripts/bench_store.py                                  # 10,000, 100,000 and 1,000,000 memories
    python scripts/bench_store.py --sizes 10000 --json bench.json  # one size, in well under a minute

At each size the store's tables hold SIZE memories, PER_CUSTOMER (20) for each of SIZE / 20 customers, every memory
shaped and sized like a real one (T-101 and its routing answer). Each pair is measured in one run, alternating, so
that the machine's load weighs on both alike:

- recall: the store's `recall(customer)`, as the app role (row-level security on), against the floor: a prepared
  `SELECT` of the same rows over one autocommit connection, plus `json.loads` of each; random customers, the order
  of the pair drawn each time. p50 and p99, and the ratio of the p50s (aim: at most 1.5).
- save: `save()` against a plain autocommit `INSERT` of the same row (aim: at most 1.5 for the p50s).
- eight writers: 8 processes each saving and logging SAVES memories (`save` then `log`) against 8 processes each
  making the same two `INSERT`s; saves a second, over rounds that alternate (aim: the store's at least 0.7 times).
- forget: `forget_customer` of FORGETS customers while another process recalls other customers as fast as it can,
  then `erase_forgotten`; the median forget and the slowest overlapping recall of each.

The server: an embedded one in a temporary folder, or COOKBOOK_DATABASE_URL's (its role must be able to create
schemas; COOKBOOK_APP_DATABASE_URL, if set, is the app role, else the store connects as that role too). The bench
writes only in schemas bench_store_SIZE that it creates, and refuses one that is there and holds anything it did not
make or write; it drops what it made by name, never with CASCADE. --other-stores adds notebook 04's dict and notebook
07's SQLite file beside it. Not a test: the figures depend on the machine.
"""

import argparse
import json
import multiprocessing
import os
import platform
import random
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import psutil
import psycopg
from psycopg import sql

from memory_cookbook.from_notebooks import postgres_store, stores
from memory_cookbook.postgres import server as postgres_server
from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE
from memory_cookbook.postgres.lesson_database import APP_DATABASE_URL_VARIABLE
import jev_memory_lesson
from memory_cookbook.dict_store import DictStore

PER_CUSTOMER, FORGETS, MODEL, WRITERS = 20, 5, "bench", 8
AIMS = {"recall_p50_ratio": 1.5, "save_p50_ratio": 1.5, "eight_writers_ratio": 0.7}
BENCH_MARK = "made by scripts/bench_store.py"  # the comment of the schemas it makes, and may drop
APP_ROLE = "bench_app"  # made on the bench's own server only
# The statements the store's functions run (recall_memories: the memories in force; save_memory: with the threshold
# and the answer's probabilities beside the memory, as the wrapper saves it).
RECALL_FLOOR = ("SELECT request::text, jev_answered::text FROM {} WHERE customer_id = %s AND"
                f" {postgres_store.IN_FORCE} ORDER BY id")
SAVE_FLOOR = ("INSERT INTO {} (customer_id, ticket_id, request, jev_answered, p_remember, model, remember_at,"
              " answer_probabilities, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)")
THRESHOLD = 0.5
LOG_FLOOR = "INSERT INTO {} (customer_id, entry) VALUES (%s, %s)"


class ForeignSchema(SystemExit):
    """A schema the bench would write in holds what the bench did not write."""


def memory_for(customer: str, number: int | str) -> Any:
    """A memory shaped and sized like a real one: T-101 with its routing answer, under another customer and ticket."""
    state = jev_memory_lesson.ticket_state(jev_memory_lesson.EARLIER[0])
    state["customer"]["id"], state["ticket"]["id"] = customer, f"T-{number}"
    team = jev_memory_lesson.ROUTE["team"]
    return {"request": state, "jev_answered": {team.instructions: team.criteria["selfhosted_windows"]}}


def chosen_at(memory: Any) -> dict[str, float]:
    """The answer's probability, as the wrapper saves it beside the memory (T-101's routing answer: 0.57)."""
    return {question: 0.57 for question in memory["jev_answered"]}


def entry_for(customer: str, number: int) -> Any:
    return {"customer": customer, "ticket": f"T-{number}", "source": MODEL}


def customer_of(number: int, size: int) -> str:
    return f"C-{number % (size // PER_CUSTOMER)}"


STORE_PARTITION = re.compile(r"(memories|ledger)_[0-9]{2}")  # the partitions create_memory_tables names
STORE_PARTS = """
SELECT (SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent IN (to_regclass(%(memories)s), to_regclass(%(ledger)s))),
       (SELECT array_agg(p.oid::regprocedure::text) FROM pg_proc p
        WHERE p.pronamespace = %(schema)s::regnamespace AND p.proname = ANY (%(functions)s)),
       to_regclass(%(memories)s) IS NOT NULL AND to_regclass(%(ledger)s) IS NOT NULL
"""


def dropped(db: psycopg.Connection[Any], schema: str) -> Any:
    """Drop what the benchmark made in `schema`, then the schema, all in one transaction, by name and without
    CASCADE: the store's functions and tables (their partitions, sequences and indexes go with them). Anything else in
    the schema (a table, a function, another partition), anything elsewhere that depends on what is there (a view), or
    a row the benchmark did not write, and nothing is dropped: ForeignSchema says what."""
    names = {"schema": schema, "memories": sql.Identifier(schema, "memories").as_string(db),
             "ledger": sql.Identifier(schema, "ledger").as_string(db),
             "functions": [*postgres_store.FUNCTIONS, "note_for_erasure"]}
    refused = (f"schema {schema} holds what this benchmark did not make or write, or something depends on what it"
               " made; nothing was dropped. The benchmark drops only what it made: drop the rest yourself if it is"
               " yours to drop, or run the benchmark on another database (or its own server: leave"
               " COOKBOOK_DATABASE_URL unset)")
    with db.transaction():
        partitions, functions, tables = db.execute(STORE_PARTS, names).fetchone()
        if [name for name in partitions or [] if not STORE_PARTITION.fullmatch(name)]:
            raise ForeignSchema(f"{refused}: partitions it did not make, {partitions}")
        if tables and db.execute(sql.SQL("SELECT EXISTS (SELECT FROM {} WHERE model <> %s) OR EXISTS (SELECT FROM {}"
                                         " WHERE entry->>'source' IS DISTINCT FROM %s)").format(
                sql.Identifier(schema, "memories"), sql.Identifier(schema, "ledger")), (MODEL, MODEL)).fetchone()[0]:
            raise ForeignSchema(f"{refused}: rows of another model than {MODEL!r}")
        try:
            for function in functions or []:
                db.execute(sql.SQL("DROP FUNCTION {}").format(sql.SQL(function)))  # regprocedure's text: quoted
            db.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.SQL(", ").join(
                sql.Identifier(schema, name) for name in ("memories", "ledger", "to_erase"))))
            db.execute(sql.SQL("DROP SCHEMA {}").format(sql.Identifier(schema)))
        except psycopg.errors.DependentObjectsStillExist as error:
            raise ForeignSchema(f"{refused}: {' '.join(str(error.diag.message_detail or error).split())}") from None


def claimed_schema(url: str, size: int) -> str:
    """bench_store_SIZE, new and empty: one the bench made before (its comment says so) and that holds only what it
    made and wrote is dropped first (dropped()); any other schema of that name is refused, and left as it is."""
    schema = f"bench_store_{size}"
    with psycopg.connect(url, autocommit=True) as db:
        found = db.execute("SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s",
                           (schema,)).fetchone()
        if found and found[0] != BENCH_MARK:
            raise ForeignSchema(
                f"schema {schema} is already in the database, and this benchmark did not make it (it marks its"
                f" schemas with the comment {BENCH_MARK!r}): it writes only in schemas it makes. Drop that schema"
                " yourself if it is yours to drop, or run the benchmark on another database (or its own server:"
                " leave COOKBOOK_DATABASE_URL unset).")
        if found:
            dropped(db, schema)
        db.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        db.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(sql.Identifier(schema), sql.Literal(BENCH_MARK)))
    return schema


def filled(url: str, size: int, app_role: str | None) -> str:
    """The store's tables in a schema of the bench's own, its memories made by the server itself from one real
    memory's text; `app_role` given the row rights."""
    schema = claimed_schema(url, size)
    postgres_store.create_memory_tables(url, schema)
    if app_role:
        postgres_store.grant_row_rights(url, app_role, schema)
    template = memory_for("C-TEMPLATE", "TEMPLATE")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(sql.SQL(
            "INSERT INTO {} (customer_id, ticket_id, request, jev_answered, p_remember, model)"
            " SELECT 'C-' || mod(n, %(customers)s), 'T-' || n,"
            " replace(replace(%(request)s, 'C-TEMPLATE', 'C-' || mod(n, %(customers)s)), 'T-TEMPLATE', 'T-' || n)"
            "::json, %(answered)s::json, 0.9, %(model)s FROM generate_series(0, %(size)s - 1) AS n").format(
            sql.Identifier(schema, "memories")),
            {"customers": size // PER_CUSTOMER, "request": json.dumps(template["request"]),
             "answered": json.dumps(template["jev_answered"]), "model": MODEL, "size": size})
        db.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(schema, "memories")))
    return schema


def timed_us(call: Callable[..., object], *arguments: object) -> float:
    started = time.perf_counter()
    call(*arguments)
    return (time.perf_counter() - started) * 1e6


def percentile(values: list[float], cut: int) -> float:
    return statistics.quantiles(values, n=100)[cut - 1]


def side_by_side(pair: dict[str, Callable[..., object]], times: int,
                 draw: Callable[[], tuple[object, ...]]) -> dict[str, list[float]]:
    """Each time, the arguments `draw()` gives to both calls of `pair` ({name: call}), in an order drawn each time
    too: {name: [µs, ...]}."""
    spent = {name: [] for name in pair}
    for _ in range(times):
        arguments = draw()
        for name in random.sample(list(pair), len(pair)):
            spent[name].append(timed_us(pair[name], *arguments))
    return spent


def recall_pair(owner_url: str, app_url: str, schema: str, size: int, recalls: int) -> dict[str, list[float]]:
    random.seed(0)
    query = sql.SQL(RECALL_FLOOR).format(sql.Identifier(schema, "memories"))
    with postgres_store.PostgresStore(app_url, schema=schema) as store, \
            psycopg.connect(owner_url, autocommit=True, prepare_threshold=0) as floor:
        def recall_floor(customer: str) -> list[tuple[Any, Any]]:
            return [(json.loads(request), json.loads(answered))
                    for request, answered in floor.execute(query, (customer,)).fetchall()]

        def whole(recall: Callable[[str], list[Any]]) -> Callable[[str], object]:
            # each recall finds the customer's 20 memories
            return lambda customer: len(recall(customer)) == PER_CUSTOMER or sys.exit(f"{customer}: not 20 memories")

        return side_by_side({"store": whole(store.recall), "floor": whole(recall_floor)}, recalls,
                            lambda: (f"C-{random.randrange(size // PER_CUSTOMER)}",))


def save_pair(owner_url: str, app_url: str, schema: str, saves: int) -> dict[str, list[float]]:
    """The store's save against the plain INSERT of the same row, made from the same memory (json.dumps included,
    as recall's floor includes json.loads)."""
    memory = memory_for("S-1", 0)
    query = sql.SQL(SAVE_FLOOR).format(sql.Identifier(schema, "memories"))
    with postgres_store.PostgresStore(app_url, schema=schema) as store, \
            psycopg.connect(owner_url, autocommit=True, prepare_threshold=0) as floor:
        def save_floor() -> None:
            floor.execute(query, ("S-1", "T-0", json.dumps(memory["request"]), json.dumps(memory["jev_answered"]),
                                  0.9, MODEL, THRESHOLD, json.dumps(chosen_at(memory)), None))

        def save_store() -> None:
            store.save("S-1", memory, p_remember=0.9, model=MODEL, remember_at=THRESHOLD,
                       answer_probabilities=chosen_at(memory))

        return side_by_side({"store": save_store, "floor": save_floor}, saves, tuple)


def writer(kind: str, owner_url: str, app_url: str, schema: str, customer: str, saves: int, ready: Any, go: Any,
           results: Any) -> None:
    """One writing process: `saves` saves, each with its ledger entry, by the store or by plain INSERTs; reports its
    (start, end) in wall-clock seconds."""
    memory = memory_for(customer, 0)
    if kind == "store":
        store = postgres_store.PostgresStore(app_url, schema=schema)

        def save_and_log(number: int) -> None:
            memory["request"]["ticket"]["id"] = f"T-{number}"
            store.save(customer, memory, p_remember=0.9, model=MODEL, remember_at=THRESHOLD,
                       answer_probabilities=chosen_at(memory))
            store.log(entry_for(customer, number))
    else:
        db = psycopg.connect(owner_url, autocommit=True, prepare_threshold=0)
        save_query = sql.SQL(SAVE_FLOOR).format(sql.Identifier(schema, "memories"))
        log_query = sql.SQL(LOG_FLOOR).format(sql.Identifier(schema, "ledger"))

        def save_and_log(number: int) -> None:
            memory["request"]["ticket"]["id"] = f"T-{number}"
            db.execute(save_query, (customer, f"T-{number}", json.dumps(memory["request"]),
                                    json.dumps(memory["jev_answered"]), 0.9, MODEL, THRESHOLD,
                                    json.dumps(chosen_at(memory)), None))
            db.execute(log_query, (customer, json.dumps(entry_for(customer, number))))
    ready.wait()
    go.wait()
    started = time.time()
    for number in range(saves):
        save_and_log(number)
    results.put((started, time.time()))
    (store if kind == "store" else db).close()


def saves_per_second(kind: str, owner_url: str, app_url: str, schema: str, saves: int) -> float:
    fork = multiprocessing.get_context("fork")  # the parent holds no connection meanwhile
    ready, go, results = fork.Barrier(WRITERS + 1), fork.Barrier(WRITERS + 1), fork.Queue()
    workers = [fork.Process(target=writer, args=(kind, owner_url, app_url, schema, f"W-{kind}-{n}", saves, ready,
                                                 go, results)) for n in range(WRITERS)]
    for worker in workers:
        worker.start()
    ready.wait()
    go.wait()
    spans = [results.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join()
        assert worker.exitcode == 0, f"a {kind} writer failed"
    return WRITERS * saves / (max(end for _, end in spans) - min(start for start, _ in spans))


def writers_pair(owner_url: str, app_url: str, schema: str, saves: int, rounds: int) -> dict[str, float]:
    """Saves a second of 8 store writers and 8 plain writers, in rounds that alternate: the median of each."""
    rates = {"store": [], "floor": []}
    for number in range(rounds):
        for kind in ("store", "floor") if number % 2 == 0 else ("floor", "store"):
            rates[kind].append(saves_per_second(kind, owner_url, app_url, schema, saves))
    return {kind: statistics.median(values) for kind, values in rates.items()}


def recaller(url: str, schema: str, size: int, spared: set[str], ready: Any, stop: Any, results: Any) -> None:
    """Another app server: recalls random customers other than the ones forgotten, until told to stop; reports each
    recall's (start, end) in wall-clock seconds."""
    with postgres_store.PostgresStore(url, schema=schema) as store:
        spans, customers = [], size // PER_CUSTOMER
        ready.set()
        while not stop.is_set():
            customer = f"C-{random.randrange(customers)}"
            if customer not in spared:
                started = time.time()
                store.recall(customer)
                spans.append((started, time.time()))
    results.put(spans)


def worst_overlapping_ms(spans: list[tuple[float, float]], windows: list[tuple[float, float]]) -> float:
    return max(((end - start) * 1e3 for start, end in spans
                if any(start < window_end and end > window_start for window_start, window_end in windows)), default=0)


def forget_figures(owner_url: str, app_url: str, schema: str, size: int) -> dict[str, Any]:
    """{median forget, worst other recall during the forgets, erase, worst other recall during it} in ms."""
    forgotten = [f"C-{number}" for number in range(FORGETS)]
    spawn = multiprocessing.get_context("spawn")
    ready, stop, results = spawn.Event(), spawn.Event(), spawn.Queue()
    other = spawn.Process(target=recaller, args=(app_url, schema, size, forgotten, ready, stop, results))
    other.start()
    ready.wait(timeout=120)
    time.sleep(0.5)
    forgets = []
    with postgres_store.PostgresStore(app_url, schema=schema) as store:
        for customer in forgotten:
            started = time.time()
            store.forget_customer(customer)
            forgets.append((started, time.time()))
            time.sleep(0.1)
    started = time.time()
    erased = postgres_store.erase_forgotten(owner_url, schema)
    erase = (started, time.time())
    time.sleep(0.2)
    stop.set()
    spans = results.get(timeout=120)
    other.join()
    assert not erased["waited"] and not erased["skipped"], erased
    return {"forget_median_ms": statistics.median((end - start) * 1e3 for start, end in forgets),
            "worst_recall_during_forget_ms": worst_overlapping_ms(spans, forgets),
            "erase_ms": (erase[1] - erase[0]) * 1e3, "partitions_erased": len(erased["rewritten"]),
            "worst_recall_during_erase_ms": worst_overlapping_ms(spans, [erase])}


def other_stores(folder: str | Path, size: int, recalls: int) -> dict[str, float]:
    """Notebook 04's dict and notebook 07's SQLite file: recall p50 (µs) at this size."""
    dict_store = DictStore()
    for number in range(size):
        customer = customer_of(number, size)
        dict_store.save(customer, memory_for(customer, number), p_remember=0.9, model=MODEL)
    path = Path(folder) / f"recall-{size}.sqlite"
    stores.SqliteStore(path)  # its tables
    with closing(sqlite3.connect(path)) as db, db:
        db.executemany(stores.INSERT_MEMORY, (
            (customer, f"T-{number}", json.dumps(memory["request"]), json.dumps(memory["jev_answered"]),
             json.dumps(chosen_at(memory)), 0.9, THRESHOLD, MODEL, "2026-12-01T00:00:00.000000+00:00", None, None,
             None, None) for number in range(size)
            for customer in [customer_of(number, size)] for memory in [memory_for(customer, number)]))
    sqlite_store, customers = stores.SqliteStore(path), size // PER_CUSTOMER
    random.seed(0)
    spent = {"dict": [], "SQLite": []}
    for _ in range(recalls):
        customer = f"C-{random.randrange(customers)}"
        spent["dict"].append(timed_us(dict_store.recall, customer))
        spent["SQLite"].append(timed_us(sqlite_store.recall, customer))
    path.unlink()
    return {f"{kind}_recall_p50_us": statistics.median(values) for kind, values in spent.items()}


def machine(version: str) -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"system": f"{platform.system()} {platform.machine()}", "cores": os.cpu_count(), "cpu": cpu,
            "memory_gib": round(psutil.virtual_memory().total / 2**30), "python": platform.python_version(),
            "postgresql": version, "partitions": postgres_store.PARTITIONS, "load_average": os.getloadavg()}


def measured(owner_url: str, app_url: str, app_role: str | None, size: int, args: argparse.Namespace,
             folder: str | Path) -> dict[str, Any]:
    started = time.time()
    schema = filled(owner_url, size, app_role)
    figures = {"fill_seconds": time.time() - started}
    print(f"{size:,} memories ({size // PER_CUSTOMER:,} customers, {PER_CUSTOMER} each) filled in"
          f" {figures['fill_seconds']:.0f} s", flush=True)
    recall = recall_pair(owner_url, app_url, schema, size, args.recalls)
    save = save_pair(owner_url, app_url, schema, args.saves)
    writers = writers_pair(owner_url, app_url, schema, args.writer_saves, args.rounds)
    for name, spent in (("recall", recall), ("save", save)):
        figures[f"{name}_p50_us"] = {kind: statistics.median(values) for kind, values in spent.items()}
        figures[f"{name}_p99_us"] = {kind: percentile(values, 99) for kind, values in spent.items()}
        figures[f"{name}_p50_ratio"] = figures[f"{name}_p50_us"]["store"] / figures[f"{name}_p50_us"]["floor"]
    figures["eight_writers_saves_per_second"] = writers
    figures["eight_writers_ratio"] = writers["store"] / writers["floor"]
    figures.update(forget_figures(owner_url, app_url, schema, size))
    if args.other_stores:
        figures.update(other_stores(folder, size, args.recalls))
    figures["seconds"] = time.time() - started
    print_size(size, figures)
    with psycopg.connect(owner_url, autocommit=True) as db:
        dropped(db, schema)
    return figures


def within(name: str, ratio: float) -> bool:
    return ratio <= AIMS[name] if name != "eight_writers_ratio" else ratio >= AIMS[name]


def print_size(size: int, figures: dict[str, Any]) -> None:
    rows = [("recall p50", figures["recall_p50_us"], "µs", "recall_p50_ratio"),
            ("recall p99", figures["recall_p99_us"], "µs", None),
            ("save p50", figures["save_p50_us"], "µs", "save_p50_ratio"),
            ("save p99", figures["save_p99_us"], "µs", None),
            (f"{WRITERS} writers", figures["eight_writers_saves_per_second"], "saves/s", "eight_writers_ratio")]
    for label, pair, unit, ratio in rows:
        line = f"  {label:<12} store {pair['store']:>9,.0f} {unit:<7}  floor {pair['floor']:>9,.0f} {unit:<7}"
        if ratio:
            aim = ("≤ " if ratio != "eight_writers_ratio" else "≥ ") + str(AIMS[ratio])
            line += (f"  ratio {figures[ratio]:.2f} (aim {aim}:"
                     f" {'met' if within(ratio, figures[ratio]) else 'NOT met'})")
        print(line)
    print(f"  forget: median {figures['forget_median_ms']:.1f} ms, worst other recall meanwhile"
          f" {figures['worst_recall_during_forget_ms']:.1f} ms; erase_forgotten of {figures['partitions_erased']}"
          f" partitions {figures['erase_ms']:,.0f} ms, worst other recall meanwhile"
          f" {figures['worst_recall_during_erase_ms']:.1f} ms", flush=True)
    if "dict_recall_p50_us" in figures:
        print(f"  other stores' recall p50: dict {figures['dict_recall_p50_us']:.1f} µs, SQLite"
              f" {figures['SQLite_recall_p50_us']:,.0f} µs", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures to this file")
    parser.add_argument("--recalls", type=int, default=1000, help="recall pairs timed per size")
    parser.add_argument("--saves", type=int, default=300, help="save pairs timed per size")
    parser.add_argument("--writer-saves", type=int, default=150, help="saves (and logs) per writing process")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of 8 store and 8 plain writers")
    parser.add_argument("--other-stores", action="store_true", help="also the dict and SQLite stores' recall")
    args = parser.parse_args()
    results = {"sizes": {}}
    with tempfile.TemporaryDirectory() as folder:
        if os.environ.get(DATABASE_URL_VARIABLE):
            owner_url, server = os.environ[DATABASE_URL_VARIABLE], None
            app_url, app_role = os.environ.get(APP_DATABASE_URL_VARIABLE) or owner_url, None
            if os.environ.get(APP_DATABASE_URL_VARIABLE):
                with psycopg.connect(app_url) as db:
                    app_role = db.execute("SELECT current_user").fetchone()[0]
        else:
            server = postgres_server.EmbeddedServer(Path(folder) / "postgres")
            owner_url, app_role = server.url, APP_ROLE
            with psycopg.connect(owner_url, autocommit=True) as db:
                db.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(APP_ROLE)))
            app_url = psycopg.conninfo.make_conninfo(owner_url, user=APP_ROLE)
        try:
            with psycopg.connect(owner_url) as db:
                version = db.execute("SHOW server_version").fetchone()[0]
            results["machine"] = machine(version)
            print(f"PostgreSQL {version}, {'its own server' if server else 'the server of ' + DATABASE_URL_VARIABLE},"
                  f" the store as {app_role or 'the owner'}; load average {results['machine']['load_average']}")
            for size in args.sizes:
                results["sizes"][str(size)] = measured(owner_url, app_url, app_role, size, args, folder)
        finally:
            if server:
                server.stop()
    results["machine"]["load_average_after"] = os.getloadavg()
    print("\n| memories | recall p50 ratio | save p50 ratio | 8 writers ratio |")
    print("| ---: | ---: | ---: | ---: |")
    for size, figures in results["sizes"].items():
        print(f"| {int(size):,} | " + " | ".join(f"{figures[name]:.2f}" for name in AIMS) + " |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
