"""What notebook 10 teaches, as the wrapper does it: once T-105's memory is invalidated, C-1042's two probes are
requests the published run recorded (both cache hits) that no longer carry T-105, and their answers are the recorded
ones; dropping only T-105's saved answer makes a request nobody recorded ("More seats", the one that would tell what
made it sure), whose CacheMiss names the memory edited and ends with its link; the customer forgotten and their export
imported again, "Slow dashboards" is the recorded request with T-101 alone (the Try it). On the dict and SQLite
stores."""

import json

import pytest
from conftest import cache_keys, committed_entries

from memory_cookbook.desk.export import export_customer, import_customer
from memory_cookbook.from_notebooks.stores import SqliteStore
from memory_cookbook.jev_request import carried_memory_ids
from memory_cookbook.replay.cache_miss import CacheMiss
from memory_cookbook.replay.calls import offline
from test_replay import link_in

EARLIER = ("T-101", "T-102", "T-103", "T-104", "T-105")


@pytest.fixture(params=["dict", "sqlite"])
def desk(lesson, request, tmp_path):
    """The lesson from the published run's memories, on the store named, T-105's memory invalidated."""
    if request.param == "sqlite":
        lesson.MEMORY.store = SqliteStore(tmp_path / "desk.sqlite")
    lesson.start_from(*EARLIER)
    assert lesson.MEMORY.store.invalidate("C-1042", "T-105", reason="a guess", by="desk") == 1
    return lesson


def test_after_invalidating_t105_the_probes_are_recorded_requests_without_it(desk):
    first = len(desk.CALLS)
    answers = desk.probe("C-1042")
    calls = desk.CALLS[first:]
    assert len(calls) == 4 and [call.source for call in calls] == ["replay"] * 4  # question, gate; question, gate
    assert cache_keys([call[:3] for call in calls]) <= set(committed_entries())  # each one a cache hit
    questions = [json.loads(call.state_json) for call in calls[::2]]
    assert [carried_memory_ids(state) for state in questions] == [("T-101",), ("T-101",)]
    assert not any('"T-105"' in call.state_json for call in calls)  # the invalidated memory is nowhere in them
    assert {subject: desk.routed(response) for subject, response in answers.items()} == {
        "Slow dashboards": "selfhosted_windows 0.99", "More seats": "enterprise_desk 0.44"}


def test_dropping_only_the_saved_answer_is_a_request_nobody_recorded_and_its_miss_ends_with_its_link(desk):
    t105 = next(record for record in desk.MEMORY.store.memory_records("C-1042") if record.ticket == "T-105")
    ticket_only = {"request": t105.memory["request"], "jev_answered": {}}
    sent = {**desk.later_state("C-1042", "More seats"),
            desk.MEMORY_KEY: [*desk.MEMORY.store.recall("C-1042"), ticket_only]}
    with offline(), pytest.raises(CacheMiss) as raised:
        desk.ask(sent, desk.ROUTE)
    lines = str(raised.value).splitlines()
    model, state_json, questions_json = link_in(lines[-1])
    assert json.loads(state_json) == sent and (model, state_json, questions_json) == raised.value.request
    assert carried_memory_ids(sent) == ("T-101", "T-105") and sent["ticket"]["subject"] == "More seats"
    assert lines[2].endswith("→ (absent)") and lines[3].startswith("An edited memory is a new request")


def test_the_customer_forgotten_and_imported_again_sends_t101_alone_a_recorded_request(desk):
    document = export_customer(desk.MEMORY.store, "C-1042")
    desk.MEMORY.store.forget_customer("C-1042")
    import_customer(desk.MEMORY.store, json.dumps(document))
    first = len(desk.CALLS)
    answer = desk.ask_with_memory(desk.later_state("C-1042", "Slow dashboards"), desk.ROUTE)
    calls = desk.CALLS[first:]
    assert [call.source for call in calls] == ["replay"] * 2  # the question, the gate
    assert cache_keys([call[:3] for call in calls]) <= set(committed_entries())  # both cache hits
    assert carried_memory_ids(json.loads(calls[0].state_json)) == ("T-101",)
    assert desk.routed(answer) == "selfhosted_windows 0.99"
