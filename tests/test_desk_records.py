"""A memory as a desk sees it (memory_cookbook/desk/records.py): a record refuses what a store must not keep, names
the field, and knows its status at any moment."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from published_memories import EXPIRES, INVALIDATED, INVALIDATED_BY, REASON, SAVED

from memory_cookbook.records import MemoryRecord, answer_probabilities

QUESTION = "Which support team should handle `ticket`?"
MEMORY = {"request": {"customer": {"id": "C-1042", "company": "Harbor Logistics"},
                      "ticket": {"id": "T-101", "received_on": "2026-08-04", "subject": "Adding an admin",
                                 "messages": [{"from": "customer", "text": "We run the self-hosted edition."}]}},
          "jev_answered": {QUESTION: "Self-hosted team, Windows"}}


def record(**changes):
    fields = dict(customer="C-1042", ticket="T-101", memory=MEMORY, answer_probabilities={QUESTION: 0.57},
                  p_remember=0.91, remember_at=0.5, model="jev-1.13.0", saved_at=SAVED)
    return MemoryRecord(**{**fields, **changes})


def test_a_record_is_in_force_until_its_expiry_or_its_invalidation_whichever_comes_first():
    expiring = record(expires_at=EXPIRES)
    assert [expiring.status_at(EXPIRES - timedelta(seconds=1)), expiring.status_at(EXPIRES)] == ["in force", "expired"]
    invalidated = record(expires_at=EXPIRES, invalidated_at=INVALIDATED, invalidated_by=INVALIDATED_BY,
                         invalidation_reason=REASON)
    assert [invalidated.status_at(moment) for moment in (SAVED, INVALIDATED, EXPIRES)] == [
        "in force", "invalidated", "invalidated"]


def test_times_are_kept_in_utc_and_a_time_without_a_zone_is_refused():
    tokyo = datetime(2026, 9, 28, 18, 0, tzinfo=timezone(timedelta(hours=9)))
    assert record(saved_at=tokyo).saved_at == SAVED and record(saved_at=tokyo).saved_at.tzinfo == UTC
    with pytest.raises(ValueError, match="saved_at has no time zone"):
        record(saved_at=datetime(2026, 9, 28, 9))
    with pytest.raises(ValueError, match="the moment has no time zone"):
        record().status_at(datetime(2026, 9, 28, 9))


@pytest.mark.parametrize("changes, named", [
    ({"ticket": "T-105"}, "ticket is 'T-105'"),
    ({"customer": "C-2210"}, "customer is 'C-2210', but the memory is of customer 'C-1042'"),
    ({"p_remember": 1.5}, "p_remember must be a number from 0 to 1"),
    ({"remember_at": True}, "remember_at must be a number from 0 to 1"),
    ({"answer_probabilities": {QUESTION: -0.1}}, "answer_probabilities"),
    ({"answer_probabilities": {"Which plan?": 0.5}}, "a question the memory has no answer to"),
    ({"model": ""}, "model must be a non-empty string"),
    ({"memory": {"request": {}}}, "jev_answered"),
    ({"expires_at": SAVED}, "expires_at .* must be after saved_at"),
    ({"invalidated_at": INVALIDATED, "invalidated_by": INVALIDATED_BY}, "invalidation_reason missing"),
    ({"invalidated_at": SAVED - timedelta(days=1), "invalidated_by": INVALIDATED_BY, "invalidation_reason": REASON},
     "invalidated_at .* is before saved_at"),
])
def test_a_record_a_store_must_not_keep_is_refused_naming_its_field(changes, named):
    with pytest.raises(ValueError, match=named):
        record(**changes)


def test_the_probability_kept_beside_a_memory_is_the_chosen_options_and_a_noul_has_none(lesson):
    state = lesson.ticket_state(lesson.EARLIER[0])  # T-101, routed with no memory yet, as in the published run
    routed = lesson.ask(state, lesson.ROUTE)
    assert answer_probabilities(lesson.ROUTE, routed) == {lesson.ROUTE["team"].instructions: 0.57}
    gate = lesson.ask(lesson.as_memory(state, lesson.ROUTE, routed), lesson.GATE)
    assert answer_probabilities(lesson.GATE, gate) == {}
