"""The replay machinery: the cache file and its safe writes (cache_file.py), the call (replay.py), what an off-script
call says, compared with the recorded requests (cache_miss.py), several recorders at once, and a playground link for
every recorded call (jev_request.py)."""

import json
import os
import re
import subprocess
import sys

from memory_cookbook.replay import cache_file
from memory_cookbook.replay import cache_miss, recorded_requests
from memory_cookbook import jev_request
import pytest
from memory_cookbook.replay import calls as replay
from conftest import (CANARY_KEY, ROOT, cache_keys, committed_entries, configure, decoded_link, committed_requests,
                      request_call, requests_served, run_earlier_tickets, unseen_state)
from cookbook_tools import pytest_plugin
from cookbook_tools.links import answers_in_brief, playground_links
from cookbook_tools.paths import CACHE_FILE, RECORDED_REQUESTS_FILE

RERUN_ADVICE = "a cell probably ran twice. Kernel → Restart Kernel and Run All Cells"
SETTING_OR_ORDER = ("Only the memories differ", "threshold, remember_at,", "ran out of order or twice")


def slow_dashboards_carrying(lesson, memories):
    """C-1042's "Slow dashboards" as the wrapper would send it with these memories."""
    return {**lesson.later_state("C-1042", "Slow dashboards"), lesson.MEMORY_KEY: memories}
SLOW_TEXT = "Dashboards have been really slow since this morning."


def miss(call, *args):
    """The message of the CacheMiss that `call(*args)` raises; its last line, checked here for every miss of these
    tests, is the playground link of the request that missed, byte for byte."""
    with pytest.raises(cache_miss.CacheMiss) as raised:
        call(*args)
    message = str(raised.value)
    assert link_in(message.splitlines()[-1]) == raised.value.request
    return message


def link_in(line):
    """(model, state JSON, questions JSON) that the playground link ending `line` carries, as they would be sent."""
    assert line.startswith("To send this exact request by hand"), line
    model, state, questions = decoded_link(line.rsplit(" ", 1)[1])
    return model, json.dumps(state), json.dumps(questions)


def test_the_tools_and_the_notebooks_name_the_same_cache_file(monkeypatch):
    monkeypatch.delenv("COOKBOOK_CACHE", raising=False)
    assert cache_file.cache_path() == CACHE_FILE


def test_the_tools_and_replay_name_the_same_requests_file():
    assert RECORDED_REQUESTS_FILE.name == recorded_requests.REQUESTS_NAME


def test_the_recorded_requests_are_the_32_cache_entries_under_their_own_keys():
    calls = [request_call(request) for request in committed_requests()]
    keys = [request.key for request in committed_requests()]
    assert set(keys) == set(committed_entries()) and len(keys) == 32
    assert [jev_request.cache_key(*call) for call in calls] == keys
    assert cache_keys(calls) == set(keys)  # the same keys as cooksafe's own


def test_the_cache_opens_on_first_use_from_the_path_set_at_that_moment(lesson, monkeypatch, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    (tmp_path / recorded_requests.REQUESTS_NAME).write_text(RECORDED_REQUESTS_FILE.read_text())
    configure(monkeypatch, cache_path=empty)
    assert cache_file.cache_path() == empty
    message = miss(lesson.ask, lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert "The published run made exactly this request, but" in message and "empty.json" in message


def test_a_miss_is_compared_with_the_requests_beside_the_cache_in_use_and_reread_when_they_change(lesson, monkeypatch,
                                                                                                  tmp_path):
    (tmp_path / "json_cache.json").write_text("{}")
    requests_file = tmp_path / recorded_requests.REQUESTS_NAME
    committed = json.loads(RECORDED_REQUESTS_FILE.read_text())
    requests_file.write_text(json.dumps([request | {"key": "edited", "model": "jev-0.0.1"} for request in committed]))
    configure(monkeypatch, cache_path=tmp_path / "json_cache.json")
    assert recorded_requests.requests_path(cache_file.cache_path()) == requests_file
    state = lesson.later_state("C-1042", "Slow dashboards")
    assert "The published run asked jev-0.0.1, not " in miss(lesson.ask, state, lesson.ROUTE)
    requests_file.write_text(RECORDED_REQUESTS_FILE.read_text())
    os.utime(requests_file, ns=(1, 1))  # another modification time, however fast the file was rewritten
    assert "The published run made exactly this request" in miss(lesson.ask, state, lesson.ROUTE)


def test_an_edited_ticket_text_names_the_edit(lesson):
    state = lesson.later_state("C-1042", "Slow dashboards")
    state["ticket"]["messages"][0]["text"] = "Dashboards are slow on our Windows server."
    message = miss(lesson.ask, state, lesson.ROUTE)
    assert message.startswith("No recorded Jev answer for questions ['team'] about ticket T-201 in ")
    assert (f'ticket.messages[0].text: "{SLOW_TEXT}" → "Dashboards are slow on our Windows server."') in message
    assert "An edited ticket or question is a new request" in message
    assert "Memories carried" not in message and RERUN_ADVICE not in message


def test_an_edited_data_file_names_the_edited_text(tmp_path):
    tickets = tmp_path / "tickets.json"
    tickets.write_text((ROOT / "data" / "tickets.json").read_text().replace(SLOW_TEXT, "Dashboards crawl."))
    script = (f"from memory_cookbook import locations; locations.TICKETS_FILE = {str(tickets)!r}\n"
              "import jev_memory_lesson as b\nfrom memory_cookbook.replay import cache_miss\n"
              "try:\n    b.ask(b.later_state('C-1042', 'Slow dashboards'), b.ROUTE)\n"
              "except cache_miss.CacheMiss as error:\n    print(error)\n")
    env = {name: value for name, value in os.environ.items() if name not in ("TYPESAFE_API_KEY", "COOKBOOK_CACHE")}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT / "notebooks", env=env, capture_output=True,
                            text=True, timeout=60, check=True)
    assert f'ticket.messages[0].text: "{SLOW_TEXT}" → "Dashboards crawl."' in result.stdout


def test_an_extra_message_in_a_ticket_is_named_not_a_crash(lesson):
    state = lesson.later_state("C-1042", "Slow dashboards")
    state["ticket"]["messages"].append({"from": "customer", "text": "Still slow."})
    message = miss(lesson.ask, state, lesson.ROUTE)
    assert 'ticket.messages[1]: (absent) → {"from": "customer", "text": "Still slow."}' in message


def test_more_than_six_differences_are_capped_with_a_count(lesson):
    state = lesson.later_state("C-1042", "Slow dashboards")
    state["ticket"] = {key: f"edited {key}" for key in ("id", "received_on", "subject", "a", "b", "c", "d", "e")}
    state["ticket"]["id"] = "T-201"
    message = miss(lesson.ask, state, lesson.ROUTE)
    assert len(re.findall(r"^  ticket\.", message, re.M)) == 6
    assert "  … and 2 more differences" in message


def test_a_cell_run_twice_says_so(lesson):
    t101 = lesson.ticket_state(lesson.EARLIER[0])
    lesson.ask_with_memory(t101, lesson.ROUTE)
    message = miss(lesson.ask_with_memory, t101, lesson.ROUTE)
    assert "Memories carried: recorded for T-101: none · this request: T-101." in message
    assert RERUN_ADVICE in message


def test_a_memory_carried_twice_says_a_cell_ran_twice(lesson):
    run_earlier_tickets(lesson)
    memories = lesson.MEMORIES["C-1042"]
    message = miss(lesson.ask, slow_dashboards_carrying(lesson, [memories[0], *memories]), lesson.ROUTE)
    assert "this request: T-101, T-101, T-105." in message
    assert RERUN_ADVICE in message


def test_memories_in_another_order_are_named_in_the_order_sent(lesson):
    run_earlier_tickets(lesson)
    message = miss(lesson.ask, slow_dashboards_carrying(lesson, lesson.MEMORIES["C-1042"][::-1]), lesson.ROUTE)
    assert "this request: T-105, T-101." in message


def test_memories_out_of_order_are_named_against_every_recorded_set(lesson):
    run_earlier_tickets(lesson)
    lesson.MEMORY.store.forget_ticket("C-1042", "T-101")  # C-1042 keeps T-105 alone: never recorded with a later one
    message = miss(lesson.ask, lesson.with_memories(lesson.later_state("C-1042", "Slow dashboards")), lesson.ROUTE)
    assert "Memories carried: recorded for T-201: none; T-101; T-101, T-105 · this request: T-105." in message
    assert all(cause in message for cause in SETTING_OR_ORDER)


@pytest.mark.parametrize("threshold, states, decision", [
    (0.95, [("ticket", 0), ("ticket", 2)], "T-101 was judged at remember_at = 0.95 (P(remember) 0.91) and not saved,"
                                           " where the published run saved it."),
    (0.1, [("later", "More seats"), ("later", "Slow dashboards")], "T-203 was judged at remember_at = 0.1"
                                                                   " (P(remember) 0.10) and saved, where the published"
                                                                   " run did not save it.")])
def test_a_threshold_outside_the_recorded_range_is_named_with_its_value_the_decision_and_the_range(
        lesson, threshold, states, decision):
    lesson.MEMORY.remember_at = threshold  # the lesson fixture puts it back
    *first, last = [lesson.ticket_state(lesson.EARLIER[which]) if kind == "ticket"
                    else lesson.later_state("C-1042", which) for kind, which in states]
    for state in first:
        lesson.ask_with_memory(state, lesson.ROUTE)
    lines = miss(lesson.ask_with_memory, last, lesson.ROUTE).splitlines()
    assert lines[2] == (f"The gate's threshold changed what was saved: {decision} The recorded answers cover a"
                        " threshold above 0.12 and up to 0.91 only: change or remove that setting, then Kernel →"
                        " Restart Kernel and Run All Cells.")


def test_of_two_thresholds_that_changed_what_was_saved_the_latest_is_named(lesson):
    lesson.MEMORY.remember_at = 0.95
    lesson.ask_with_memory(lesson.ticket_state(lesson.EARLIER[0]), lesson.ROUTE)  # T-101 (0.91) not saved
    lesson.MEMORY.remember_at = 0.1
    lesson.ask_with_memory(lesson.later_state("C-1042", "More seats"), lesson.ROUTE)  # T-203 (0.10) saved
    message = miss(lesson.ask_with_memory, lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert ("T-203 was judged at remember_at = 0.1 (P(remember) 0.10) and saved, where the published run did not save"
            " it.") in message and "T-101 was judged" not in message


def test_a_threshold_inside_the_recorded_range_is_not_blamed_for_a_miss(lesson):
    lesson.MEMORY.remember_at = 0.8
    run_earlier_tickets(lesson)
    lesson.MEMORY.store.forget_ticket("C-1042", "T-101")  # what changed the memories is a forgetting, not the threshold
    message = miss(lesson.ask, lesson.with_memories(lesson.later_state("C-1042", "Slow dashboards")), lesson.ROUTE)
    assert all(cause in message for cause in SETTING_OR_ORDER) and "The gate's threshold changed" not in message


def test_an_edited_memory_names_the_memory_and_the_field(lesson):
    edited = lesson.ticket_state(lesson.EARLIER[0])
    edited["ticket"]["messages"][0]["text"] = "We run Ubuntu 24.04."
    memories = [{"request": edited, "jev_answered": {lesson.ROUTE["team"].instructions: "x"}}]  # C-1042 has none
    message = miss(lesson.ask, slow_dashboards_carrying(lesson, memories), lesson.ROUTE)
    assert "earlier_tickets_from_this_customer[memory T-101].request.ticket.messages[0].text:" in message


def test_a_new_ticket_and_an_edited_question_are_named(lesson):
    assert "never about T-999: a new ticket is a new request" in miss(lesson.ask, unseen_state(lesson), lesson.ROUTE)
    edited = {"team": lesson.ROUTE["team"].model_copy(update={"instructions": "Which team?"})}
    message = miss(lesson.ask, lesson.later_state("C-1042", "Slow dashboards"), edited)
    assert 'question team.instructions: "Which support team should handle `ticket`?" → "Which team?"' in message


def test_another_model_is_named(lesson, monkeypatch):
    monkeypatch.setattr(lesson, "TYPESAFE_MODEL", "jev-2.0.0")
    message = miss(lesson.ask, lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert "The published run asked jev-1.13.0, not jev-2.0.0." in message


@pytest.mark.parametrize("state", ["Dashboards are slow.", ["C-1042"], {"no": "ticket"}])
def test_a_state_of_another_shape_is_explained_too(lesson, state):
    message = miss(lesson.ask, state, lesson.ROUTE)
    assert "never about a state with no ticket id: a new ticket is a new request" in message


def test_the_offline_message_says_what_going_live_would_do(lesson):
    message = miss(lesson.ask, unseen_state(lesson, "T-998"), lesson.ROUTE)
    assert ("With TYPESAFE_API_KEY set (and TYPESAFE_ENDPOINT for another Jev-compatible server), this request would be"
            " sent to Jev (jev-1.13.0) live and its answer recorded into") in message
    assert message.splitlines()[-2].endswith("json_cache.json.")


def test_a_miss_ends_with_the_link_of_the_request_sent_memories_and_all(lesson):
    run_earlier_tickets(lesson)
    state = lesson.later_state("C-1042", "Slow dashboards")
    state["ticket"]["subject"] = "Slow dashboards again"
    with pytest.raises(cache_miss.CacheMiss) as raised:
        lesson.ask_with_memory(state, lesson.ROUTE)
    model, state_json, questions_json = link_in(str(raised.value).splitlines()[-1])
    assert json.loads(state_json)["ticket"]["subject"] == "Slow dashboards again"
    assert jev_request.carried_memory_ids(json.loads(state_json)) == ("T-101", "T-105")  # the memories it carried
    assert (model, json.loads(questions_json)) == ("jev-1.13.0", jev_request.questions_wire(lesson.ROUTE))
    assert (model, state_json, questions_json) == raised.value.request


def test_a_miss_whose_requests_file_is_missing_still_ends_with_its_link(lesson, monkeypatch, tmp_path):
    cache = tmp_path / "json_cache.json"
    cache.write_text(CACHE_FILE.read_text())
    configure(monkeypatch, cache_path=cache)
    assert "It cannot be compared with the published run's requests" in miss(lesson.ask, unseen_state(lesson),
                                                                             lesson.ROUTE)


def test_without_memories_drops_only_the_memory_list():
    memory = {"request": {"ticket": {"id": "T-101"}}, "jev_answered": {}}
    state = {"customer": {"id": "C-1"}, "tags": ["a"], "earlier": [memory]}
    assert jev_request.without_memories(state) == {"customer": {"id": "C-1"}, "tags": ["a"]}
    assert jev_request.without_memories("text") == "text"


def test_offline_sets_the_key_aside_and_puts_it_back(monkeypatch):
    monkeypatch.setenv("TYPESAFE_API_KEY", CANARY_KEY)
    with replay.offline():
        assert "TYPESAFE_API_KEY" not in os.environ
    assert os.environ["TYPESAFE_API_KEY"] == CANARY_KEY
    with pytest.raises(RuntimeError), replay.offline():
        raise RuntimeError("a failing cell")
    assert os.environ["TYPESAFE_API_KEY"] == CANARY_KEY


def test_a_miss_inside_offline_says_no_key_makes_that_call_live_and_one_outside_says_a_key_would(lesson):
    state = lesson.later_state("C-1042", "Slow dashboards")
    state["ticket"]["subject"] = "Off script"
    with pytest.raises(cache_miss.CacheMiss, match=r"ran inside offline\(\), which only replays .*, key or not"), \
            replay.offline():
        lesson.ask(state, lesson.ROUTE)
    with pytest.raises(cache_miss.CacheMiss, match=r"Offline the cookbook only replays .* With TYPESAFE_API_KEY set"):
        lesson.ask(state, lesson.ROUTE)
    assert replay.OFFLINE_BLOCKS == 0


def test_a_bad_entry_after_good_ones_is_found(tmp_path):
    entries = committed_entries()
    entries["zzzz-last"] = {"model": "jev-1.13.0"}
    path = tmp_path / "json_cache.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(cache_file.CacheError, match="entry zzzz-last… is not a SystemOneResponse"):
        cache_file.check_cache_file(path)


def test_the_cache_file_format_is_cooksafes_keys_sorted_not_recursively():
    text = cache_file.cache_text({"b": {"z": 1, "a": 2}, "a": [1]})
    assert text == '{\n  "a": [\n    1\n  ],\n  "b": {\n    "z": 1,\n    "a": 2\n  }\n}'


def test_a_failed_atomic_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "json_cache.json"
    path.write_text("old")

    def crash(*args):
        raise OSError("the machine stopped halfway")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="halfway"):
        cache_file.write_atomically(path, "new")
    assert [p.name for p in tmp_path.iterdir()] == ["json_cache.json"] and path.read_text() == "old"


RECORDER = """
import sys, jev_memory_lesson as b
for number in range(15):
    state = b.later_state("C-1042", "Slow dashboards")
    state["ticket"]["id"] = f"T-{sys.argv[1]}-{number}"
    b.ask(state, b.ROUTE)
"""


@pytest.mark.slow
def test_two_processes_recording_at_once_keep_every_answer(cache_copy, jev_server):
    env = os.environ | {"COOKBOOK_CACHE": str(cache_copy), "TYPESAFE_API_KEY": CANARY_KEY,
                        "TYPESAFE_ENDPOINT": jev_server.url}
    recorders = [subprocess.Popen([sys.executable, "-c", RECORDER, name], cwd=ROOT / "notebooks", env=env,
                                  stderr=subprocess.PIPE, text=True) for name in ("A", "B")]
    for recorder in recorders:
        assert recorder.wait(timeout=120) == 0, recorder.stderr.read()
    published, recorded = committed_entries(), json.loads(cache_copy.read_text())
    assert requests_served(jev_server) == 30
    assert len(recorded) == 32 + 30
    assert {key: recorded[key] for key in published} == published
    assert cache_copy.read_text() == cache_file.cache_text(recorded)  # still the file format cooksafe writes


def test_the_links_script_gives_a_link_for_every_recorded_call(capsys, monkeypatch):
    monkeypatch.delenv("COOKBOOK_CACHE", raising=False)
    playground_links()  # what scripts/playground_links.py runs
    rows = [line for line in capsys.readouterr().out.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == 32
    recorded = set(committed_entries())
    for row in rows:
        number, ticket, question, memories, answer, link = [cell.strip() for cell in row.strip("|").split("|")]
        model, state, questions = decoded_link(link)
        assert jev_request.cache_key(model, json.dumps(state), json.dumps(questions)) in recorded
        assert (jev_request.ticket_id(state), list(questions)) == (ticket, [question])
        assert (", ".join(jev_request.carried_memory_ids(state)) or "-") == memories
    assert rows[0].split("|")[5].strip() == "cloud_ops 0.80"


def test_a_link_for_a_request_of_two_questions_carries_both(lesson):
    questions = lesson.ROUTE | lesson.GATE
    link = jev_request.playground_link(lesson.later_state("C-1042", "Slow dashboards"), questions, "jev-1.13.0")
    model, state, sent = decoded_link(link)
    assert (model, list(sent)) == ("jev-1.13.0", ["team", "remember"])
    assert sent == jev_request.questions_wire(questions)


def test_the_links_script_names_each_answer_of_a_request_of_two_questions():
    answers = {"team": {"type": "choice", "choice": "billing", "confidence": 0.9, "probabilities": {"billing": 0.981}},
               "remember": {"type": "noul", "noul": 0.0712}}
    assert answers_in_brief(answers) == "billing 0.98; P(yes) 0.07"


# Named here, not read from pytest_plugin.LIVE_SETTINGS: a name dropped from the guard must fail this test.
A_DEVELOPERS_LIVE_SETTINGS = {"TYPESAFE_API_KEY", "TYPESAFE_ENDPOINT", "TYPESAFE_BASE_URL", "COOKBOOK_CACHE",
                              "COOKBOOK_DATABASE_URL"}


def test_the_suite_sets_a_developers_key_endpoint_and_cache_aside_before_nbval_starts_kernels(monkeypatch):
    assert not A_DEVELOPERS_LIVE_SETTINGS & set(os.environ)
    monkeypatch.setattr(pytest_plugin, "SET_ASIDE", {})
    for name in A_DEVELOPERS_LIVE_SETTINGS:
        monkeypatch.setenv(name, "a developer's")
    pytest_plugin.pytest_configure()
    assert not A_DEVELOPERS_LIVE_SETTINGS & set(os.environ)
    assert {name: pytest_plugin.SET_ASIDE.get(name) for name in A_DEVELOPERS_LIVE_SETTINGS} == dict.fromkeys(
        A_DEVELOPERS_LIVE_SETTINGS, "a developer's")
    pytest_plugin.pytest_unconfigure()
    assert {name: os.environ.get(name) for name in A_DEVELOPERS_LIVE_SETTINGS} == dict.fromkeys(
        A_DEVELOPERS_LIVE_SETTINGS, "a developer's")  # given back when the session ends


def test_pytest_ini_loads_the_plugin_for_every_run_even_of_one_notebook():
    assert "-p cookbook_tools.pytest_plugin" in (ROOT / "pytest.ini").read_text()


def test_long_differing_texts_are_cut_to_their_width_from_the_same_place_before_their_first_difference():
    assert cache_miss.differing_parts("ab", "ac") == ('"ab"', '"ac"')
    assert cache_miss.differing_parts("x" * 100, 1, width=10) == ('"xxxxxxxx…', "1")  # they differ at once
    recorded, sent = "a" * 50 + "X" + "b" * 100, "a" * 50 + "Y" + "b" * 100
    assert cache_miss.differing_parts(recorded, sent, width=20, before=5) == ("…aaaaaXbbbbbbbbbbbb…",
                                                                            "…aaaaaYbbbbbbbbbbbb…")
    assert cache_miss.differing_parts("a" * 100 + "X", "a" * 100 + "Yz", width=10, before=5) == ('…aaaaaaX"',
                                                                                                   '…aaaaaaYz"')
