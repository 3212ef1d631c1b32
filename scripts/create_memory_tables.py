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
                        help="give this role USAGE on the schema and EXECUTE on the store's functions (the wrapper's"
                             " recall_memories, save_memory, log_entry, forget_ticket and forget_customer, a desk's"
                             " memory_records, ledger_entries, invalidate_memory and restore_customer), and take back"
                             " any right an earlier version gave it on the tables and their sequences")
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
        if erased["orphan_files"] is None:
            print("files no table names: not looked for (it takes a superuser: docs/own_postgres_server.md)")
        elif erased["orphan_files"]:
            print("files no table names, such as a crash during a rewrite leaves (they may hold forgotten customers'"
                  " rows; a table another session was making meanwhile has such files too: check again with nothing"
                  " else running):", ", ".join(erased["orphan_files"]))
            print("to remove them, stop the server, then run:", erased["remove_them"])
        sys.exit(1 if erased["waited"] or erased["skipped"] or erased["orphan_files"] else 0)
    create_memory_tables(url, args.schema)
    if args.grant:
        grant_row_rights(url, args.grant, args.schema)
    print(f"the tables of schema {args.schema} are in {masked(url)}" + (f"; {args.grant} may use them" if args.grant
                                                                          else ""))
