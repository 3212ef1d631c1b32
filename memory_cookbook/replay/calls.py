"""How the cookbook's calls reach Jev: `call_jev` replays one request from the recorded cache, or asks Jev live with a
key, through `_system_one`, the function the published cache was recorded with (its name is part of every cache key).
Offline, a request the cache lacks raises CacheMiss, explained by cache_miss.py. Each request answered is recorded
once, in CALLS, with whether it was replayed or asked live. Hand-written, tested in tests/test_replay.py; the cache
file is cache_file.py, a request as data (its text, key and link) is jev_request.py.
"""

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any, NamedTuple

from typesafe_sdk import TypeSafeClient, TypeSafeError

from memory_cookbook.jev_request import describe_call
from memory_cookbook.replay.cache_file import cache_path, open_cache
from memory_cookbook.replay.cache_miss import CacheMiss, explain_miss

__all__ = ["ASKED_LIVE", "CALLS", "Call", "OFFLINE_BLOCKS", "call_jev", "offline", "source_of_last"]


class Call(NamedTuple):
    """One request answered: what was sent (the model, and the state and questions as their exact JSON text), and
    "replay" or "live"."""

    model: str
    state_json: str
    questions_json: str
    source: str = "replay"

    @property
    def request(self) -> tuple[str, str, str]:
        """(model, state_json, questions_json): the request alone, as call_jev is called with it."""
        return self.model, self.state_json, self.questions_json


CALLS: list[Call] = []  # every request answered in this process, in order: the one record of a call
OFFLINE_BLOCKS = 0  # how many offline() blocks are running: a miss inside one says so
ASKED_LIVE = 0  # how many answers _system_one has asked live: call_jev compares before and after


def call_jev(model: str, state_json: str, questions_json: str) -> dict[str, Any]:
    """Jev's answer (a SystemOneResponse as JSON) to one request: replayed from the cache file, or asked live and
    recorded when TYPESAFE_API_KEY is set. Offline, a request the cache lacks raises CacheMiss. The request is added
    to CALLS once answered, marked "live" if it was asked live."""
    live_before = ASKED_LIVE
    answer: dict[str, Any] = open_cache(cache_path())(_system_one)(model, state_json, questions_json)
    CALLS.append(Call(model, state_json, questions_json, "live" if ASKED_LIVE > live_before else "replay"))
    return answer


def source_of_last(count: int) -> str:
    """'live' if any of the last `count` calls was asked live, else 'replay'."""
    return "live" if any(call.source == "live" for call in CALLS[-count:]) else "replay"


def _system_one(model: str, state_json: str, questions_json: str) -> dict[str, Any]:
    """Ask Jev live (the cache only calls this for a request it lacks). Its name is part of every cache key."""
    global ASKED_LIVE
    state, questions = json.loads(state_json), json.loads(questions_json)
    if not os.environ.get("TYPESAFE_API_KEY"):
        raise CacheMiss(explain_miss(model, state_json, questions_json, inside_offline=OFFLINE_BLOCKS > 0),
                        request=(model, state_json, questions_json))
    try:
        with TypeSafeClient(base_url=os.environ.get("TYPESAFE_ENDPOINT"), timeout=60) as client:
            answer: dict[str, Any] = client.system_one(state, questions, model=model).model_dump(mode="json")
    except TypeSafeError as error:
        error.add_note(f"While asking {model} {describe_call(state, questions)}.")
        raise
    ASKED_LIVE += 1
    return answer


@contextlib.contextmanager
def offline() -> Iterator[None]:
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
