"""start_from and the gate's threshold, on the lesson module: the threshold is MEMORY.remember_at, refused when it is
set to anything but a probability. Each was seen failing with a one-line bug planted in the code it guards."""

import pytest


def test_start_from_forgets_both_customers_and_leaves_another_customers_ledger(lesson):
    lesson.start_from("T-101")
    outsider = {**lesson.MEMORY.ledger()[0], "customer": "C-9999", "ticket": "T-999"}
    lesson.MEMORY.store.log(outsider)
    assert "C-9999" not in lesson.CUSTOMERS
    lesson.start_from()
    assert lesson.MEMORY.ledger() == [outsider] and lesson.memory_ids("C-1042") == []


@pytest.mark.parametrize("threshold, probability, saved", [
    (0, 0.0, True), (0, 0.07, True), (1, 1.0, True), (1, 0.9999, False), (1, 0.0, False)])
def test_a_threshold_of_0_saves_everything_and_of_1_only_certainty(lesson, monkeypatch, threshold, probability, saved):
    lesson.MEMORY.remember_at = threshold
    monkeypatch.setattr(lesson, "remember_probability", lambda _memory: probability)
    lesson.ask_with_memory(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert lesson.memory_ids("C-1042") == (["T-201"] if saved else [])
    assert lesson.MEMORY.ledger()[-1]["saved"] is saved and lesson.MEMORY.ledger()[-1]["remember_at"] == threshold


@pytest.mark.parametrize("threshold", [True, False, float("nan"), 1.5, -0.1, "0.5", None])
def test_a_threshold_that_is_not_a_probability_is_refused_when_it_is_set(lesson, threshold):
    """A bool (Python counts it as a number) and NaN (no comparison with it is true) too."""
    with pytest.raises(ValueError, match=rf"remember_at is a probability between 0 and 1; got {threshold!r}"):
        lesson.MEMORY.remember_at = threshold
    assert lesson.MEMORY.remember_at == 0.5


def test_a_store_that_is_not_one_is_refused_when_it_is_set(lesson, tmp_path):
    for not_a_store in (tmp_path / "memories.sqlite", lesson.DictStore, {}):
        with pytest.raises(TypeError, match="a memory store is an object with the methods of"):
            lesson.MEMORY.store = not_a_store
    assert isinstance(lesson.MEMORY.store, lesson.DictStore)


def test_the_published_replay_starts_from_no_memories_whatever_was_remembered_before(lesson):
    from conftest import committed_requests, run_earlier_tickets
    from memory_cookbook.jev_request import cache_key

    run_earlier_tickets(lesson)  # every customer has memories now
    calls = lesson.replay_published_run()
    assert list(dict.fromkeys(cache_key(*call.request) for call in calls)) == [
        request.key for request in committed_requests()]


def test_start_from_refuses_an_id_that_is_not_an_earlier_ticket_before_forgetting_anything(lesson):
    lesson.start_from("T-101")
    with pytest.raises(ValueError, match="start_from: T-110 is not an earlier ticket; they are T-101, T-102, T-103,"
                                         " T-104, T-105"):
        lesson.start_from("T-105", "T-110")
    assert lesson.memory_ids("C-1042") == ["T-101"] and len(lesson.MEMORY.ledger()) == 1


def test_each_dict_store_owns_its_memories_and_memories_reads_the_wrappers_store(lesson):
    first, second = lesson.DictStore(), lesson.DictStore()
    first.save("C-1042", {"request": {"ticket": {"id": "T-1"}}, "jev_answered": {}}, p_remember=1.0, model="m")
    assert first.recall("C-1042") and second.recall("C-1042") == [] and lesson.MEMORIES == {}
    lesson.start_from("T-101")
    assert list(lesson.MEMORIES) == ["C-1042"] and lesson.MEMORIES["C-1042"] == lesson.MEMORY.store.recall("C-1042")
