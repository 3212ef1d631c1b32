"""What every store takes, checked the same way before anything is written: a memory ({"request": a dict,
"jev_answered": a dict}) and a ledger entry (a dict naming its customer), each as the JSON text the stores keep, and
what is kept beside a memory (`checked_save`). A wrong value is a ValueError naming the field, whichever store it was
given to. Hand-written, tested in tests/test_store.py and the contract suite (tests/test_store_contract.py)."""

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, NamedTuple, TypeGuard

__all__ = ["STRICT_JSON", "Saving", "checked_answer_probabilities", "checked_customer_of", "checked_entry",
           "checked_memory", "checked_probability", "checked_save", "is_probability", "json_text", "non_empty_text",
           "utc"]

STRICT_JSON = json.JSONEncoder(allow_nan=False)  # json.dumps(value, allow_nan=False), without a new encoder each call


def json_text(field: str, value: object) -> str:
    """`value` as json.dumps writes it (the text the stores keep, and the cache keys hash), if it is a dict that JSON
    can hold: no NaN or infinity, nothing JSON has no type for, nested no deeper than json.dumps can go. Otherwise a
    ValueError naming the field."""
    if not isinstance(value, dict):
        raise ValueError(f"{field} must be a dict; got {type(value).__name__} {value!r:.80}")
    try:
        return STRICT_JSON.encode(value)
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


def is_probability(value: object) -> TypeGuard[float]:
    """Whether `value` is a number from 0 to 1 (not a bool; NaN is none)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 <= value <= 1


def checked_probability(field: str, value: object) -> float:
    """`value` if it is a number from 0 to 1 (is_probability), else a ValueError naming the field."""
    if not is_probability(value):
        raise ValueError(f"{field} must be a number from 0 to 1; got {value!r:.80}")
    return float(value)


def non_empty_text(field: str, value: object) -> str:
    """`value` if it is a string with more than blanks in it, else a ValueError naming the field."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field} must be a non-empty string; got {value!r:.80}")
    return value


def utc(moment: object, field: str = "a time") -> datetime:
    """`moment` in UTC, or a ValueError naming the field if it is no datetime or has no time zone (a naive time is
    ambiguous)."""
    if not isinstance(moment, datetime):
        raise ValueError(f"{field} must be a datetime; got {type(moment).__name__} {moment!r:.80}")
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{field} has no time zone ({moment.isoformat()}): give it one, e.g. datetime.now(UTC)")
    return moment.astimezone(UTC)


class Saving(NamedTuple):
    """A save's values, checked, as the stores keep them: JSON texts, numbers, and the expiry in UTC."""

    request: str
    jev_answered: str
    answer_probabilities: str
    p_remember: float
    remember_at: float | None
    model: str
    expires_at: datetime | None


def checked_customer_of(customer: str, memory: Any) -> None:
    """A ValueError if the memory's request names another customer than `customer` (one naming none is anyone's)."""
    named = memory["request"].get("customer")
    named = named.get("id") if isinstance(named, dict) else None
    if named is not None and named != customer:
        raise ValueError(f"customer is {customer!r}, but the memory is of customer {named!r}")


def checked_answer_probabilities(memory: Any, probabilities: Mapping[str, object]) -> None:
    """A ValueError if `probabilities` names a question the memory has no answer to, or gives one no probability."""
    for question, chosen_at in probabilities.items():
        if question not in memory["jev_answered"]:
            raise ValueError(f"answer_probabilities names a question the memory has no answer to: {question!r:.80}")
        if not is_probability(chosen_at):  # the field's name made only for the error
            checked_probability(f"answer_probabilities[{question!r:.40}]", chosen_at)


def checked_save(customer: str, memory: Any, p_remember: object, model: object, remember_at: object,
                 answer_probabilities: object, expires_at: object, now: datetime) -> Saving:
    """What a store's save keeps for `customer`, checked: the memory (checked_memory, and of no other customer than
    the one it names), P(remember) and the threshold (numbers from 0 to 1; the threshold may be None, not known), the
    model (a non-empty string), the answer's probabilities ({a question of memory["jev_answered"]: a number from 0 to
    1}, None for none) and the expiry (None, or a time with a zone later than `now`). A ValueError names the first
    field that is wrong."""
    request, answered = checked_memory(memory)
    checked_customer_of(customer, memory)
    if answer_probabilities is None:
        answer_probabilities = {}
    elif not isinstance(answer_probabilities, dict):
        if not isinstance(answer_probabilities, Mapping):
            raise ValueError("answer_probabilities must be a dict {question instructions: probability}; got"
                             f" {answer_probabilities!r:.80}")
        answer_probabilities = dict(answer_probabilities)
    checked_answer_probabilities(memory, answer_probabilities)
    if expires_at is not None and utc(expires_at, "expires_at") <= now:
        raise ValueError(f"expires_at ({utc(expires_at).isoformat()}) must be after the save ({now.isoformat()})")
    return Saving(request, answered, json_text("answer_probabilities", answer_probabilities),
                  checked_probability("p_remember", p_remember),
                  None if remember_at is None else checked_probability("remember_at", remember_at),
                  non_empty_text("model", model), None if expires_at is None else utc(expires_at))
