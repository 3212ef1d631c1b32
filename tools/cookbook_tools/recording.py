"""Re-recording the cache: run the notebooks against a copy, check it, put it in place whole; and the published run's
requests (recorded_requests.json), which cache_miss.py compares an off-script call with."""

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from cookbook_tools.execution import executed_with_calls
from cookbook_tools.paths import CACHE_FILE, ENGLISH_NOTEBOOKS
from memory_cookbook.replay.cache_file import cache_text, check_cache_file, lock_for, write_atomically
from memory_cookbook.replay.recorded_requests import answer_digest, requests_path
from memory_cookbook.jev_request import cache_key


def requests_text(calls: Iterable[tuple[str, ...]], entries: dict[str, Any]) -> str:
    """recorded_requests.json's text: each distinct request of `calls`, in order of first use, as
    {"key", "model", "state", "questions", "answer_sha256"} (json.dumps of the state and questions gives the exact wire
    text; the digest is of the answer `entries`, the recorded cache, holds for it)."""
    requests = [{"key": cache_key(*call), "model": call[0], "state": json.loads(call[1]),
                 "questions": json.loads(call[2]), "answer_sha256": answer_digest(entries[cache_key(*call)])}
                for call in dict.fromkeys(calls)]
    return json.dumps(requests, indent=1) + "\n"


def notebooks_to_record(names: Iterable[str], prune: bool = False) -> list[Path]:
    """The English notebooks named (all of them when none is named), or a ValueError naming the known ones; --prune
    needs every notebook."""
    known = {path.name: path for path in ENGLISH_NOTEBOOKS}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"no such notebook: {', '.join(unknown)}; the notebooks are {', '.join(known)}")
    notebook_paths = [path for path in ENGLISH_NOTEBOOKS if path.name in names] if names else ENGLISH_NOTEBOOKS
    if prune and notebook_paths != ENGLISH_NOTEBOOKS:
        raise ValueError("--prune needs every notebook: entries the others use would look unused")
    return notebook_paths


def published_run_calls() -> list[tuple[str, str, str]]:
    """The requests of the published run (notebook 08's `replay_published_run`), made in this process."""
    import jev_memory_lesson

    return [call.request for call in jev_memory_lesson.replay_published_run()]


def notebook_calls(notebook_path: Path) -> list[tuple[str, ...]]:
    return executed_with_calls(notebook_path)[1]


def kept_entries(entries: dict[str, Any], used: set[str], prune: bool) -> dict[str, Any]:
    """The entries to keep: all of them, or with `prune` only those the notebooks used."""
    return {key: value for key, value in entries.items() if key in used} if prune else dict(entries)


def record(cache_path: Path, notebook_paths: Sequence[Path], fresh: bool = False, prune: bool = False,
           calls_of: Callable[[Path], list[tuple[str, ...]]] = notebook_calls) -> Any:
    """Run the notebooks (calls_of(path) runs one and returns its calls) against a copy of the cache, check the copy,
    then atomically put it in place; with every notebook, also rewrite the published run's requests beside it."""
    old = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    every_notebook = list(notebook_paths) == ENGLISH_NOTEBOOKS
    handle, temp_name = tempfile.mkstemp(prefix=f".{cache_path.stem}-recording-", suffix=".json", dir=cache_path.parent)
    os.close(handle)
    temp = Path(temp_name)
    before = os.environ.get("COOKBOOK_CACHE")
    try:
        temp.write_text(cache_text({} if fresh else old))
        os.environ["COOKBOOK_CACHE"] = str(temp)
        used = set()
        for number, notebook_path in enumerate(notebook_paths, 1):
            print(f"[{number}/{len(notebook_paths)}] {notebook_path.name}", flush=True)
            used |= {cache_key(*call) for call in calls_of(notebook_path)}
        published = None
        if every_notebook:  # the published run's requests are named in recorded_requests.json: --prune keeps them
            published = published_run_calls()
            used |= {cache_key(*call) for call in published}
        check_cache_file(temp)
        new = json.loads(temp.read_text())
        if used - set(new):
            raise RuntimeError(f"the recording lacks {len(used - set(new))} of the calls the notebooks made")
        for key in sorted(set(new) - used) if every_notebook else []:
            print(f"unused entry {key[:12]}… {'removed' if prune else 'kept (--prune removes it)'}")
        new = kept_entries(new, used, prune)
        requests = requests_text(published, new) if published is not None else None
        write_atomically(cache_path, cache_text(new))
        if requests is not None:
            write_atomically(requests_path(cache_path), requests)
        added = set(new) - set(old)
        changed = {key for key in set(new) & set(old) if new[key] != old[key]}
        print(f"{cache_path.name}: {len(new)} entries, {len(added)} new, {len(changed)} re-recorded with a different"
              f" answer, {len(set(old) - set(new))} removed")
    finally:
        if before is None:
            os.environ.pop("COOKBOOK_CACHE", None)
        else:
            os.environ["COOKBOOK_CACHE"] = before
        temp.unlink(missing_ok=True)
        Path(lock_for(temp).lock_file).unlink(missing_ok=True)


def arguments(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[Path]]:
    """The parsed arguments and the notebooks to record, or SystemExit with a message for a bad combination."""
    parser = argparse.ArgumentParser(description="Re-record the notebooks' calls with a TypeSafe key.")
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


def record_cache() -> None:
    args, notebook_paths = arguments()
    try:
        record(args.cache.resolve(), notebook_paths, fresh=args.fresh, prune=args.prune)
    except KeyboardInterrupt:
        sys.exit(f"interrupted: {args.cache} is unchanged")
    except Exception as error:  # noqa: BLE001 - any failure must leave the cache as it was, and say so
        sys.exit(f"recording failed, {args.cache} is unchanged: {type(error).__name__}: {error}")

