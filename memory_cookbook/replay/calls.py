"""How the cookbook's calls reach Jev: `call_jev` replays one request from the recorded cache, or asks Jev live with a
key, through `_system_one`, the function the published cache was recorded with (its name is part of every cache key).
Offline, a request the cache lacks raises CacheMiss, explained by cache_miss.py. Hand-written, tested in
tests/test_replay.py; the cache file is cache_file.py, a request as data (its text, key and link) is jev_request.py.
"""

import contextlib
import json
import os

from memory_cookbook.replay.answer_sources import ANSWER_SOURCES
from memory_cookbook.replay.cache_file import cache_path, open_cache
from memory_cookbook.replay.cache_miss import CacheMiss, explain_miss
from memory_cookbook.jev_request import describe_call
from typesafe_sdk import TypeSafeClient, TypeSafeError

LIVE_CALLS = []  # the calls this session sent to Jev live, not replayed
OFFLINE_BLOCKS = 0  # how many offline() blocks are running: a miss inside one says so


def call_jev(model, state_json, questions_json):
    """Jev's answer (a SystemOneResponse as JSON) to one request: replayed from the cache file, or asked live and
    recorded when TYPESAFE_API_KEY is set. Offline, a request the cache lacks raises CacheMiss. Whether it was live
    is added to ANSWER_SOURCES, where the ledger reads it."""
    live_before = len(LIVE_CALLS)
    answer = open_cache(cache_path())(_system_one)(model, state_json, questions_json)
    ANSWER_SOURCES.append("live" if len(LIVE_CALLS) > live_before else "replay")
    return answer


def _system_one(model, state_json, questions_json):
    """Ask Jev live (the cache only calls this for a request it lacks). Its name is part of every cache key."""
    state, questions = json.loads(state_json), json.loads(questions_json)
    if not os.environ.get("TYPESAFE_API_KEY"):
        raise CacheMiss(explain_miss(model, state_json, questions_json, inside_offline=OFFLINE_BLOCKS > 0),
                        request=(model, state_json, questions_json))
    try:
        with TypeSafeClient(base_url=os.environ.get("TYPESAFE_ENDPOINT"), timeout=60) as client:
            answer = client.system_one(state, questions, model=model).model_dump(mode="json")
    except TypeSafeError as error:
        error.add_note(f"While asking {model} {describe_call(state, questions)}.")
        raise
    LIVE_CALLS.append((model, state_json, questions_json))
    return answer


@contextlib.contextmanager
def offline():
    """Set TYPESAFE_API_KEY aside for the block, so that a call the cache lacks raises CacheMiss even in a live
    session: nothing is sent, nothing recorded."""
    global OFFLINE_BLOCKS
    key = os.environ.pop("TYPESAFE_API_KEY", None)
    OFFLINE_BLOCKS += 1
    try:
        yield
    finally:
        OFFLINE_BLOCKS -= 1
        if key:
            os.environ["TYPESAFE_API_KEY"] = key
