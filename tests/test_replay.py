"""replay.py: what an off-script call says, the recorded requests it compares with, several recorders at once, and a
playground link for every recorded call."""

import json
import os
import re
import subprocess
import sys
import time

import pytest
import replay
from conftest import CACHE_FILE, CANARY_KEY, ROOT, requests_served, run_earlier_tickets
from lzstring import LZString
from run_notebooks import cache_keys

RERUN_ADVICE = "a cell probably ran twice. Kernel → Restart Kernel and Run All Cells"


def miss(call, *args):
    with pytest.raises(replay.CacheMiss) as raised:
        call(*args)
    return str(raised.value)


def test_the_recorded_calls_are_the_32_cache_entries_derived_in_well_under_a_second():
    replay.recorded_calls.cache_clear()
    started = time.monotonic()
    calls = replay.recorded_calls()
    assert time.monotonic() - started < 1
    assert len(calls) == 32
    assert {replay.cache_key(*call) for call in calls} == set(json.loads(CACHE_FILE.read_text()))
    assert {replay.cache_key(*call) for call in calls} == cache_keys(calls)  # the same keys as cooksafe's own


def test_an_edited_ticket_text_names_the_edit(memory):
    state = memory.later_state("C-1042", "Slow dashboards")
    state["ticket"]["messages"][0]["text"] = "Dashboards are slow on our Windows server."
    message = miss(memory.ask, state, memory.ROUTE)
    assert message.startswith("No recorded Jev answer for questions ['team'] about ticket T-201 in ")
    assert ('ticket.messages[0].text: "Dashboards have been really slow since this morning." → "Dashboards are slow'
            ' on our Windows server."') in message
    assert "An edited ticket or question is a new request" in message
    assert "Memories carried" not in message and RERUN_ADVICE not in message


def test_a_cell_run_twice_says_so(memory):
    t101 = memory.ticket_state(memory.EARLIER[0])
    memory.ask_with_memory(t101, memory.ROUTE)
    message = miss(memory.ask_with_memory, t101, memory.ROUTE)
    assert "Memories carried: recorded for T-101: none · this request: T-101." in message
    assert RERUN_ADVICE in message


def test_memories_out_of_order_are_named_against_every_recorded_set(memory):
    run_earlier_tickets(memory)
    memory.STORE.forget_ticket("T-101")  # C-1042 keeps T-105 alone: never recorded with a later message
    message = miss(memory.ask, memory.with_memories(memory.later_state("C-1042", "Slow dashboards")), memory.ROUTE)
    assert "Memories carried: recorded for T-201: none; T-101; T-101, T-105 · this request: T-105." in message
    assert "Only the memories differ: cells probably ran out of order or twice" in message


def test_an_edited_memory_names_the_memory_and_the_field(memory):
    memory.EARLIER[0]["text"] = memory.EARLIER[0]["text"].replace("Windows Server 2022", "Ubuntu 24.04")
    try:
        memory.MEMORIES["C-1042"].append({"request": memory.ticket_state(memory.EARLIER[0]),
                                          "jev_answered": {memory.ROUTE["team"].instructions: "x"}})
        message = miss(memory.ask, memory.with_memories(memory.later_state("C-1042", "Slow dashboards")), memory.ROUTE)
    finally:
        memory.EARLIER[0]["text"] = memory.EARLIER[0]["text"].replace("Ubuntu 24.04", "Windows Server 2022")
    assert "earlier_tickets_from_this_customer[memory T-101].request.ticket.messages[0].text:" in message


def test_a_new_ticket_and_an_edited_question_are_named(memory):
    unseen = memory.later_state("C-1042", "Slow dashboards")
    unseen["ticket"]["id"] = "T-999"
    assert "never about T-999: a new ticket is a new request" in miss(memory.ask, unseen, memory.ROUTE)
    edited = {"team": memory.ROUTE["team"].model_copy(update={"instructions": "Which team?"})}
    message = miss(memory.ask, memory.later_state("C-1042", "Slow dashboards"), edited)
    assert 'question team.instructions: "Which support team should handle `ticket`?" → "Which team?"' in message


def test_another_model_is_named(memory, monkeypatch):
    monkeypatch.setattr(memory, "TYPESAFE_MODEL", "jev-2.0.0")
    message = miss(memory.ask, memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)
    assert "The published run asked jev-1.13.0, not jev-2.0.0." in message


@pytest.mark.parametrize("state", ["Dashboards are slow.", ["C-1042"], {"no": "ticket"}])
def test_a_state_of_another_shape_is_explained_too(memory, state):
    message = miss(memory.ask, state, memory.ROUTE)
    assert "never about a state with no ticket id: a new ticket is a new request" in message


def test_the_offline_message_says_what_going_live_would_do(memory):
    unseen = memory.later_state("C-2210", "More seats")
    unseen["ticket"]["id"] = "T-998"
    message = miss(memory.ask, unseen, memory.ROUTE)
    assert ("With TYPESAFE_API_KEY set (and TYPESAFE_ENDPOINT for another Jev-compatible server), this request would be"
            " sent to Jev (jev-1.13.0) live and its answer recorded into") in message
    assert message.rstrip().endswith("json_cache.json.")


RECORDER = """
import sys, basic_memory as b
for number in range(15):
    state = b.later_state("C-1042", "Slow dashboards")
    state["ticket"]["id"] = f"T-{sys.argv[1]}-{number}"
    b.ask(state, b.ROUTE)
"""


def test_two_processes_recording_at_once_keep_every_answer(cache_copy, jev_server):
    env = os.environ | {"COOKBOOK_CACHE": str(cache_copy), "TYPESAFE_API_KEY": CANARY_KEY,
                        "TYPESAFE_ENDPOINT": jev_server.url}
    recorders = [subprocess.Popen([sys.executable, "-c", RECORDER, name], cwd=ROOT / "notebooks", env=env,
                                  stderr=subprocess.PIPE, text=True) for name in ("A", "B")]
    for recorder in recorders:
        assert recorder.wait(timeout=120) == 0, recorder.stderr.read()
    published, recorded = json.loads(CACHE_FILE.read_text()), json.loads(cache_copy.read_text())
    assert requests_served(jev_server) == 30
    assert len(recorded) == 32 + 30
    assert {key: recorded[key] for key in published} == published
    assert cache_copy.read_text() == replay.cache_text(recorded)  # still the file format cooksafe writes


def test_the_links_script_gives_a_link_for_every_recorded_call():
    result = subprocess.run([sys.executable, "scripts/playground_links.py"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, check=True)
    rows = [line for line in result.stdout.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == 32
    recorded = set(json.loads(CACHE_FILE.read_text()))
    for row in rows:
        number, ticket, question, memories, answer, link = [cell.strip() for cell in row.strip("|").split("|")]
        share = json.loads(LZString.decompressFromEncodedURIComponent(link.split("#share/", 1)[1].rstrip(")")))
        state, questions = json.loads(share["documentText"]), json.loads(share["promptsText"])
        assert replay.cache_key(share["selectedModels"][0], json.dumps(state), json.dumps(questions)) in recorded
        assert (replay.ticket_id(state), list(questions)) == (ticket, [question])
        assert (", ".join(replay.carried_memory_ids(state)) or "-") == memories
    assert rows[0].split("|")[5].strip() == "cloud_ops 0.80"
