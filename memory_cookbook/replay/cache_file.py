"""The cache file that the cookbook's calls are replayed from: where it is, checked before use (CacheError: its shape,
and the published run's answers against their recorded digests), opened on first use, and shared safely: a write
takes a lock, merges with what other processes recorded meanwhile, and replaces the file in one atomic rename.
Hand-written, tested in tests/test_replay.py and tests/test_damaged_files.py."""

import json
import os
from pathlib import Path
from typing import Any

from cooksafe import JsonCache
from filelock import FileLock
from pydantic import ValidationError
from typesafe_sdk import SystemOneResponse

from memory_cookbook.checked_files import DamagedFile, read_json
from memory_cookbook.jev_request import describe_call
from memory_cookbook.replay.recorded_requests import answer_digest, recorded_requests, requests_path
from memory_cookbook.locations import CACHE_FILE, checkout_file

__all__ = ["CacheError", "FIX", "MergingWrite", "OPEN_CACHES", "SharedJsonCache", "cache_path", "cache_text",
           "check_cache_file", "check_recorded_answers", "lock_for", "open_cache", "write_atomically"]


class CacheError(DamagedFile):
    """The cache file can't be used as it is; the message says why and how to fix it."""


FIX = "restore the committed cache with `git checkout json_cache.json`, or point COOKBOOK_CACHE at a good file"


def check_cache_file(path: Path) -> dict[str, Any]:
    """Raise a CacheError naming the problem and the fix unless `path` holds SystemOneResponse entries (or may be
    created: it is missing and a key can record into it)."""
    if path.is_dir():
        raise CacheError(f"The cache {path} is a folder: point COOKBOOK_CACHE at a JSON file.")
    if not path.exists() and not os.environ.get("TYPESAFE_API_KEY"):
        raise CacheError(f"There is no cache file at {path}: {FIX}, or set TYPESAFE_API_KEY to record a new one.")
    try:
        entries = read_json(path, FIX) if path.exists() else {}
    except DamagedFile as error:
        raise CacheError(f"The cache {error}") from None
    if not isinstance(entries, dict):
        raise CacheError(f"The cache {path} is not a JSON object of responses: {FIX}.")
    for key, raw in entries.items():
        try:
            SystemOneResponse.model_validate(raw)
        except ValidationError as error:
            problem = error.errors()[0]
            raise CacheError(f"In the cache {path}, entry {key[:12]}… is not a SystemOneResponse"
                             f" ({'.'.join(map(str, problem['loc']))}: {problem['msg']}): {FIX}.") from None
    return entries


def check_recorded_answers(path: Path, entries: dict[str, Any]) -> None:
    """Raise a CacheError if an answer the published run recorded (named, with its digest, in recorded_requests.json
    beside the cache) was edited, even into another valid answer. Answers the file does not name (recorded by you)
    are only checked for their shape, by check_cache_file."""
    for request in recorded_requests(requests_path(path), missing_ok=True):
        if request.key in entries and answer_digest(entries[request.key]) != request.answer_sha256:
            raise CacheError(f"In the cache {path}, the answer to {describe_call(request.state, request.questions)}"
                             f" (entry {request.key[:12]}…) is not the one recorded: it was edited. {FIX[0].upper()}"
                             f"{FIX[1:]}.")


def cache_text(entries: dict[str, Any], indent: int | None = 2) -> str:
    """A cache file's text as cooksafe.JsonCache writes it: keys sorted (not recursively), two-space indent."""
    return json.dumps({key: entries[key] for key in sorted(entries)}, indent=indent)


def lock_for(path: Path) -> FileLock:
    """The lock every writer of `path` takes: a file beside it (filelock: fcntl on POSIX, msvcrt on Windows)."""
    return FileLock(path.with_name(f".{path.name}.lock"), timeout=60)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`: a reader sees the old file or the
    new one, never half; the temporary file is gone either way."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


class MergingWrite:
    """What a SharedJsonCache writes through (cooksafe.JsonCache calls `self.path.write_text`): under the lock, read
    the file as it is now, add this process's answers, write a temporary file beside it, rename it over the old one."""

    def __init__(self, cache: "SharedJsonCache", path: str | Path) -> None:
        self.cache, self.file = cache, Path(path)

    def write_text(self, text: str) -> None:
        with lock_for(self.file):
            merged = json.loads(self.file.read_text()) if self.file.exists() else {}
            merged |= json.loads(text)
            self.cache._data.update(merged)  # answers other processes recorded are now hits here too
            write_atomically(self.file, cache_text(merged, self.cache.indent))


class SharedJsonCache(JsonCache):
    """cooksafe.JsonCache for a file that several notebooks may record into at once: no answer is lost, and a crash
    leaves the old file or the new one, never half of either."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.path = MergingWrite(self, path)


def cache_path() -> Path:
    """The cache file calls are replayed from: COOKBOOK_CACHE, or the committed json_cache.json."""
    return Path(os.environ.get("COOKBOOK_CACHE") or checkout_file(CACHE_FILE))


OPEN_CACHES: dict[Path, SharedJsonCache] = {}  # path → SharedJsonCache, each opened (and checked) on its first call


def open_cache(path: Path) -> SharedJsonCache:
    """The SharedJsonCache over `path`, checked and opened on first use."""
    if path not in OPEN_CACHES:
        check_recorded_answers(path, check_cache_file(path))
        OPEN_CACHES[path] = SharedJsonCache(path)
    return OPEN_CACHES[path]
