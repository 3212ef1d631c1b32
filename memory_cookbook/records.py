"""A memory as a desk sees it: `MemoryRecord`, one row a store gives for the memory card and an export (the memory
exactly as saved, and what is known about it: the answer's probabilities, P(remember) and the threshold in force, the
model, when it was saved, its expiry and invalidation), and its status at a moment. Every store gives its rows so
(memory_cookbook.contract's `memory_records`), and takes them back (`restore`). Hand-written, tested in
tests/test_desk_records.py."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TypedDict, get_args

from typesafe_sdk import Choice, ChoiceAnswer, Noul, Score, SystemOneResponse

from memory_cookbook.contract import LedgerEntry, MemoryItem
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.memory_checks import (checked_answer_probabilities, checked_customer_of, checked_entry,
                                           checked_memory, checked_probability, non_empty_text, utc)

__all__ = ["MemoryRecord", "Provenance", "STATUSES", "Status", "answer_probabilities", "checked_restore", "iso_utc"]

Status = Literal["in force", "invalidated", "expired"]
STATUSES: tuple[Status, ...] = get_args(Status)


class Provenance(TypedDict):
    """Where a memory came from and what became of it, as JSON (times ISO 8601 UTC), with its status at a moment:
    what the card and an export show of every memory."""

    ticket: str | None
    p_remember: float
    remember_at: float | None
    model: str
    saved_at: str
    expires_at: str | None
    status: Status
    invalidated_at: str | None
    invalidated_by: str | None
    invalidation_reason: str | None


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with a Z, as exports and the card's data write a time: '2026-09-28T09:14:03Z'."""
    return utc(moment).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class MemoryRecord:
    """One memory of a customer as its store keeps it, with its provenance. Times are UTC datetimes; `remember_at` is
    the threshold the gate judged it by (None if the store did not keep it); `answer_probabilities` maps a question's
    instructions (a key of memory["jev_answered"]) to the probability Jev gave the answer saved, for each Choice (a
    Noul's or a Score's answer is its own number). Invalidated means a desk marked it no longer true: when, who and why
    are all set, or none. A wrong value is a ValueError naming the field."""

    customer: str
    ticket: str | None
    memory: MemoryItem
    answer_probabilities: dict[str, float]
    p_remember: float
    remember_at: float | None
    model: str
    saved_at: datetime
    expires_at: datetime | None = None
    invalidated_at: datetime | None = None
    invalidated_by: str | None = None
    invalidation_reason: str | None = None

    def __post_init__(self) -> None:
        non_empty_text("customer", self.customer)
        checked_memory(self.memory)
        checked_customer_of(self.customer, self.memory)
        if self.ticket != ticket_id(self.memory):
            raise ValueError(f"ticket is {self.ticket!r}, but the memory is of ticket {ticket_id(self.memory)!r}")
        if not isinstance(self.answer_probabilities, dict):
            raise ValueError(f"answer_probabilities must be a dict {{question instructions: probability}}; got"
                             f" {self.answer_probabilities!r:.80}")
        checked_answer_probabilities(self.memory, self.answer_probabilities)
        checked_probability("p_remember", self.p_remember)
        if self.remember_at is not None:
            checked_probability("remember_at", self.remember_at)
        non_empty_text("model", self.model)
        object.__setattr__(self, "saved_at", utc(self.saved_at, "saved_at"))
        if self.expires_at is not None:
            object.__setattr__(self, "expires_at", utc(self.expires_at, "expires_at"))
            if self.expires_at <= self.saved_at:
                raise ValueError(f"expires_at ({iso_utc(self.expires_at)}) must be after saved_at"
                                 f" ({iso_utc(self.saved_at)})")
        self._check_invalidation()

    def _check_invalidation(self) -> None:
        given = {"invalidated_at": self.invalidated_at, "invalidated_by": self.invalidated_by,
                 "invalidation_reason": self.invalidation_reason}
        missing = [field for field, value in given.items() if value is None]
        if missing and len(missing) < len(given):
            raise ValueError(f"an invalidation says when, who and why: {', '.join(missing)} missing")
        if self.invalidated_at is not None:
            object.__setattr__(self, "invalidated_at", utc(self.invalidated_at, "invalidated_at"))
            non_empty_text("invalidated_by", self.invalidated_by)
            non_empty_text("invalidation_reason", self.invalidation_reason)
            if self.invalidated_at < self.saved_at:
                raise ValueError(f"invalidated_at ({iso_utc(self.invalidated_at)}) is before saved_at"
                                 f" ({iso_utc(self.saved_at)})")

    def status_at(self, moment: datetime) -> Status:
        """Its status at `moment`: "invalidated" from its invalidation on, else "expired" from its expiry on, else
        "in force". Recall sends only a memory in force."""
        moment = utc(moment, "the moment")
        if self.invalidated_at is not None and self.invalidated_at <= moment:
            return "invalidated"
        if self.expires_at is not None and self.expires_at <= moment:
            return "expired"
        return "in force"

    def provenance_at(self, moment: datetime) -> Provenance:
        """Its provenance as JSON, with its status at `moment`."""
        return {"ticket": self.ticket, "p_remember": self.p_remember, "remember_at": self.remember_at,
                "model": self.model, "saved_at": iso_utc(self.saved_at),
                "expires_at": iso_utc(self.expires_at) if self.expires_at else None,
                "status": self.status_at(moment),
                "invalidated_at": iso_utc(self.invalidated_at) if self.invalidated_at else None,
                "invalidated_by": self.invalidated_by, "invalidation_reason": self.invalidation_reason}


def answer_probabilities(questions: Mapping[str, Choice | Noul | Score],
                         response: SystemOneResponse) -> dict[str, float]:
    """{question instructions: the probability of the chosen option} for each Choice the response answered: what a
    store keeps beside a memory, whose text keeps only the chosen description (T-105's "Enterprise desk" was chosen
    at 0.35)."""
    chosen_at = {}
    for question_id, question in questions.items():
        answer = response.answers.get(question_id)
        if isinstance(question, Choice) and isinstance(answer, ChoiceAnswer) and isinstance(question.instructions, str):
            chosen_at[question.instructions] = answer.probabilities[answer.choice]
    return chosen_at


def checked_restore(customer: str, records: Sequence[MemoryRecord], entries: Sequence[LedgerEntry]) -> list[str]:
    """The ledger entries' JSON texts, if every record is a MemoryRecord of `customer` and every entry a ledger entry
    of theirs (checked_entry); else a ValueError naming the first that is not: what every store's restore checks
    before it writes anything."""
    for index, record in enumerate(records):
        if not isinstance(record, MemoryRecord) or record.customer != customer:
            raise ValueError(f"records[{index}] is not a MemoryRecord of {customer}: {record!r:.80}")
    texts = [checked_entry(entry) for entry in entries]
    strangers = [index for index, entry in enumerate(entries) if entry["customer"] != customer]
    if strangers:
        raise ValueError(f"entries[{strangers[0]}] is a ledger entry of {entries[strangers[0]]['customer']!r}, not"
                         f" of {customer}")
    return texts
