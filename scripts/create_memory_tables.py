"""Create the memory store's tables, once, as a role that may create them (it will own them); optionally grant an app
role the row rights it needs. The URL comes from COOKBOOK_DATABASE_URL (not the command line, where `ps` shows it).

    COOKBOOK_DATABASE_URL=postgresql://owner:PASSWORD@db.example.com/support python scripts/create_memory_tables.py
    ... python scripts/create_memory_tables.py --schema memory_cookbook --grant memory_app
    ... python scripts/create_memory_tables.py --erase-forgotten   # the nightly step: rewrite what forgetting left
"""

import argparse
import os
import sys

from memory_cookbook.postgres.errors import DATABASE_URL_VARIABLE, masked
from memory_cookbook.from_notebooks.postgres_store import create_memory_tables, erase_forgotten, grant_row_rights

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", default="memory_cookbook")
    parser.add_argument("--grant", metavar="ROLE",
                        help="give this role USAGE on the schema and its sequences, SELECT, INSERT and DELETE on"
                             " memories and ledger, and EXECUTE on recall_memories, save_memory, log_entry and"
                             " note_for_erasure")
    parser.add_argument("--erase-forgotten", action="store_true", help="only rewrite the partitions forgetting noted")
    args = parser.parse_args()
    url = os.environ.get(DATABASE_URL_VARIABLE) or sys.exit(f"set {DATABASE_URL_VARIABLE} to the owner's URL")
    if args.erase_forgotten:
        erased = erase_forgotten(url, args.schema)
        print("rewrote:", ", ".join(erased["rewritten"]) or "nothing")
        if erased["waited"]:
            print("not granted their lock in time, left for the next run:", ", ".join(erased["waited"]))
        if erased["skipped"]:
            print(f"skipped, as no partition of {args.schema}'s tables (the owner may delete these notes from"
                  f" {args.schema}.to_erase):", ", ".join(erased["skipped"]))
        sys.exit(1 if erased["waited"] or erased["skipped"] else 0)
    create_memory_tables(url, args.schema)
    if args.grant:
        grant_row_rights(url, args.grant, args.schema)
    print(f"the tables of schema {args.schema} are in {masked(url)}" + (f"; {args.grant} may use them" if args.grant
                                                                          else ""))
