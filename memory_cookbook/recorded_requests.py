"""The published run's requests, as scripts/record_cache.py wrote them into recorded_requests.json beside the cache
they were recorded into, each with a digest of the answer recorded for it: read by the explanation of a miss, the
check of the cache's answers, the memory explorer, the playground links and the recording. Hand-written, tested in
tests/test_replay.py and tests/test_damaged_files.py."""

import hashlib
import json
from pathlib import Path
from typing import NamedTuple

from memory_cookbook.checked_files import read_recorded_requests

REQUESTS_NAME = "recorded_requests.json"


class RecordedRequest(NamedTuple):
    key: str
    model: str
    state: dict
    questions: dict
    answer_sha256: str  # of the answer the cache held for it when it was recorded (answer_digest)


def answer_digest(entry):
    """A cache entry's SHA-256, over its JSON with sorted keys: any edit to the answer changes it."""
    return hashlib.sha256(json.dumps(entry, sort_keys=True).encode()).hexdigest()


def requests_path(cache):
    """recorded_requests.json beside a cache file."""
    return Path(cache).with_name(REQUESTS_NAME)


def recorded_requests(path):
    """The published run's requests (RecordedRequest), in order of first use; none when there is no such file (a
    cache of your own). Read afresh at each call (32 requests): a re-recorded file is seen at once."""
    if not Path(path).exists():
        return ()
    return tuple(RecordedRequest(**request) for request in read_recorded_requests(path))
