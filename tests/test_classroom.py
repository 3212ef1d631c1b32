"""memory_cookbook/classroom/folded.py and explorer.py: a Try it answer's output stays folded, and the memory explorer
offers exactly the recorded routing calls of the later messages, shows what Jev answered to each, and follows its
dropdowns."""

import json
import shutil

import nbformat
import pytest
from conftest import committed_entries, decoded_link, committed_requests

from memory_cookbook.classroom import explorer as explorer_module
from memory_cookbook import jev_request
from memory_cookbook.classroom import folded
from cookbook_tools.paths import ENGLISH_NOTEBOOKS, NOTEBOOKS, RECORDED_REQUESTS_FILE, TICKETS_FILE

FOLDED = "<details><summary>Show the answer</summary>"
REQUESTS = committed_requests()
CACHE = committed_entries()
LATER_SUBJECTS = [message["subject"] for message in json.loads(TICKETS_FILE.read_text())
                  ["later_messages"]]


def recorded_routing_calls(cache=None):
    """The explorer's calls as notebook 05 asks for them, with the lesson's expected teams and memory shape."""
    import jev_memory_lesson

    return explorer_module.recorded_routing_calls(jev_memory_lesson.EXPECTED, jev_memory_lesson.as_memory, cache=cache)


def test_messages_come_in_the_datas_order_whatever_order_the_run_sent_them(calls):
    assert list(dict.fromkeys(call.subject for call in calls)) == LATER_SUBJECTS
    assert list(dict.fromkeys(call.customer for call in calls)) == ["C-1042", "C-2210"]


@pytest.fixture(scope="module")
def calls():
    return recorded_routing_calls()


@pytest.fixture
def explorer(calls):
    return explorer_module.memory_explorer(calls)


def choose(explorer, customer, subject, memories):
    explorer.customer.value, explorer.subject.value, explorer.memories.value = customer, subject, memories
    return explorer.shown


@pytest.fixture(scope="module")
def browsed(calls):
    """{(customer, message, memory set): the call shown} for everything the dropdowns let a student pick, found by
    picking (once; with no chart drawn: what a pick draws is checked below, one pick at a time)."""
    explorer, found = explorer_module.memory_explorer(calls), {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(explorer_module, "chart_png", lambda call: b"")
        for customer in [value for _, value in explorer.customer.options]:
            explorer.customer.value = customer
            for subject in explorer.subject.options:
                explorer.subject.value = subject
                for _, memories in explorer.memories.options:
                    explorer.memories.value = memories
                    found[(customer, subject, memories)] = explorer.shown
    return found


# A folded answer

def test_a_folded_answer_is_html_details_around_the_escaped_text_with_a_plain_text_fallback():
    answer = folded.FoldedAnswer("x < 1 </details> <details>")
    assert answer._repr_html_().startswith(FOLDED)
    assert answer._repr_html_().count("<details") == answer._repr_html_().count("</details>") == 1
    assert repr(answer) == "x < 1 </details> <details>"


def test_folded_answer_displays_what_the_block_printed_and_prints_nothing(monkeypatch, capsys):
    shown = []
    monkeypatch.setattr(folded, "display", shown.append)
    with folded.folded_answer():
        print("T-205")
    assert [answer.text for answer in shown] == ["T-205"] and capsys.readouterr().out == ""


def test_a_failing_answer_block_prints_what_it_had_printed_and_raises(monkeypatch, capsys):
    monkeypatch.setattr(folded, "display", pytest.fail)
    with pytest.raises(KeyError), folded.folded_answer():
        print("half an answer")
        raise KeyError("T-999")
    assert capsys.readouterr().out == "half an answer\n"


# 01-06 and 09 end with a Try it; 07 and 08 do not
TRY_IT_NOTEBOOKS = [path for path in ENGLISH_NOTEBOOKS if not path.name.startswith(("07_", "08_"))]
TRY_IT_TWINS = [path.with_name(path.stem + ".zh.ipynb") for path in TRY_IT_NOTEBOOKS]


@pytest.mark.parametrize("path", [*TRY_IT_NOTEBOOKS, *TRY_IT_TWINS], ids=lambda path: path.name)
def test_every_try_it_answer_is_committed_folded_with_its_source_hidden(path):
    answers = [cell for cell in nbformat.read(path, as_version=4).cells
               if cell.metadata.get("jupyter", {}).get("source_hidden")]
    assert len(answers) == 1
    outputs = answers[0].outputs
    label = folded.CHINESE_SUMMARY if path.name.endswith(".zh.ipynb") else folded.SUMMARY  # the reader's language
    assert len(outputs) == 1, outputs
    assert outputs[0].data["text/html"].startswith(f"<details><summary>{label}</summary>"), outputs


# The explorer's data is the recording's

def test_every_option_the_explorer_offers_is_a_recorded_call_with_its_recorded_answer(browsed):
    for (customer, subject, memories), call in browsed.items():
        key = jev_request.cache_key(call.model, json.dumps(call.state), json.dumps(call.questions))
        assert key in {request.key for request in REQUESTS} and CACHE[key] == call.response
        assert (call.customer, call.subject, call.memories) == (customer, subject, memories)


def test_every_recorded_routing_call_of_a_later_message_is_offered(browsed):
    recorded = [(r.state["customer"]["id"], r.state["ticket"]["subject"],
                 tuple(m["request"]["ticket"]["id"] for m in r.state.get("earlier_tickets_from_this_customer", [])))
                for r in REQUESTS if "team" in r.questions and r.state["ticket"]["subject"] in LATER_SUBJECTS]
    assert len(recorded) == 14
    assert sorted(browsed) == sorted(recorded)


def test_p_remember_is_the_gate_asked_about_that_very_call_and_absent_where_none_was(calls):
    gates = [(r.state, CACHE[r.key]["answers"]["remember"]["noul"]) for r in REQUESTS
             if "remember" in r.questions]
    for call in calls:
        plain = {key: value for key, value in call.state.items() if key != "earlier_tickets_from_this_customer"}
        chosen = call.questions["team"]["criteria"][call.choice]
        about_this_call = [p for state, p in gates
                           if state["request"] == plain and chosen in state["jev_answered"].values()]
        assert about_this_call == ([call.p_remember] if call.p_remember is not None else []), call.memory_label
    assert sum(call.p_remember is None for call in calls) == 2  # the plain "Upgrade failing" calls skip the wrapper


def test_every_link_decodes_to_the_cached_request(calls):
    for call in calls:
        model, state, questions = decoded_link(call.link)
        assert jev_request.cache_key(model, json.dumps(state), json.dumps(questions)) in CACHE


# The explorer follows its dropdowns

def test_choosing_another_call_updates_the_chart_the_gate_the_tokens_and_the_link(explorer):
    before = choose(explorer, "C-1042", "More seats", ())
    chart, facts = explorer.chart.value, explorer.facts.value
    after = choose(explorer, "C-1042", "More seats", ("T-101",))
    assert after != before and explorer.chart.value != chart and explorer.facts.value != facts
    assert explorer.chart.value == explorer_module.chart_png(after)
    assert f"P(remember): {after.p_remember:.2f}" in explorer.facts.value
    assert f"input tokens: {after.input_tokens}" in explorer.facts.value
    assert decoded_link(explorer.facts.value.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")) == \
        (after.model, after.state, after.questions)


def test_another_customer_offers_only_that_customers_memory_sets_and_keeps_the_message(explorer, monkeypatch):
    monkeypatch.setattr(explorer_module, "chart_png", lambda call: b"")  # the options are checked here, not charts
    choose(explorer, "C-1042", "More seats", ("T-101", "T-105"))
    explorer.customer.value = "C-2210"
    assert explorer.subject.value == "More seats"
    assert [memories for _, memories in explorer.memories.options] == [(), ("T-102",)]
    assert explorer.shown.memories == ()


def test_the_bars_are_jevs_recorded_probabilities_with_the_expected_team_marked(calls):
    call = calls[0]
    fig, ax = explorer_module.plt.subplots()
    bars = explorer_module.bar_chart(ax, call)
    teams = list(call.questions["team"]["criteria"])
    assert [bar.get_width() for bar in bars] == [call.probabilities[team] for team in teams]
    marked = [label.get_text() for label in ax.get_yticklabels() if label.get_text().startswith("★")]
    assert marked == [f"★ {call.expected}"]
    explorer_module.plt.close(fig)


def test_the_static_chart_has_a_panel_per_customer_and_message_and_a_bar_per_memory_set(calls):
    fig = explorer_module.small_multiples(calls)
    panels = {ax.get_title().split("\n")[0]: [(t.get_text(), bar.get_height()) for t, bar in
                                              zip(ax.get_xticklabels(), ax.patches, strict=True)] for ax in fig.axes}
    expected = {}
    for call in calls:
        expected.setdefault(f"{call.customer} · {call.subject}", []).append(
            (call.memory_label, call.probabilities[call.expected]))
    assert panels == expected and len(panels) == 2 * len(LATER_SUBJECTS)
    explorer_module.plt.close(fig)


def test_while_a_recording_fills_the_cache_in_a_call_it_lacks_is_not_offered(tmp_path, monkeypatch):
    missing = next(r.key for r in REQUESTS if "team" in r.questions and r.state["ticket"]["id"] == "T-202")
    cache_path = tmp_path / "json_cache.json"
    shutil.copyfile(RECORDED_REQUESTS_FILE, tmp_path / RECORDED_REQUESTS_FILE.name)
    cache_path.write_text(json.dumps({key: value for key, value in CACHE.items() if key != missing}))
    monkeypatch.setenv("TYPESAFE_API_KEY", "a key: a recording is filling the cache in")
    calls = recorded_routing_calls(cache=cache_path)
    assert len(calls) == 13 and not any(call.subject == "Upgrade failing" and call.memories == () and
                                        call.customer == "C-1042" for call in calls)


def test_while_a_recording_has_no_routing_call_yet_the_explorer_offers_none_and_does_not_stop(tmp_path, monkeypatch):
    cache_path = tmp_path / "json_cache.json"
    shutil.copyfile(RECORDED_REQUESTS_FILE, tmp_path / RECORDED_REQUESTS_FILE.name)
    gates_only = {r.key: CACHE[r.key] for r in REQUESTS if "team" not in r.questions}
    assert gates_only
    cache_path.write_text(json.dumps(gates_only))
    monkeypatch.setenv("TYPESAFE_API_KEY", "a key: a recording is filling the cache in")
    assert recorded_routing_calls(cache=cache_path) == []


def test_an_explorer_with_no_call_says_so():
    explorer = explorer_module.memory_explorer([])
    assert explorer.calls == [] and list(explorer.customer.options) == [] and list(explorer.memories.options) == []
    assert explorer_module.NOTHING_RECORDED in explorer._repr_mimebundle_()["text/plain"]


def test_a_recorded_call_names_its_memory_set_its_expected_team_and_jevs_choice_as_recorded(calls):
    by_set = {(call.customer, call.subject, call.memory_label): call for call in calls}
    plain = by_set[("C-1042", "Slow dashboards", "none")]
    assert (plain.expected, plain.choice, round(plain.probabilities["cloud_ops"], 2)) == (
        "selfhosted_windows", "cloud_ops", 0.80)
    both = by_set[("C-1042", "More seats", "T-101, T-105")]
    assert (both.memories, both.expected, both.input_tokens) == (("T-101", "T-105"), "enterprise_desk", 975)


# The explorer in the Chinese notebooks

CHINESE_KERNEL = "/home/student/cookbook/notebooks/05_probe_sequence.zh.ipynb"  # as JupyterLab names its notebook


def test_in_a_chinese_notebook_the_explorer_speaks_chinese_and_draws_the_same_chart(calls, monkeypatch):
    english = choose(explorer_module.memory_explorer(calls), "C-1042", "More seats", ("T-101",))
    english_chart = explorer_module.chart_png(english)
    monkeypatch.setenv("JPY_SESSION_NAME", CHINESE_KERNEL)
    chinese = explorer_module.memory_explorer(calls)
    assert choose(chinese, "C-1042", "More seats", ("T-101",)) == english
    said = explorer_module.CHINESE
    assert [chinese.customer.description, chinese.subject.description, chinese.memories.description] == \
        [said["customer"], said["message"], said["memories"]]
    assert chinese.memories.options[0][0] == said["none"] and said["link"] in chinese.facts.value
    assert "记忆：T-101\nJev 选了 enterprise_desk（0.44）" in chinese.facts.value
    assert f"P(remember)：{english.p_remember:.2f}" in chinese.facts.value
    assert chinese.chart.value == english_chart  # no word in it: one chart for both editions


def test_what_the_sync_writes_for_a_chinese_notebook_is_what_its_kernel_writes(calls, monkeypatch):
    """scripts/sync_chinese.py turns the English explorer's text into the Chinese one: a Chinese kernel's Run All and
    Save then leave the committed twin as it is."""
    for call in calls:
        in_english = explorer_module.call_summary(call)
        assert explorer_module.in_chinese(in_english) == explorer_module.call_summary(call, explorer_module.CHINESE)
    english = explorer_module.memory_explorer(calls)
    monkeypatch.setenv("JPY_SESSION_NAME", CHINESE_KERNEL)
    chinese = explorer_module.memory_explorer(calls)
    assert explorer_module.in_chinese(english.facts.value) == chinese.facts.value
    assert explorer_module.in_chinese(english._repr_mimebundle_()["text/plain"]) == \
        chinese._repr_mimebundle_()["text/plain"]


def test_the_committed_chinese_notebook_holds_the_chinese_explorers_text_and_saved_labels():
    chinese = nbformat.read(NOTEBOOKS / "05_probe_sequence.zh.ipynb", as_version=4)
    shown = next(output for cell in chinese.cells if cell.cell_type == "code" for output in cell.outputs
                 if "application/vnd.jupyter.widget-view+json" in output.get("data", {}))
    assert shown["data"]["text/plain"].startswith(explorer_module.CHINESE["text"])
    state = chinese.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    descriptions = {model["state"].get("description") for model in state.values()
                    if model["model_name"] == "DropdownModel"}
    assert descriptions == {explorer_module.CHINESE[word] for word in ("customer", "message", "memories")}
