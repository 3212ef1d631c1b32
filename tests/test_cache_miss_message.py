"""What an off-script call says, word for word: each difference named, with what to do.
Each was seen failing with a one-line bug planted in the code it guards."""

import json

import pytest

from memory_cookbook import jev_request
from memory_cookbook.replay import cache_miss


def compared(state, questions=None):
    from conftest import committed_requests
    import jev_memory_lesson

    wire = jev_request.questions_wire(questions or jev_memory_lesson.ROUTE)
    return cache_miss.compared_with_recorded("jev-1.13.0", state, wire, committed_requests())


def test_an_edit_a_removed_and_an_added_field_are_named_with_what_to_do(lesson):
    state = lesson.ticket_state(lesson.EARLIER[0])
    state["ticket"]["subject"] = "Slow café"
    del state["ticket"]["received_on"]
    state["ticket"]["urgent"] = True
    assert compared(state) == [
        "Edited since the recording (recorded → this request):",
        '  ticket.received_on: "2026-08-04" → (absent)',
        '  ticket.subject: "Adding an admin" → "Slow café"',
        '  ticket.urgent: (absent) → true',
        "An edited ticket or question is a new request: undo the edit (and Kernel → Restart Kernel and Run All Cells)"
        " to go back to the recorded answers."]


def test_other_memories_alone_are_named_with_what_to_do(lesson):
    state = lesson.ticket_state(lesson.EARLIER[0])
    state[lesson.MEMORY_KEY] = [{"request": lesson.ticket_state(lesson.EARLIER[3]), "jev_answered": {}}]
    lines = compared(state)
    assert lines[0] == "Memories carried: recorded for T-101: none · this request: T-104." and len(lines) == 2
    assert all(cause in lines[1] for cause in ("threshold, remember_at,", "ran out of order or twice",
                                                "Restart Kernel and Run All Cells"))


def test_other_memories_and_an_edited_ticket_name_the_edit_not_only_the_memories(lesson):
    state = lesson.ticket_state(lesson.EARLIER[0])
    state[lesson.MEMORY_KEY] = [{"request": lesson.ticket_state(lesson.EARLIER[3]), "jev_answered": {}}]
    state["ticket"]["subject"] = "Slow café"
    lines = compared(state)
    assert lines[:3] == ["Memories carried: recorded for T-101: none · this request: T-104.",
                         "Edited since the recording (recorded → this request):",
                         '  ticket.subject: "Adding an admin" → "Slow café"']
    assert not any("Only the memories differ" in line for line in lines)
    assert lines[-1].startswith("An edited ticket or question is a new request")


def test_a_side_with_no_value_is_shown_bare_and_a_text_that_reads_absent_in_quotes(lesson):
    state = lesson.ticket_state(lesson.EARLIER[0])
    state["ticket"]["subject"] = "(absent)"
    del state["ticket"]["received_on"]
    assert compared(state)[1:3] == ['  ticket.received_on: "2026-08-04" → (absent)',
                                    '  ticket.subject: "Adding an admin" → "(absent)"']


def with_t105_answer_removed(lesson, state):
    """`state` carrying T-101's and T-105's memories as the published run saved them, T-105's answer removed."""
    lesson.start_from("T-101", "T-102", "T-103", "T-104", "T-105")
    memories = lesson.MEMORY.store.recall("C-1042")
    memories[1] = {"request": memories[1]["request"], "jev_answered": {}}
    return {**state, lesson.MEMORY_KEY: memories}


def test_an_edited_memory_is_named_as_the_edit(lesson):
    state = with_t105_answer_removed(lesson, lesson.later_state("C-1042", "More seats"))
    lines = compared(state)
    assert lines[1].startswith(f"  {lesson.MEMORY_KEY}[memory T-105].jev_answered.Which support team")
    assert lines[1].endswith(" → (absent)") and len(lines) == 3
    assert lines[-1].startswith("An edited memory is a new request: undo the edit")
    state["ticket"]["subject"] = "More seats, please"
    assert compared(state)[-1].startswith("An edited ticket, memory or question is a new request")


def test_a_new_ticket_lists_the_tickets_that_were_asked_about(lesson):
    state = lesson.ticket_state(lesson.EARLIER[0])
    state["ticket"]["id"] = "T-999"
    assert compared(state) == [
        "The published run asked ['team'] about tickets T-201, T-203, T-204, T-206, T-101, T-102, T-103, T-104, T-105,"
        " T-202, T-205, never about T-999: a new ticket is a new request."]


@pytest.mark.parametrize("edits, more", [(6, []), (7, ["  … and 1 more differences"])])
def test_six_differences_are_listed_and_a_seventh_is_counted(lesson, edits, more):
    state = lesson.ticket_state(lesson.EARLIER[0])
    state["ticket"].update({f"field_{number}": number for number in range(edits)})
    lines = compared(state)
    assert len(lines) == 1 + 6 + len(more) + 1 and lines[7:-1] == more


def test_differing_texts_of_exactly_their_width_and_other_alphabets_are_shown_as_they_are():
    assert cache_miss.differing_parts("x" * 8, "y" * 8, width=10) == ('"xxxxxxxx"', '"yyyyyyyy"')
    assert cache_miss.differing_parts("café 咖啡", "café") == ('"café 咖啡"', '"café"')


def test_an_edit_near_the_end_of_a_long_ticket_shows_the_part_that_differs_on_both_sides(lesson):
    state = lesson.ticket_state(lesson.EARLIER[0])
    text = state["ticket"]["messages"][0]["text"]
    assert len(text) > 100  # the earlier tickets run 101-134 characters
    state["ticket"]["messages"][0]["text"] = text[:-1] + " today" + text[-1]
    line = compared(state)[1]
    recorded, sent = line.split(": ", 1)[1].split(" → ")
    assert len(recorded) <= 90 and len(sent) <= 90 and "today" in sent and recorded != sent
    assert recorded.endswith(json.dumps(text)[-20:]) and sent.endswith(f' today{text[-1]}"')
