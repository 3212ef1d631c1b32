"""Re-record the notebooks' calls with a TypeSafe key; the cache is replaced only once the new one is whole.

    TYPESAFE_API_KEY=... python scripts/record_cache.py           # ask live only the calls the cache lacks
    TYPESAFE_API_KEY=... python scripts/record_cache.py --fresh   # ask every call again
    TYPESAFE_API_KEY=... python scripts/record_cache.py 03_gate.ipynb   # only some notebooks
    --prune        also drop the entries no notebook uses (they are listed either way; all notebooks only)
    --cache PATH   another cache file (default: json_cache.json)

Set TYPESAFE_ENDPOINT to record from another Jev-compatible server. The notebooks run in fresh kernels (their files
are not rewritten) against a temporary copy of the cache beside it. The copy replaces the cache, in one atomic rename,
only if it parses, every entry is a SystemOneResponse, and it holds every call the notebooks made; an error or an
interruption leaves the old cache as it was. With every notebook, recorded_requests.json beside the cache is
rewritten too: the published run's requests, which an off-script call's message is compared with.
"""

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "notebooks")]  # cookbook_tools, and the cache's modules beside the notebooks
from cookbook_tools.paths import CACHE_FILE  # noqa: E402
from cookbook_tools.recording import notebooks_to_record, record  # noqa: E402


def arguments(argv=None):
    """The parsed arguments and the notebooks to record, or SystemExit with a message for a bad combination."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="ask every call again instead of only the missing ones")
    parser.add_argument("--prune", action="store_true", help="drop the entries no notebook uses")
    parser.add_argument("--cache", type=Path, default=CACHE_FILE, help="the cache file to update")
    parser.add_argument("notebooks", nargs="*", help="notebook file names (default: all)")
    args = parser.parse_args(argv)
    try:
        notebook_paths = notebooks_to_record(args.notebooks, prune=args.prune)
    except ValueError as error:
        sys.exit(str(error))
    if not os.environ.get("TYPESAFE_API_KEY"):
        sys.exit("record_cache.py asks Jev live: set TYPESAFE_API_KEY (and TYPESAFE_ENDPOINT for another"
                 " Jev-compatible server).")
    return args, notebook_paths


def main():
    args, notebook_paths = arguments()
    try:
        record(args.cache.resolve(), notebook_paths, fresh=args.fresh, prune=args.prune)
    except KeyboardInterrupt:
        sys.exit(f"interrupted: {args.cache} is unchanged")
    except Exception as error:  # noqa: BLE001 - any failure must leave the cache as it was, and say so
        sys.exit(f"recording failed, {args.cache} is unchanged: {type(error).__name__}: {error}")


if __name__ == "__main__":
    main()
