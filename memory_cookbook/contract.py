"""The store contract: what the wrapper and a desk ask of a memory store, as a typing.Protocol. Every store implements
it exactly (the dict store here, SQLite's and the budgeted one of notebooks 07 and 08, PostgreSQL's of 09), with the
same arguments and return values; mypy checks each against it (tests/test_store_contract.py's factories), and one
contract suite runs every behaviour on every store (the same file). Every method names the customer first: a store may
keep customers apart by it (PostgreSQL's row-level security does).

A memory is the published shape, {"request": state, "jev_answered": {...}}, exactly as saved: its text, key order
included, is part of every later request that carries it, and so of its cache key."""

from typing import Any, NamedTuple, NotRequired, Protocol, Required, TypedDict, runtime_checkable

__all__ = ["JSONObject", "LedgerEntry", "MemoryItem", "MemoryStore", "SavedMemory"]

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


@runtime_checkable
class MemoryStore(Protocol):
    """Where the wrapper keeps memories and the ledger. A desk's own store passes the contract suite or is not one."""

    def recall(self, customer: str) -> list[MemoryItem]:
        """The customer's memories, in the order saved: copies, which the caller may change."""
        ...

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str) -> None:
        """Keep `memory` for the customer, with the gate's P(remember) and the model that answered."""
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

    def forget_ticket(self, customer: str, ticket: str) -> int:
        """Delete the customer's memory saved from `ticket`: how many memories were deleted (0 or 1)."""
        ...

    def forget_customer(self, customer: str) -> int:
        """Delete the customer's memories and ledger entries together: how many memories were deleted."""
        ...
