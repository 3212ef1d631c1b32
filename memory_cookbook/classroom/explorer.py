"""05's memory explorer over the recorded run (hand-written, tested in tests/test_classroom.py): pick a customer, a
later message and one of the memory sets the run actually sent with it, and see what Jev answered.
`recorded_routing_calls(EXPECTED, as_memory)` is its data (the lesson's expected teams and memory shape, passed in: this
package never imports the lesson), `small_multiples()` the same data as one static chart for the pages and GitHub,
where widgets cannot run. Everything shown comes from recorded_requests.json and the cache: nothing is asked, nothing
can miss.
"""

import html
import io
import itertools
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from typesafe_sdk import Choice, SystemOneResponse

from memory_cookbook.replay.cache_file import cache_path, check_cache_file
from memory_cookbook.classroom.folded import in_chinese_notebook
from memory_cookbook.jev_request import carried_memory_ids, playground_link, without_memories
from memory_cookbook.checked_files import damaged, requests_fix
from memory_cookbook.replay.recorded_requests import check_in_step, recorded_requests, requests_path

__all__ = ["CHART_DPI", "CHART_INCHES", "CHART_WIDTH", "CHINESE", "ENGLISH", "EXPECTED_MARK", "EXPLORERS_MADE",
           "LINK_STYLE", "NOTHING_RECORDED", "RecordedCall", "bar_chart", "call_summary", "chart_png", "in_chinese",
           "memory_explorer", "recorded_routing_calls", "small_multiples", "summary_pattern", "words"]

# The recorded routing calls of the later messages

@dataclass(frozen=True)
class RecordedCall:
    """One routing call of the published run, as recorded: what was sent, and what Jev answered."""

    customer: str
    subject: str
    memories: tuple  # the ticket ids of the memories sent with it, in the order sent
    expected: str  # the team the data expects for this customer's message
    model: str
    state: dict
    questions: dict  # as sent: {question_id: question as JSON}
    response: dict  # the cache's entry
    p_remember: float | None  # P(remember) if the gate was asked about this very call

    @property
    def probabilities(self) -> dict[str, float]:
        return self.response["answers"]["team"]["probabilities"]

    @property
    def choice(self) -> str:
        return self.response["answers"]["team"]["choice"]

    @property
    def input_tokens(self) -> int:
        return self.response["usage"]["input_tokens"]

    @property
    def company(self) -> str:
        return self.state["customer"]["company"]

    @property
    def link(self) -> str:
        return playground_link(self.state, self.questions, self.model)

    @property
    def memory_label(self) -> str:
        return self.memories_said(ENGLISH)

    def memories_said(self, said: dict[str, str]) -> str:
        """The memory set's ticket ids, or the word for none in the words `said`."""
        return ", ".join(map(str, self.memories)) or said["none"]


def recorded_routing_calls(expected: dict[str, dict[str, str]], as_memory: Callable[..., Any],
                           cache: Path | None = None) -> list[RecordedCall]:
    """Every recorded routing call of a later message, with its recorded answer and, where the gate was asked about
    that very call, P(remember); by customer and message in the order of `expected` ({customer: {message subject:
    expected team}}, the lesson's EXPECTED), then in the order the run first sent them. `as_memory` is the lesson's:
    it finds the gate's request about each call. The requests file beside the cache, missing, damaged or out of step
    with the cache, is a DamagedFile before anything is drawn; while a recording fills the cache in (a key is set),
    the requests it has not answered yet are left out."""
    cache = cache or cache_path()
    entries = check_cache_file(cache)
    requests = recorded_requests(requests_path(cache))
    recording = bool(os.environ.get("TYPESAFE_API_KEY"))
    if recording:
        requests = tuple(request for request in requests if request.key in entries)
    else:
        check_in_step(cache, entries, requests)
    gates = {json.dumps(request.state, sort_keys=True): entries[request.key]["answers"]["remember"]["noul"]
             for request in requests if "remember" in request.questions}
    order = [(customer, subject) for customer, teams in expected.items() for subject in teams]
    calls = []
    for request in requests:
        state, questions = request.state, request.questions
        if "team" not in questions or (state["customer"]["id"], state["ticket"]["subject"]) not in order:
            continue
        customer, subject = state["customer"]["id"], state["ticket"]["subject"]
        response = entries[request.key]
        # The gate's state is this call as a memory: the state without its memories, and Jev's answer.
        memory = as_memory(without_memories(state), {"team": Choice.model_validate(questions["team"])},
                           SystemOneResponse.model_validate(response))
        calls.append(RecordedCall(
            customer=customer, subject=subject, memories=carried_memory_ids(state),
            expected=expected[customer][subject], model=request.model, state=state, questions=questions,
            response=response, p_remember=gates.get(json.dumps(memory, sort_keys=True))))
    if not calls and not recording:
        raise damaged(requests_path(cache), "names no routing call of a later message: the explorer has nothing to"
                                            " show", requests_fix(requests_path(cache)))
    return sorted(calls, key=lambda call: order.index((call.customer, call.subject)))  # stable: first sent first


# Charts

EXPECTED_MARK = "★"  # in matplotlib's own font, as every word of the explorer's chart: it is one chart in both editions


def bar_chart(ax: Any, call: RecordedCall) -> Any:
    """Jev's distribution over the teams for one call, the expected team's bar in green and marked ★."""
    teams = list(call.questions["team"]["criteria"])
    colours = ["tab:green" if team == call.expected else "tab:gray" for team in teams]
    labels = [f"{EXPECTED_MARK} {team}" if team == call.expected else team for team in teams]
    bars = ax.barh(labels, [call.probabilities[team] for team in teams], color=colours)
    ax.bar_label(bars, fmt="%.2f", padding=2, fontsize=8)
    ax.set_xlim(0, 1.15)
    ax.set_xlabel("P(team)")
    ax.invert_yaxis()
    return bars


def small_multiples(calls: list[RecordedCall]) -> Any:
    """One panel per customer and later message, one group of bars per recorded memory set: P(expected team)."""
    customers = list(dict.fromkeys(call.customer for call in calls))
    subjects = list(dict.fromkeys(call.subject for call in calls))
    fig, axes = plt.subplots(len(customers), len(subjects), figsize=(9, 5), sharey=True, squeeze=False)
    for ax, (customer, subject) in zip(axes.flat, [(c, s) for c in customers for s in subjects], strict=True):
        shown = [call for call in calls if (call.customer, call.subject) == (customer, subject)]
        colours = ["tab:green" if call.choice == call.expected else "tab:red" for call in shown]
        bars = ax.bar([call.memory_label for call in shown], [call.probabilities[call.expected] for call in shown],
                      color=colours)
        ax.bar_label(bars, fmt="%.2f", fontsize=8)
        ax.set_title(f"{customer} · {subject}\nexpected: {shown[0].expected}", fontsize=9)
        ax.set_ylim(0, 1.15)
        ax.tick_params(axis="x", labelsize=8, rotation=20)
    axes[0][0].set_ylabel("P(expected team)")
    fig.suptitle("Jev's probability for the expected team, per memory set sent"
                 " (green: Jev chose it; red: it chose another)", fontsize=10)
    fig.tight_layout()
    return fig


# The explorer

# What the explorer says, in the language of the notebook it runs in (scripts/sync_chinese.py writes the Chinese
# notebook's saved outputs with in_chinese(), so that a kernel there writes them again unchanged).
ENGLISH = {"customer": "customer", "message": "message", "memories": "memories", "none": "none",
           "not asked": "not asked about this call",
           "summary": "{customer} · {subject} · memories: {memories}\nJev chose {choice} ({p_choice}); expected"
                      " {expected} ({p_expected}, " + EXPECTED_MARK + ")\nP(remember): {gate} · input tokens: {tokens}",
           "link": "Open this call in the TypeSafe playground", "text": "Memory explorer (runs in JupyterLab): "}
CHINESE = {"customer": "客户", "message": "消息", "memories": "记忆", "none": "无",
           "not asked": "门控没有评判这次调用",
           "summary": "{customer} · {subject} · 记忆：{memories}\nJev 选了 {choice}（{p_choice}）；预期团队"
                      " {expected}（{p_expected}，" + EXPECTED_MARK + "）\nP(remember)：{gate} · 输入 token 数："
                      "{tokens}",
           "link": "在 TypeSafe playground 中打开这次调用", "text": "记忆探索器（在 JupyterLab 中运行）："}


def words() -> dict[str, str]:
    """The explorer's words for this kernel's notebook."""
    return CHINESE if in_chinese_notebook() else ENGLISH


def call_summary(call: RecordedCall, said: dict[str, str] = ENGLISH) -> str:
    """The facts of one call as text, in the words `said`: what the explorer shows beside its chart."""
    gate = f"{call.p_remember:.2f}" if call.p_remember is not None else said["not asked"]
    return said["summary"].format(
        customer=call.customer, subject=call.subject, memories=call.memories_said(said),
        choice=call.choice, p_choice=f"{call.probabilities[call.choice]:.2f}", expected=call.expected,
        p_expected=f"{call.probabilities[call.expected]:.2f}", gate=gate, tokens=call.input_tokens)


def summary_pattern(said: dict[str, str]) -> re.Pattern[str]:
    """A regular expression that reads a summary written in the words `said` back into its fields."""
    parts = re.split(r"\{(\w+)\}", said["summary"])
    return re.compile("".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>.+?)"
                              for index, part in enumerate(parts)) + r"\Z", re.S)


def in_chinese(text: str) -> str:
    """A text the explorer wrote in English (its fallback text, a summary, the facts' HTML), as it writes it in a
    Chinese notebook."""
    def summary(found: re.Match[str]) -> str:
        fields = found.groupdict()
        fields["memories"] = CHINESE["none"] if fields["memories"] == ENGLISH["none"] else fields["memories"]
        fields["gate"] = CHINESE["not asked"] if fields["gate"] == ENGLISH["not asked"] else fields["gate"]
        return CHINESE["summary"].format(**fields)

    for part in ("text", "link"):
        text = text.replace(ENGLISH[part], CHINESE[part])
    body = re.search(r"(?<=<pre>).*?(?=</pre>)", text, re.S)  # the facts' HTML holds the summary, escaped
    if body:
        unescaped = html.unescape(body.group())
        found = summary_pattern(ENGLISH).match(unescaped)
        return text[:body.start()] + html.escape(summary(found) if found else unescaped) + text[body.end():]
    start = text.index(CHINESE["text"]) + len(CHINESE["text"]) if CHINESE["text"] in text else 0
    found = summary_pattern(ENGLISH).match(text, start)
    return text[:start] + summary(found) if found else text


CHART_INCHES, CHART_DPI = (6.5, 3), 200  # drawn at twice the pixels it is shown at (CHART_WIDTH): sharp text
CHART_WIDTH = f"{CHART_INCHES[0] * 100:.0f}px"  # as wide as a notebook's own charts (100 pixels an inch)
# widgets.HTML does not style links as JupyterLab's Markdown does: in its colour, underlined
LINK_STYLE = "color: var(--jp-content-link-color, #1976d2); text-decoration: underline"


def chart_png(call: RecordedCall) -> bytes:
    fig, ax = plt.subplots(figsize=CHART_INCHES)
    bar_chart(ax, call)
    ax.set_title(f"{call.customer} · {call.subject} · {', '.join(call.memories) or '–'}", fontsize=10)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=CHART_DPI)
    plt.close(fig)
    return png.getvalue()


EXPLORERS_MADE = itertools.count(1)  # in this kernel: each explorer's model id must be its own
NOTHING_RECORDED = "No recorded routing call of a later message in the cache yet."


def memory_explorer(calls: list[RecordedCall]) -> Any:
    """Three dropdowns over the recorded routing calls (customer, later message, memory set) and what Jev answered."""
    import ipywidgets as widgets  # only the explorer needs it

    from ipywidgets.widgets.widget_description import DescriptionStyle
    from ipywidgets.widgets.widget_string import HTMLStyle

    class MemoryExplorer(widgets.VBox):
        def __init__(self, calls: list[RecordedCall]) -> None:
            # Model ids of our own, not random ones, for the explorer and every model it is made of: the notebook's
            # saved output names the explorer's, and its saved widget state (which JupyterLab shows before the
            # kernel runs) names them all, so Restart Kernel and Run All leaves both as committed.
            name = f"memory-explorer-{next(EXPLORERS_MADE)}"

            def ids(part: str, style: Any = None, **layout: object) -> dict[str, Any]:
                made = {"model_id": f"{name}-{part}", "layout": widgets.Layout(model_id=f"{name}-{part}-layout",
                                                                               **layout)}
                return made | ({"style": style(model_id=f"{name}-{part}-style")} if style else {})

            self.calls, self.words = calls, words()
            self.customer = widgets.Dropdown(description=self.words["customer"], options=[
                (f"{customer} · {company}", customer)
                for customer, company in dict.fromkeys((call.customer, call.company) for call in calls)],
                **ids("customer", DescriptionStyle))
            self.subject = widgets.Dropdown(description=self.words["message"], **ids("subject", DescriptionStyle))
            self.memories = widgets.Dropdown(description=self.words["memories"], **ids("memories", DescriptionStyle))
            self.chart = widgets.Image(format="png", **ids("chart", width=CHART_WIDTH))
            self.facts = widgets.HTML(**ids("facts", HTMLStyle))
            choices = widgets.HBox([self.customer, self.subject, self.memories], **ids("choices"))
            super().__init__([choices, self.chart, self.facts], model_id=name,
                             layout=widgets.Layout(model_id=f"{name}-layout"))
            self.updating = False
            for dropdown in (self.customer, self.subject, self.memories):
                dropdown.observe(self.chosen, "value")
            if calls:
                self.chosen()
            else:
                self.facts.value = f"<pre>{html.escape(NOTHING_RECORDED)}</pre>"

        def chosen(self, _change: object = None) -> None:
            """Offer only what was recorded for the customer (and message) chosen, then show the call chosen."""
            if self.updating:  # the dropdowns below are being set here
                return
            self.updating = True
            try:
                self.subject.options = list(dict.fromkeys(
                    call.subject for call in self.calls if call.customer == self.customer.value))
                self.subject.value = self.subject.value or self.subject.options[0]
                self.memories.options = [(call.memories_said(self.words), call.memories) for call in self.calls
                                         if (call.customer, call.subject) == (self.customer.value, self.subject.value)]
                if self.memories.value is None:
                    self.memories.value = self.memories.options[0][1]
            finally:
                self.updating = False
            self.show()

        @property
        def shown(self) -> RecordedCall:
            """The recorded call the dropdowns point at."""
            return next(call for call in self.calls if (call.customer, call.subject, call.memories)
                        == (self.customer.value, self.subject.value, self.memories.value))

        def show(self) -> None:
            call = self.shown
            self.chart.value = chart_png(call)
            self.facts.value = (f"<pre>{html.escape(call_summary(call, self.words))}</pre>"
                                f'<a href="{html.escape(call.link)}" target="_blank" style="{LINK_STYLE}">'
                                f'{self.words["link"]}</a>')

        def _repr_mimebundle_(self, **kwargs: object) -> dict[str, Any]:
            bundle = super()._repr_mimebundle_(**kwargs)
            shown = call_summary(self.shown, self.words) if self.calls else NOTHING_RECORDED
            bundle["text/plain"] = self.words["text"] + shown
            return bundle

    return MemoryExplorer(calls)
