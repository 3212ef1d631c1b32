"""The published run's requests, as scripts/record_cache.py wrote them into recorded_requests.json beside the cache
they were recorded into: read by the explanation of a miss, the memory explorer, the playground links and the
recording. Hand-written, tested in tests/test_replay.py."""

import json
from pathlib import Path
from typing import NamedTuple

from memory_cookbook.cache_file import cache_path

REQUESTS_NAME = "recorded_requests.json"


class RecordedRequest(NamedTuple):
    key: str
    model: str
    state: dict
    questions: dict


def requests_path(cache=None):
    """recorded_requests.json beside a cache file (by default the cache in use: COOKBOOK_CACHE, or the committed
    cache)."""
    return (cache or cache_path()).with_name(REQUESTS_NAME)


def recorded_requests(path=None):
    """The published run's requests (RecordedRequest), in order of first use (default: beside the cache in use); none
    when there is no such file. Read afresh at each call (32 requests): a re-recorded file is seen at once."""
    path = Path(path or requests_path())
    if not path.exists():
        return ()
    return tuple(RecordedRequest(**request) for request in json.loads(path.read_text()))
