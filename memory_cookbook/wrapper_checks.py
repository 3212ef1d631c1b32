"""The checks notebook 04's wrapper and start_from make before anything is sent or forgotten, each a ValueError that
names what is wrong and what is expected. Hand-written, tested in tests/test_start_from_and_threshold.py,
tests/test_errors.py and tests/test_lesson.py."""

import json
from collections.abc import Iterable
from typing import Any

__all__ = ["check_earlier_ticket_ids", "checked_threshold", "customer_id"]


def customer_id(state: object) -> str:
    """state["customer"]["id"], or a ValueError that says the wrapper needs it."""
    customer = state.get("customer") if isinstance(state, dict) else None
    if not isinstance(customer, dict) or not isinstance(customer.get("id"), str):
        raise ValueError("ask_with_memory needs a JSON object state with customer.id (a string), to know whose"
                         f" memories to add; got {type(state).__name__} {json.dumps(state)[:80]}")
    return customer["id"]


def checked_threshold(remember_at: object) -> float:
    """`remember_at`, or a ValueError unless it is a probability: a number from 0 to 1 (a bool, which Python counts as
    one, is not)."""
    if isinstance(remember_at, bool) or not isinstance(remember_at, (int, float)) or not 0 <= remember_at <= 1:
        raise ValueError(f"remember_at is a probability between 0 and 1; got {remember_at!r}")
    return remember_at


def check_earlier_ticket_ids(ticket_ids: Iterable[str], earlier_tickets: Iterable[dict[str, Any]]) -> None:
    """A ValueError naming each of `ticket_ids` that is not the id of one of `earlier_tickets`."""
    unknown = sorted(set(ticket_ids) - {ticket["id"] for ticket in earlier_tickets})
    if unknown:
        raise ValueError(f"start_from: {', '.join(unknown)} is not an earlier ticket; they are"
                         f" {', '.join(ticket['id'] for ticket in earlier_tickets)}")
