"""A customer's memory card: every memory a store keeps of them, with the ticket it came from and what the customer
wrote there, the answer saved with it and that answer's probability, P(remember) and the threshold in force, the
model, when it was saved, its status (in force, invalidated with when, who and why, expired) and how many calls of the
ledger carried it. It is computed from the store's rows, never from what a call returned.

The card is data first (`CardData`, JSON, the same in every language); its text (nbval, terminals) and its HTML
(JupyterLab: inline styles only, no script, readable in the light and dark themes, and what survives JupyterLab's
sanitiser in a notebook it does not trust) are rendered from that data alone, in English or Chinese. A displayed card
carries the data under CARD_MIME, so that scripts/sync_chinese.py renders it again with Chinese labels in the Chinese
notebooks; a kernel of a Chinese notebook renders it in Chinese too. Hand-written, tested in tests/test_desk_card.py."""

import html
import json
import textwrap
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from memory_cookbook.classroom.folded import in_chinese_notebook
from memory_cookbook.contract import LedgerEntry, MemoryStore
from memory_cookbook.memory_checks import utc
from memory_cookbook.records import STATUSES, MemoryRecord, Provenance, Status, iso_utc

__all__ = ["BAR", "CARD_MIME", "CARD_STYLE", "CHINESE", "CardAnswer", "CardData", "CardMemory", "ENGLISH", "FAINT",
           "LABELS", "LABEL_STYLE", "Labels", "Language", "MemoryCard", "STATUS_COLOURS", "TEXT_WIDTH", "VALUE_STYLE",
           "card_data", "card_html", "card_memory", "card_text", "customer_text", "display_width", "fields", "heading",
           "memory_card", "memory_html", "probability_bar", "shown_answer", "shown_time", "status_badge",
           "summary_line", "times_carried", "title_line"]

CARD_MIME = "application/vnd.memory-card+json"
Language = Literal["en", "zh"]
TEXT_WIDTH = 100  # the plain text's lines, for terminals and diffs of outputs


class CardAnswer(TypedDict):
    """One answer saved with a memory: the question's instructions, the answer as the memory keeps it, and the
    probability Jev gave it (None for a Noul's or a Score's answer, which is its own number)."""

    question: str
    answer: Any
    probability: float | None


class CardMemory(Provenance):
    """One memory as the card shows it: its provenance, the ticket's subject and what the customer wrote there, the
    answers saved, and how many calls carried it (None for a memory without a ticket id)."""

    subject: str | None
    ticket_said: str
    answers: list[CardAnswer]
    carried_by: int | None


class CardData(TypedDict):
    """A customer's card as JSON: what CARD_MIME carries, and all that its text and HTML are rendered from."""

    customer: str
    company: str | None
    as_of: str
    memories: list[CardMemory]


def customer_text(request: Mapping[str, Any]) -> str:
    """What the customer wrote in the ticket of a memory's request: its customer messages, one per line."""
    ticket = request.get("ticket")
    messages = ticket.get("messages") if isinstance(ticket, dict) else None
    return "\n".join(message["text"] for message in messages or ()
                     if isinstance(message, dict) and message.get("from") == "customer"
                     and isinstance(message.get("text"), str))


def times_carried(ticket: str | None, entries: Sequence[LedgerEntry]) -> int | None:
    """How many of the ledger's calls carried the memory of `ticket` (None: a memory without a ticket id cannot be
    told apart in memories_sent)."""
    if ticket is None:
        return None
    return sum(ticket in entry.get("memories_sent", ()) for entry in entries)


def card_memory(record: MemoryRecord, entries: Sequence[LedgerEntry], now: datetime) -> CardMemory:
    """One memory as the card shows it at `now` (an invalidation after `now` is not shown: it had not happened)."""
    provenance = record.provenance_at(now)
    if provenance["status"] != "invalidated":
        provenance.update({"invalidated_at": None, "invalidated_by": None, "invalidation_reason": None})
    request = record.memory["request"]
    ticket = request.get("ticket")
    subject = ticket.get("subject") if isinstance(ticket, dict) else None
    return {**provenance,
            "subject": subject if isinstance(subject, str) else None,
            "ticket_said": customer_text(request),
            "answers": [{"question": question, "answer": answer,
                         "probability": record.answer_probabilities.get(question)}
                        for question, answer in record.memory["jev_answered"].items()],
            "carried_by": times_carried(record.ticket, entries)}


def card_data(customer: str, records: Sequence[MemoryRecord], ledger: Sequence[LedgerEntry],
              now: datetime) -> CardData:
    """The card of `customer` at `now`, from the store's records of them and its ledger (other customers' entries
    are left out; another customer's record is a ValueError: a card shows one customer)."""
    now = utc(now, "now")
    strangers = sorted({record.customer for record in records} - {customer})
    if strangers:
        raise ValueError(f"the card of {customer} was given records of {', '.join(strangers)}: a card shows one"
                         " customer's memories")
    entries = [entry for entry in ledger if entry.get("customer") == customer]
    named = [record.memory["request"].get("customer") for record in records]
    companies = [company.get("company") for company in named if isinstance(company, dict)]
    return {"customer": customer,
            "company": next((company for company in companies if isinstance(company, str)), None),
            "as_of": iso_utc(now),
            "memories": [card_memory(record, entries, now) for record in records]}


@dataclass(frozen=True)
class Labels:
    """What the card says around its data, in one language."""

    language: Language
    title: str
    memories: Callable[[int], str]
    summary: str  # {memories} {in force} {invalidated} {expired} {as_of}
    no_memories: str
    statuses: Mapping[Status, str]
    no_ticket: str
    ticket_said: str
    question: str
    answer: str
    chosen_at: str
    p_remember: str
    judged_by: str  # {p_remember} {threshold}
    no_threshold: str
    model: str
    saved: str
    expires: str
    never: str
    invalidated: str
    invalidation: str  # {at} {by} {reason}
    carried: str
    calls: Callable[[int], str]
    unknown: str


ENGLISH = Labels(
    language="en", title="Memory card", memories=lambda n: "1 memory" if n == 1 else f"{n} memories",
    summary="{memories} ({in force} in force, {invalidated} invalidated, {expired} expired), as of {as_of}",
    no_memories="Nothing is remembered of this customer.",
    statuses={"in force": "in force", "invalidated": "invalidated", "expired": "expired"},
    no_ticket="no ticket id", ticket_said="the ticket said", question="question", answer="answer saved",
    chosen_at="chosen at", p_remember="P(remember)", judged_by="{p_remember} (threshold {threshold})",
    no_threshold="not kept", model="model", saved="saved", expires="expires", never="never",
    invalidated="invalidated", invalidation="{at} by {by}: {reason}", carried="carried by",
    calls=lambda n: f"{n} call{'' if n == 1 else 's'} since it was saved", unknown="unknown (no ticket id)")

CHINESE = Labels(
    language="zh", title="记忆卡片", memories=lambda n: f"{n} 条记忆",
    summary="{memories}（有效 {in force} 条，已作废 {invalidated} 条，已过期 {expired} 条），截至 {as_of}",
    no_memories="没有记住这位客户的任何事。",
    statuses={"in force": "有效", "invalidated": "已作废", "expired": "已过期"},
    no_ticket="没有工单 ID", ticket_said="工单内容", question="问题", answer="保存的答案",
    chosen_at="答案的概率", p_remember="P(remember)", judged_by="{p_remember}（阈值 {threshold}）",
    no_threshold="未记录", model="模型", saved="保存于", expires="过期时间", never="不过期",
    invalidated="作废于", invalidation="{at}，操作人 {by}，原因：{reason}", carried="发送次数",
    calls=lambda n: f"保存以来 {n} 次", unknown="不明（没有工单 ID）")

LABELS: dict[Language, Labels] = {"en": ENGLISH, "zh": CHINESE}


def shown_time(iso: str) -> str:
    """'2026-09-28 09:14 UTC': a time of the card's data, to the minute."""
    return datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def shown_answer(answer: Any) -> str:
    """An answer as the memory keeps it: a Choice's description as it is, a Noul's or a Score's number to 2 places."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, float):
        return f"{answer:.2f}"
    return json.dumps(answer, ensure_ascii=False)


def summary_line(data: CardData, said: Labels) -> str:
    """How many memories, by status, and the card's moment."""
    counts: dict[str, object] = {status: sum(memory["status"] == status for memory in data["memories"])
                                 for status in STATUSES}
    return said.summary.format_map({"memories": said.memories(len(data["memories"])), **counts,
                                    "as_of": shown_time(data["as_of"])})


def title_line(data: CardData, said: Labels) -> str:
    """'Memory card · C-1042 · Harbor Logistics'."""
    return " · ".join(part for part in (said.title, data["customer"], data["company"]) if part)


def heading(memory: CardMemory, said: Labels) -> str:
    """A memory's heading: its ticket and the ticket's subject."""
    return " · ".join(part for part in (memory["ticket"] or said.no_ticket, memory["subject"]) if part)


def fields(memory: CardMemory, said: Labels) -> Iterator[tuple[str, str, float | None]]:
    """(label, value, a probability to draw beside it) for each line of a memory, in the card's order."""
    yield said.ticket_said, memory["ticket_said"], None
    for answer in memory["answers"]:
        yield said.question, answer["question"], None
        yield said.answer, shown_answer(answer["answer"]), None
        if answer["probability"] is not None:
            yield said.chosen_at, f"{answer['probability']:.2f}", answer["probability"]
    threshold = memory["remember_at"]
    yield said.p_remember, said.judged_by.format(
        p_remember=f"{memory['p_remember']:.2f}",
        threshold=said.no_threshold if threshold is None else f"{threshold:.2f}"), memory["p_remember"]
    yield said.model, memory["model"], None
    yield said.saved, shown_time(memory["saved_at"]), None
    yield said.expires, shown_time(memory["expires_at"]) if memory["expires_at"] else said.never, None
    if memory["invalidated_at"]:
        yield said.invalidated, said.invalidation.format(at=shown_time(memory["invalidated_at"]),
                                                         by=memory["invalidated_by"],
                                                         reason=memory["invalidation_reason"]), None
    carried = memory["carried_by"]
    yield said.carried, said.unknown if carried is None else said.calls(carried), None


def display_width(text: str) -> int:
    """Columns a text takes in a terminal: a wide (CJK) character takes two."""
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in text)


def card_text(data: CardData, language: Language = "en") -> str:
    """The card as plain text, every field of every memory on a line of its own (wrapped at TEXT_WIDTH)."""
    said = LABELS[language]
    lines = [title_line(data, said), summary_line(data, said)]
    if not data["memories"]:
        lines += ["", said.no_memories]
    for memory in data["memories"]:
        rows = list(fields(memory, said))
        column = max(display_width(label) for label, _, _ in rows) + 2
        lines += ["", f"{heading(memory, said)} [{said.statuses[memory['status']]}]"]
        for label, value, _ in rows:
            indent = " " * (2 + column)
            wrapped = [line for part in value.splitlines() or [""]
                       for line in textwrap.wrap(part, TEXT_WIDTH - len(indent)) or [""]]
            lines.append("  " + label + " " * (column - display_width(label)) + wrapped[0])
            lines += [indent + line for line in wrapped[1:]]
    return "\n".join(lines)


# The HTML's colours: each readable on JupyterLab's light and dark backgrounds, text colour inherited from the theme.
# Only hex and rgba(): JupyterLab's sanitiser drops var() and other values from a notebook it does not trust.
STATUS_COLOURS: dict[Status, tuple[str, str]] = {  # (the stripe and the badge's border, the badge's background)
    "in force": ("#2f9e44", "rgba(47,158,68,0.18)"),
    "invalidated": ("#e03131", "rgba(224,49,49,0.18)"),
    "expired": ("#868e96", "rgba(134,142,150,0.22)"),
}
FAINT = "rgba(128,128,128,0.45)"
BAR = "#4c8bf5"
CARD_STYLE = (f"border:1px solid {FAINT};border-radius:6px;padding:10px 14px;margin:4px 0;max-width:900px;"
              "line-height:1.45;text-align:left")
LABEL_STYLE = ("text-align:left;vertical-align:top;font-weight:600;padding:2px 14px 2px 0;white-space:nowrap;"
               "opacity:0.8;border:none")
VALUE_STYLE = "text-align:left;vertical-align:top;padding:2px 0;border:none"


def probability_bar(probability: float) -> str:
    """A short bar beside a probability, so that 0.35 and 0.92 differ at a glance (the number is printed too)."""
    return (f'<span style="display:inline-block;width:64px;height:6px;margin-left:8px;vertical-align:middle;'
            f'border-radius:3px;background-color:{FAINT}"><span style="display:block;height:6px;border-radius:3px;'
            f'width:{round(probability * 100)}%;background-color:{BAR}"></span></span>')


def status_badge(status: Status, said: Labels) -> str:
    """The status as a coloured HTML badge."""
    border, background = STATUS_COLOURS[status]
    return (f'<span style="display:inline-block;padding:0 8px;margin-left:8px;border-radius:10px;font-size:0.9em;'
            f'font-weight:600;border:1px solid {border};background-color:{background}">'
            f'{html.escape(said.statuses[status])}</span>')


def memory_html(memory: CardMemory, said: Labels) -> str:
    """One memory's block of the HTML card: heading, badge, and a row per label."""
    rows = "".join(
        f'<tr style="background-color:transparent"><th style="{LABEL_STYLE}">{html.escape(label)}</th>'
        f'<td style="{VALUE_STYLE}">{html.escape(value)}{probability_bar(bar) if bar is not None else ""}</td></tr>'
        for label, value, bar in fields(memory, said))
    stripe = STATUS_COLOURS[memory["status"]][0]
    return (f'<div style="border-left:4px solid {stripe};padding:4px 0 4px 10px;margin:10px 0 0 0">'
            f'<div><strong>{html.escape(heading(memory, said))}</strong>{status_badge(memory["status"], said)}</div>'
            f'<table style="border-collapse:collapse;margin:4px 0 0 0;table-layout:auto;width:auto">'
            f"<tbody>{rows}</tbody></table></div>")


def card_html(data: CardData, language: Language = "en") -> str:
    """The card as one block of HTML (well-formed, inline styles only, no script), from the same fields as the
    text."""
    said = LABELS[language]
    memories = "".join(memory_html(memory, said) for memory in data["memories"]) or \
        f'<div style="margin:8px 0 0 0">{html.escape(said.no_memories)}</div>'
    return (f'<div lang="{said.language}" style="{CARD_STYLE}">'
            f'<div style="font-weight:600;font-size:1.1em">{html.escape(title_line(data, said))}</div>'
            f'<div style="opacity:0.8">{html.escape(summary_line(data, said))}</div>{memories}</div>')


class MemoryCard:
    """A customer's memory card at a moment (`now`, by default the time it is made): shown as HTML in JupyterLab, as
    text in a terminal and in nbval's comparison, in Chinese in a Chinese notebook."""

    def __init__(self, customer: str, records: Sequence[MemoryRecord], ledger: Sequence[LedgerEntry],
                 now: datetime | None = None) -> None:
        self.data = card_data(customer, records, ledger, datetime.now(UTC) if now is None else now)

    @staticmethod
    def language() -> Language:
        return "zh" if in_chinese_notebook() else "en"

    def text(self, language: Language | None = None) -> str:
        return card_text(self.data, language or self.language())

    def html(self, language: Language | None = None) -> str:
        return card_html(self.data, language or self.language())

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, object]:
        return {CARD_MIME: self.data, "text/plain": self.text(), "text/html": self.html()}

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def __repr__(self) -> str:
        return self.text()


def memory_card(store: MemoryStore, customer: str, now: datetime | None = None) -> MemoryCard:
    """The customer's card from what the store keeps of them now: its records and its ledger."""
    return MemoryCard(customer, store.memory_records(customer), store.ledger(customer), now)
