"""What every store takes, checked the same way before anything is written: a memory ({"request": a dict,
"jev_answered": a dict}) and a ledger entry (a dict naming its customer), each as the JSON text the stores keep. A
wrong value is a ValueError naming the field, whichever store it was given to. Hand-written, tested in
tests/test_store.py."""

import json
from typing import Any

__all__ = ["checked_entry", "checked_memory", "json_text"]


def json_text(field: str, value: object) -> str:
    """`value` as json.dumps writes it (the text the stores keep, and the cache keys hash), if it is a dict that JSON
    can hold: no NaN or infinity, nothing JSON has no type for, nested no deeper than json.dumps can go. Otherwise a
    ValueError naming the field."""
    if not isinstance(value, dict):
        raise ValueError(f"{field} must be a dict; got {type(value).__name__} {value!r:.80}")
    try:
        return json.dumps(value, allow_nan=False)
    except RecursionError:  # json.dumps recurses once per level: a value nested thousands of levels deep
        raise ValueError(f"{field} is nested too deeply to be written as JSON (deeper than Python's recursion limit,"
                         " about a thousand levels)") from None
    except (TypeError, ValueError) as error:
        raise ValueError(f"{field} cannot be written as JSON: {error}") from None


def checked_memory(memory: Any) -> tuple[str, str]:
    """(the request's JSON text, the answer's JSON text) of a memory, or a ValueError naming what is wrong with it."""
    if not isinstance(memory, dict):
        raise ValueError('a memory must be a dict {"request": ..., "jev_answered": ...};'
                         f" got {type(memory).__name__} {memory!r:.80}")
    for field in ("request", "jev_answered"):
        if field not in memory:
            raise ValueError(f"the memory has no {field!r}: a memory is {{'request': ..., 'jev_answered': ...}}")
    return json_text("memory['request']", memory["request"]), json_text("memory['jev_answered']",
                                                                          memory["jev_answered"])


def checked_entry(entry: Any) -> str:
    """A ledger entry's JSON text, or a ValueError naming what is wrong with it (a dict with a "customer" is right)."""
    text = json_text("a ledger entry", entry)
    if "customer" not in entry:
        raise ValueError(f"a ledger entry must name its customer (\"customer\"); got {entry!r:.80}")
    return text
