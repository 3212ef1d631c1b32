"""The store contract: what the wrapper and a desk ask of a memory store, as a typing.Protocol. Every store implements
it exactly (the dict store here, SQLite's and the budgeted one of notebooks 07 and 08, PostgreSQL's of 09), with the
same arguments and return values; mypy checks each against it (tests/test_store_contract.py's factories), and one
contract suite runs every behaviour on every store (the same file). Every method names the customer first: a store may
keep customers apart by it (PostgreSQL's row-level security does).

A memory is the published shape, {"request": state, "jev_answered": {...}}, exactly as saved: its text, key order
included, is part of every later request that carries it, and so of its cache key. What a store keeps beside it (the
answer's probabilities, P(remember) and the threshold, the model, the times, an expiry, an invalidation) is never part
of that text: a desk reads it as a MemoryRecord (memory_cookbook.records)."""

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple, NotRequired, Protocol, Required, TypedDict, runtime_checkable

from memory_cookbook.shown_as_message import ShownAsMessage

if TYPE_CHECKING:  # records.py takes MemoryItem from here: imported for the annotations only
    from memory_cookbook.records import MemoryRecord

__all__ = ["CustomerAlreadyKept", "JSONObject", "LedgerEntry", "MemoryItem", "MemoryStore", "SavedMemory"]

JSONObject = dict[str, Any]  # a JSON object, as json.loads gives it


class MemoryItem(TypedDict):
    """One memory: the ticket's state as it came (without memories), and what Jev answered about it."""

    request: JSONObject
    jev_answered: JSONObject


class LedgerEntry(TypedDict, total=False):
    """One wrapper call, as the ledger keeps it (notebook 07's log_call makes it): whose ticket, what was sent, what
    Jev answered, P(remember) and the threshold it was judged by, whether it was saved, and whether it was live. Only
    the customer is required: a store files every entry under it."""

    customer: Required[str]
    ticket: NotRequired[str | None]
    questions: list[str]
    memories_sent: list[str | None]
    answer: JSONObject
    p_remember: float
    remember_at: float
    saved: bool
    input_tokens: int | None
    source: str


class SavedMemory(NamedTuple):
    """What a store keeps beside a memory: whose, from which ticket, P(remember) and the model that answered."""

    customer: str
    ticket: str | None
    p_remember: float
    model: str


class CustomerAlreadyKept(ShownAsMessage, ValueError):
    """A restore refused: the store keeps memories or ledger entries of the customer already; nothing was written."""

    def __init__(self, customer: str, memories: int, entries: int, source: str = "") -> None:
        self.customer, self.memories, self.entries = customer, memories, entries
        super().__init__(
            f"{source}{': ' if source else ''}the store already keeps {memories} memor{'y' if memories == 1 else 'ies'}"
            f" and {entries} ledger entr{'y' if entries == 1 else 'ies'} of {customer}, so nothing was written (a"
            " restore or an import never overwrites). Import into another store, or forget the customer in this one"
            f" first (forget_customer({customer!r}) erases what it keeps of them).")


@runtime_checkable
class MemoryStore(Protocol):
    """Where the wrapper keeps memories and the ledger. A desk's own store passes the contract suite or is not one."""

    def recall(self, customer: str) -> list[MemoryItem]:
        """The customer's memories in force (neither invalidated nor expired), in the order saved: copies, which the
        caller may change. The wrapper sends these."""
        ...

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str, remember_at: float | None = None,
             answer_probabilities: Mapping[str, float] | None = None, expires_at: datetime | None = None) -> None:
        """Keep `memory` for the customer, and beside it (never in it): the gate's P(remember), the model that
        answered, the threshold in force (None: not known), the probability of each answer saved ({question
        instructions: probability}, memory_cookbook.records.answer_probabilities; the wrapper passes both), and when it
        stops being sent (None: never). A value that is not one is a ValueError naming it, and nothing is saved."""
        ...

    def log(self, entry: LedgerEntry) -> None:
        """Add one wrapper call's entry to the ledger, under entry["customer"]."""
        ...

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        """The ledger's entries in the order logged: the customer's, or (None) every customer's, as far as this store
        lets its user see them."""
        ...

    def saved(self) -> list[SavedMemory]:
        """What is kept beside each memory, every customer's, in the order saved (as far as this store lets its user
        see them)."""
        ...

    def memory_records(self, customer: str) -> list["MemoryRecord"]:
        """Every memory of the customer with its provenance, in the order saved: in force, invalidated and expired
        alike (the card and an export show them all; a record's status_at says which)."""
        ...

    def invalidate(self, customer: str, ticket: str, reason: str, by: str) -> int:
        """Mark the customer's memory saved from `ticket` no longer true, now, by whom and why, instead of deleting it:
        recall no longer sends it, memory_records keeps it as history. How many were marked (0 or 1: one marked
        already keeps its first invalidation)."""
        ...

    def restore(self, customer: str, records: Sequence["MemoryRecord"], entries: Sequence[LedgerEntry]) -> None:
        """Keep these records of the customer (their times, expiry and invalidation as they are) and ledger entries,
        in this order, all in one transaction or none. If the store keeps any memory or ledger entry of the customer
        already, raise CustomerAlreadyKept and write nothing. Another customer's record or entry is a ValueError."""
        ...

    def forget_ticket(self, customer: str, ticket: str) -> int:
        """Delete the customer's memory saved from `ticket`, its history with it: how many memories were deleted (0 or
        1)."""
        ...

    def forget_customer(self, customer: str) -> int:
        """Delete the customer's memories, in force or not, and ledger entries together: how many memories were
        deleted."""
        ...
