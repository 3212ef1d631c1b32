"""Re-record the notebooks' calls with a TypeSafe key; the cache is replaced only once the new one is whole.

    TYPESAFE_API_KEY=... python scripts/record_cache.py           # ask live only the calls the cache lacks
    TYPESAFE_API_KEY=... python scripts/record_cache.py --fresh   # ask every call again
    TYPESAFE_API_KEY=... python scripts/record_cache.py 03_gate.ipynb   # only some notebooks
    --prune        also drop the entries no notebook uses (they are listed either way; all notebooks only)
    --cache PATH   another cache file (default: json_cache.json)

Set TYPESAFE_ENDPOINT to record from another Jev-compatible server. The notebooks run in fresh kernels (their files
are not rewritten) against a temporary copy of the cache beside it. The copy replaces the cache, in one atomic rename,
only if it parses, every entry is a SystemOneResponse, and it holds every call the notebooks made; an error or an
interruption leaves the old cache as it was.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from export_module import NOTEBOOKS, ROOT
from run_notebooks import NOTEBOOK_PATHS, cache_keys, executed_with_calls
from typesafe_sdk import SystemOneResponse

sys.path.insert(0, str(NOTEBOOKS))
from replay import cache_text, lock_for  # noqa: E402 - replay.py sits beside the notebooks


def record(cache_path, notebook_paths, fresh=False, prune=False):
    """Run the notebooks against a copy of the cache, check the copy, then atomically put it in place."""
    old = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    handle, temp_name = tempfile.mkstemp(prefix=f".{cache_path.stem}-recording-", suffix=".json", dir=cache_path.parent)
    os.close(handle)
    temp = Path(temp_name)
    try:
        temp.write_text(cache_text({} if fresh else old))
        os.environ["COOKBOOK_CACHE"] = str(temp)
        used = set()
        for number, notebook_path in enumerate(notebook_paths, 1):
            print(f"[{number}/{len(notebook_paths)}] {notebook_path.name}", flush=True)
            used |= cache_keys(executed_with_calls(notebook_path)[1])
        new = json.loads(temp.read_text())
        for raw in new.values():
            SystemOneResponse.model_validate(raw)
        if used - set(new):
            raise RuntimeError(f"the recording lacks {len(used - set(new))} of the calls the notebooks made")
        unused = sorted(set(new) - used) if notebook_paths == NOTEBOOK_PATHS else []
        for key in unused:
            print(f"unused entry {key[:12]}… {'removed' if prune else 'kept (--prune removes it)'}")
        if prune:
            new = {key: new[key] for key in new if key in used}
        temp.write_text(cache_text(new))
        os.replace(temp, cache_path)
        added = set(new) - set(old)
        changed = {key for key in set(new) & set(old) if new[key] != old[key]}
        print(f"{cache_path.name}: {len(new)} entries, {len(added)} new, {len(changed)} re-recorded with a different"
              f" answer, {len(set(old) - set(new))} removed")
    finally:
        temp.unlink(missing_ok=True)
        Path(lock_for(temp).lock_file).unlink(missing_ok=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="ask every call again instead of only the missing ones")
    parser.add_argument("--prune", action="store_true", help="drop the entries no notebook uses")
    parser.add_argument("--cache", type=Path, default=ROOT / "json_cache.json", help="the cache file to update")
    parser.add_argument("notebooks", nargs="*", help="notebook file names (default: all)")
    args = parser.parse_args()
    notebook_paths = [path for path in NOTEBOOK_PATHS if path.name in args.notebooks] or NOTEBOOK_PATHS
    if len(notebook_paths) < len(set(args.notebooks)):
        sys.exit(f"no such notebook among {[path.name for path in NOTEBOOK_PATHS]}")
    if args.prune and notebook_paths != NOTEBOOK_PATHS:
        sys.exit("--prune needs every notebook: entries the others use would look unused")
    if not os.environ.get("TYPESAFE_API_KEY"):
        sys.exit("record_cache.py asks Jev live: set TYPESAFE_API_KEY (and TYPESAFE_ENDPOINT for another"
                 " Jev-compatible server).")
    try:
        record(args.cache.resolve(), notebook_paths, fresh=args.fresh, prune=args.prune)
    except KeyboardInterrupt:
        sys.exit(f"interrupted: {args.cache} is unchanged")
    except Exception as error:  # noqa: BLE001 - any failure must leave the cache as it was, and say so
        sys.exit(f"recording failed, {args.cache} is unchanged: {type(error).__name__}: {error}")


if __name__ == "__main__":
    main()
