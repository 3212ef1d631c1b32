"""Unit tests of the exported module, offline, against the published cache."""

import collections
import json
import os
import subprocess
import sys

from memory_cookbook.replay import cache_miss
from memory_cookbook import jev_request
import pytest
from memory_cookbook.replay import calls as replay
from conftest import CACHE_FILE, ROOT, cache_keys, run_earlier_tickets, unseen_state
from cookbook_tools.paths import RECORDED_REQUESTS_FILE
from typesafe_sdk import ChoiceAnswer, NoulAnswer, ScoreAnswer

PUBLIC_NAMES = ["TYPESAFE_MODEL", "REMEMBER_AT", "MEMORY_KEY", "DATA", "CUSTOMERS", "EARLIER", "ticket_state",
                "later_state", "ROUTE", "GATE", "ask", "answer_text", "as_memory", "remember_probability", "MEMORY",
                "MEMORIES",
                "customer_id", "ask_with_memory", "start_from", "probe"]


def test_module_exposes_the_published_names():
    import jev_memory_lesson

    missing = [name for name in PUBLIC_NAMES if not hasattr(jev_memory_lesson, name)]
    assert missing == []
    assert (jev_memory_lesson.TYPESAFE_MODEL, jev_memory_lesson.REMEMBER_AT) == ("jev-1.13.0", 0.5)
    assert jev_memory_lesson.MEMORY_KEY == "earlier_tickets_from_this_customer"


def test_questions_are_sent_exactly_as_published():
    import jev_memory_lesson

    published = json.loads((ROOT / "tests" / "questions.json").read_text())
    assert jev_request.questions_wire(jev_memory_lesson.ROUTE) == published["ROUTE"]
    assert jev_request.questions_wire(jev_memory_lesson.GATE) == published["GATE"]


def test_cached_function_keeps_the_recorded_name():
    assert replay._system_one.__name__ == "_system_one"
    assert jev_request.cache_key("m", "s", "q") == "_system_one|m|s|q"


def test_ticket_states_have_the_published_shape_and_ids(lesson):
    state = lesson.later_state("C-2210", "More seats")
    assert list(state) == ["customer", "ticket"]
    assert list(state["ticket"]) == ["id", "received_on", "subject", "messages"]
    assert (state["ticket"]["id"], state["ticket"]["received_on"]) == ("T-206", "2026-09-28")
    ids = [lesson.later_state(c, m["subject"])["ticket"]["id"] for c in lesson.CUSTOMERS for m in lesson.LATER]
    assert ids == ["T-201", "T-202", "T-203", "T-204", "T-205", "T-206"]


def test_plain_routing_replays_the_recorded_answer(lesson):
    response = lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert lesson.routed(response) == "cloud_ops 0.80"
    assert response.usage.input_tokens == 599


def test_memories_have_the_published_shape_and_never_nest(lesson):
    run_earlier_tickets(lesson)
    saved = [m for memories in lesson.MEMORIES.values() for m in memories]
    assert [list(m) for m in saved] == [["request", "jev_answered"]] * 3
    assert all(lesson.MEMORY_KEY not in json.dumps(m["request"]) for m in saved)
    t105 = lesson.MEMORIES["C-1042"][1]
    assert t105["jev_answered"] == {lesson.ROUTE["team"].instructions: lesson.ROUTE["team"].criteria["enterprise_desk"]}


def test_memories_are_kept_per_customer(lesson):
    run_earlier_tickets(lesson)
    assert lesson.memory_ids("C-1042") == ["T-101", "T-105"]
    assert lesson.memory_ids("C-2210") == ["T-102"]
    sent = lesson.with_memories(lesson.later_state("C-2210", "Slow dashboards"))
    assert [m["request"]["customer"]["id"] for m in sent[lesson.MEMORY_KEY]] == ["C-2210"]
    assert list(sent)[-1] == lesson.MEMORY_KEY


def test_a_customer_with_no_memories_gets_the_state_unchanged(lesson):
    state = lesson.later_state("C-1042", "Slow dashboards")
    assert lesson.with_memories(state) is state


@pytest.mark.parametrize("probability, saved", [(0.5, True), (0.4999, False), (0.91, True), (0.07, False)])
def test_gate_saves_at_exactly_remember_at(lesson, monkeypatch, probability, saved):
    monkeypatch.setattr(lesson, "remember_probability", lambda _memory: probability)
    lesson.ask_with_memory(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert lesson.memory_ids("C-1042") == (["T-201"] if saved else [])


def test_wrapper_sends_two_requests_route_then_gate(lesson):
    lesson.ask_with_memory(lesson.ticket_state(lesson.EARLIER[0]), lesson.ROUTE)
    assert [list(json.loads(call.questions_json)) for call in lesson.CALLS] == [["team"], ["remember"]]


def test_answer_text_of_a_noul_is_its_probability(lesson):
    t101 = lesson.ticket_state(lesson.EARLIER[0])
    gate_memory = lesson.as_memory(t101, lesson.ROUTE, lesson.ask(t101, lesson.ROUTE))
    response = lesson.ask(gate_memory, lesson.GATE)
    assert lesson.answer_text(lesson.GATE["remember"], response.answers["remember"]) == 0.91


def test_cache_miss_offline_contacts_no_endpoint_and_says_what_and_how(lesson, monkeypatch):
    before = CACHE_FILE.read_bytes()
    monkeypatch.setenv("TYPESAFE_ENDPOINT", "http://127.0.0.1:9")  # unreachable: a client would retry, then fail
    monkeypatch.setattr(replay, "TypeSafeClient", lambda **settings: pytest.fail(f"a client was made: {settings}"))
    with pytest.raises(cache_miss.CacheMiss) as raised:
        lesson.ask(unseen_state(lesson), lesson.ROUTE)
    message = str(raised.value)
    for part in ("['team']", "T-999", "json_cache.json", "TYPESAFE_API_KEY", "TYPESAFE_ENDPOINT"):
        assert part in message
    assert CACHE_FILE.read_bytes() == before


def test_cache_miss_of_the_gate_names_the_ticket(lesson):
    state = lesson.later_state("C-1042", "Upgrade failing")
    with pytest.raises(cache_miss.CacheMiss, match=r"\['remember'\] about ticket T-202"):
        lesson.ask({"request": state, "jev_answered": {}}, lesson.GATE)


@pytest.mark.parametrize("bad_state", ["Dashboards are slow.", {"ticket": {"id": "T-1"}}, {"customer": {}},
                                       {"customer": {"id": 1042}}, ["C-1042"]])
def test_wrapper_refuses_a_state_without_customer_id_before_any_call(lesson, bad_state):
    lesson.ask_with_memory(lesson.ticket_state(lesson.EARLIER[0]), lesson.ROUTE)
    saved, calls = json.dumps(dict(lesson.MEMORIES)), len(lesson.CALLS)
    with pytest.raises(ValueError, match="customer.id"):
        lesson.ask_with_memory(bad_state, lesson.ROUTE)
    assert (json.dumps(dict(lesson.MEMORIES)), len(lesson.CALLS)) == (saved, calls)


def test_cookbook_cache_names_another_cache_file(tmp_path):
    other = tmp_path / "other_cache.json"
    other.write_text("{}")
    (tmp_path / RECORDED_REQUESTS_FILE.name).write_text(RECORDED_REQUESTS_FILE.read_text())
    env = {k: v for k, v in os.environ.items() if k != "TYPESAFE_API_KEY"} | {"COOKBOOK_CACHE": str(other)}
    script = ("import jev_memory_lesson as b\nfrom memory_cookbook.replay import cache_file, cache_miss\n"
              "print(cache_file.cache_path())\n"
              "try:\n    b.ask(b.later_state('C-1042', 'Slow dashboards'), b.ROUTE)\n"
              "except cache_miss.CacheMiss as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT / "notebooks", env=env, capture_output=True,
                            text=True, timeout=60, check=True)
    path_line, error_line, *explanation = result.stdout.splitlines()
    assert path_line == str(other)
    assert "other_cache.json" in error_line and "T-201" in error_line
    assert "The published run made exactly this request, but" in explanation[0]


def test_start_from_sends_the_named_tickets_in_the_published_order(lesson):
    lesson.start_from("T-105", "T-101")
    assert lesson.memory_ids("C-1042") == ["T-101", "T-105"]
    assert [entry["ticket"] for entry in lesson.MEMORY.ledger()] == ["T-101", "T-105"]


def test_start_from_forgets_what_was_remembered_before(lesson):
    lesson.start_from("T-101", "T-102")
    lesson.start_from("T-101")
    assert (lesson.memory_ids("C-1042"), lesson.memory_ids("C-2210")) == (["T-101"], [])
    assert [entry["ticket"] for entry in lesson.MEMORY.ledger()] == ["T-101"]


def test_answer_text_and_the_answer_in_brief_of_each_answer_type(lesson):
    team = lesson.ROUTE["team"]
    choice = ChoiceAnswer(choice="billing", confidence=0.7, probabilities={"billing": 0.7, "general": 0.3})
    noul = NoulAnswer(noul=0.25)
    score = ScoreAnswer(score=4, confidence=0.9, legend={1: "low", 5: "high"}, probabilities={1: 0.1, 5: 0.9})
    assert lesson.answer_text(team, choice) == team.criteria["billing"]
    assert (lesson.answer_text(lesson.GATE["remember"], noul), lesson.answer_text(None, score)) == (0.25, 4)
    briefs = ["billing 0.70", "P(yes) 0.25", "score 4"]
    assert [jev_request.answer_in_brief(a) for a in (choice, noul, score)] == briefs
    assert [jev_request.answer_in_brief(a.model_dump(mode="json")) for a in (choice, noul, score)] == briefs
    with pytest.raises(TypeError, match="no brief form"):
        jev_request.answer_in_brief(object())


def test_the_key_oracle_matches_the_published_cache(lesson):
    lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert cache_keys(call.request for call in lesson.CALLS) == {
        "f8f226dfbd75267d11b510313f1432cae58a41d7bdb71a91d80a37d1553a3495"}


def test_verdict_says_saved_from_remember_at_up(lesson):
    assert [lesson.verdict(p) for p in (0.49, 0.5, 0.91)] == ["not saved", "saved", "saved"]


def test_answer_text_refuses_an_answer_type_it_cannot_store(lesson):
    with pytest.raises(TypeError, match="no text form"):
        lesson.answer_text(lesson.ROUTE["team"], object())


def test_probe_sends_both_probe_messages_through_the_wrapper_in_order(lesson):
    lesson.start_from()
    assert list(lesson.probe("C-1042")) == ["Slow dashboards", "More seats"]
    routed_tickets = [json.loads(call.state_json)["ticket"]["id"] for call in lesson.CALLS
                      if "team" in call.questions_json]
    assert routed_tickets == ["T-201", "T-203"]
    assert len(lesson.CALLS) == 4  # each probe is two requests: the question, then the gate


def test_route_later_messages_counts_only_the_expected_teams(lesson, monkeypatch, capsys):
    lesson.start_from("T-101", "T-102", "T-103", "T-104", "T-105")
    wrong = {customer: dict(teams) for customer, teams in lesson.EXPECTED.items()}
    wrong["C-1042"]["Slow dashboards"] = "billing"
    monkeypatch.setattr(lesson, "EXPECTED", wrong)
    lesson.route_later_messages()
    assert capsys.readouterr().out.splitlines()[-1] == "5/6 later messages reached the expected team"


def test_the_published_run_makes_62_calls_of_which_32_are_distinct(lesson):
    calls = lesson.replay_published_run()
    assert (len(calls), len(set(calls))) == (62, 32)


def test_the_wrapper_sends_what_the_pages_two_steps_alone_send_byte_for_byte(lesson):
    """The page's wrapper: its two steps alone, over a dict of its own. The cookbook's sends the same requests."""
    page_memories = collections.defaultdict(list)

    def page_ask_with_memory(state, questions):
        saved = page_memories[state["customer"]["id"]]
        response = lesson.ask({**state, lesson.MEMORY_KEY: saved} if saved else state, questions)
        pair = lesson.as_memory(state, questions, response)
        if lesson.remember_probability(pair) >= 0.5:
            saved.append(pair)
        return response

    states = [*map(lesson.ticket_state, lesson.EARLIER), lesson.later_state("C-1042", "Slow dashboards")]
    sent = []
    for wrapper in (page_ask_with_memory, lesson.ask_with_memory):
        first = len(lesson.CALLS)
        for state in states:
            wrapper(state, lesson.ROUTE)
        sent.append(lesson.CALLS[first:])
    assert len(sent[0]) == 12 and sent[1] == sent[0]


def test_a_miss_no_cell_catches_shows_its_message_without_a_traceback_in_ipython(tmp_path):
    cell = ("from memory_cookbook.replay.cache_miss import CacheMiss\n"
            "def deep():\n    raise CacheMiss('No recorded answer.\\nWhat to do.')\n"
            "deep()\n")
    script = f"from IPython.core.interactiveshell import InteractiveShell\nInteractiveShell().run_cell({cell!r})\n"
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "IPYTHONDIR": str(tmp_path)}, check=True)
    assert result.stdout.splitlines() == ["CacheMiss: No recorded answer.", "What to do."]
