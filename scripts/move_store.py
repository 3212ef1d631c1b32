"""Move a whole memory store from a SQLite file (notebook 07's SqliteStore) into PostgreSQL (notebook 09's
PostgresStore), customer by customer; stopped and run again, it writes nothing twice; the file is only read. The
target's URL comes from COOKBOOK_DATABASE_URL (not the command line, where `ps` shows it); its tables must be there
(scripts/create_memory_tables.py).

    export COOKBOOK_DATABASE_URL=postgresql://owner:PASSWORD@db.example.com/support
    python scripts/move_store.py memories.sqlite --schema memory_cookbook
"""

import argparse
import os
import sys
from pathlib import Path

from memory_cookbook.desk.move import StoresDiffer, move_store
from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.from_notebooks.stores import SqliteStore
from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE, masked

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sqlite_file", type=Path, help="the SQLite store to move (it is only read)")
    parser.add_argument("--schema", default="memory_cookbook", help="the PostgreSQL store's schema")
    args = parser.parse_args()
    url = os.environ.get(DATABASE_URL_VARIABLE) or sys.exit(f"set {DATABASE_URL_VARIABLE} to the target's URL")
    if not args.sqlite_file.is_file():
        sys.exit(f"{args.sqlite_file}: no such file (the SQLite store to move)")
    with PostgresStore(url, schema=args.schema) as target:
        try:
            report = move_store(SqliteStore(args.sqlite_file), target)
        except StoresDiffer as differ:
            sys.exit(str(differ))
    print(f"{args.sqlite_file} → schema {args.schema} at {masked(url)}: {report}")
