"""The published run's requests, as scripts/record_cache.py wrote them into recorded_requests.json beside the cache
they were recorded into, each with a digest of the answer recorded for it: read by the explanation of a miss, the
check of the cache's answers, the memory explorer, the playground links and the recording. Hand-written, tested in
tests/test_replay.py, tests/test_damaged_files.py and tests/test_requests_file.py."""

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from memory_cookbook.checked_files import damaged, read_recorded_requests, requests_fix
from memory_cookbook.jev_request import describe_call

__all__ = ["REQUESTS_NAME", "RecordedRequest", "answer_digest", "check_in_step", "recorded_requests", "requests_path"]

REQUESTS_NAME = "recorded_requests.json"


class RecordedRequest(NamedTuple):
    key: str
    model: str
    state: dict
    questions: dict
    answer_sha256: str  # of the answer the cache held for it when it was recorded (answer_digest)


def answer_digest(entry: object) -> str:
    """A cache entry's SHA-256, over its JSON with sorted keys: any edit to the answer changes it."""
    return hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()


def requests_path(cache: str | Path) -> Path:
    """recorded_requests.json beside a cache file."""
    return Path(cache).with_name(REQUESTS_NAME)


def recorded_requests(path: str | Path, missing_ok: bool = False) -> tuple[RecordedRequest, ...]:
    """The published run's requests (RecordedRequest), in order of first use. A missing or damaged file is a
    DamagedFile naming it and the fix; with `missing_ok` a missing file is no requests (the cache's digest check: a
    cache recorded live into a new file has none). Read afresh at each call (32 requests): a re-recorded file is seen
    at once."""
    if missing_ok and not Path(path).exists():
        return ()
    return tuple(RecordedRequest(**request) for request in read_recorded_requests(path))


def check_in_step(cache: str | Path, entries: dict[str, Any], requests: Sequence[RecordedRequest]) -> None:
    """`requests` (read from beside `cache`) are the ones `cache` was recorded with: each has its answer in `entries`
    (the cache's), and it is the answer recorded. Else a DamagedFile naming the requests file, the first request out of
    step, and the fix."""
    path = requests_path(cache)
    unanswered = [request for request in requests if request.key not in entries]
    edited = [request for request in requests if request.key in entries
              and answer_digest(entries[request.key]) != request.answer_sha256]
    if unanswered:
        first = describe_call(unanswered[0].state, unanswered[0].questions)
        raise damaged(path, f"is out of step with the cache {cache}, which has no answer to {len(unanswered)} of its"
                            f" {len(requests)} requests (the first: {first})", requests_fix(path))
    if edited:
        first = describe_call(edited[0].state, edited[0].questions)
        raise damaged(path, f"is out of step with the cache {cache}: the cache's answer to {first} is not the one it"
                            " recorded", requests_fix(path))
