"""start_from and the gate's threshold, on the lesson module.
Each was seen failing with a one-line bug planted in the code it guards."""

import pytest



def test_start_from_leaves_no_ledger_entry_even_of_a_customer_outside_customers(memory):
    memory.start_from("T-101")
    memory.LEDGER.append({**memory.LEDGER[0], "customer": "C-9999", "ticket": "T-999"})
    assert "C-9999" not in memory.CUSTOMERS
    memory.start_from()
    assert memory.LEDGER == []


@pytest.mark.parametrize("threshold, probability, saved", [
    (0, 0.0, True), (0, 0.07, True), (1, 1.0, True), (1, 0.9999, False), (1, 0.0, False)])
def test_a_threshold_of_0_saves_everything_and_of_1_only_certainty(memory, monkeypatch, threshold, probability, saved):
    monkeypatch.setattr(memory, "REMEMBER_AT", threshold)
    monkeypatch.setattr(memory, "remember_probability", lambda _memory: probability)
    memory.ask_with_memory(memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)
    assert memory.memory_ids("C-1042") == (["T-201"] if saved else [])
    assert memory.LEDGER[-1]["saved"] is saved


@pytest.mark.parametrize("threshold", [True, False])
def test_a_boolean_threshold_is_refused_though_python_counts_it_as_a_number(memory, monkeypatch, threshold):
    monkeypatch.setattr(memory, "REMEMBER_AT", threshold)
    with pytest.raises(ValueError, match=rf"REMEMBER_AT is a probability between 0 and 1; got {threshold}"):
        memory.remember_threshold()


def test_a_nan_threshold_is_refused_though_no_comparison_with_it_is_true(memory, monkeypatch):
    monkeypatch.setattr(memory, "REMEMBER_AT", float("nan"))
    with pytest.raises(ValueError, match="REMEMBER_AT is a probability between 0 and 1; got nan"):
        memory.remember_threshold()


def test_the_published_replay_starts_from_no_memories_whatever_was_remembered_before(memory):
    from conftest import committed_requests, run_earlier_tickets
    from memory_cookbook.jev_request import cache_key

    run_earlier_tickets(memory)  # every customer has memories now
    calls = memory.replay_published_run()
    assert list(dict.fromkeys(cache_key(*call) for call in calls)) == [request.key for request in committed_requests()]


def test_start_from_refuses_an_id_that_is_not_an_earlier_ticket_before_forgetting_anything(memory):
    memory.start_from("T-101")
    with pytest.raises(ValueError, match="start_from: T-110 is not an earlier ticket; they are T-101, T-102, T-103,"
                                         " T-104, T-105"):
        memory.start_from("T-105", "T-110")
    assert memory.memory_ids("C-1042") == ["T-101"] and len(memory.LEDGER) == 1


def test_each_dict_store_owns_its_memories_and_the_wrappers_store_is_the_published_dict(memory):
    first, second = memory.DictStore(), memory.DictStore()
    first.save("C-1042", {"request": {"ticket": {"id": "T-1"}}, "jev_answered": {}}, p_remember=1.0, model="m")
    assert first.recall("C-1042") and second.recall("C-1042") == [] and memory.MEMORIES == {}
    memory.start_from("T-101")
    assert memory.STORE.memories is memory.MEMORIES and [ticket for ticket in memory.MEMORIES] == ["C-1042"]
