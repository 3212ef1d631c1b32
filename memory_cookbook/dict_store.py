"""The published store, as notebook 04 installs it: memories and the ledger in dicts of lists by customer id, gone when
the kernel stops. It keeps the store contract (memory_cookbook.contract) like every other store. Hand-written, tested
by the contract suite (tests/test_store_contract.py)."""

import copy
import dataclasses
import itertools
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from memory_cookbook.contract import CustomerAlreadyKept, LedgerEntry, MemoryItem, SavedMemory
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.memory_checks import checked_entry, checked_save, non_empty_text
from memory_cookbook.records import MemoryRecord, checked_restore

__all__ = ["DictStore"]


class DictStore:
    """Memories and the ledger in this process's memory, by customer id, gone when the kernel stops: for one kernel,
    as published. What it hands out are copies, as a database's rows would be."""

    def __init__(self) -> None:
        self.order = itertools.count()  # one sequence for memories and entries: every customer's, in order
        self.memories: defaultdict[str, list[tuple[int, MemoryRecord]]] = defaultdict(list)
        self.entries: defaultdict[str, list[tuple[int, LedgerEntry]]] = defaultdict(list)

    def recall(self, customer: str) -> list[MemoryItem]:
        now = datetime.now(UTC)
        return [copy.deepcopy(record.memory) for _, record in self.memories.get(customer, [])
                if record.status_at(now) == "in force"]

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str, remember_at: float | None = None,
             answer_probabilities: Mapping[str, float] | None = None, expires_at: datetime | None = None) -> None:
        now = datetime.now(UTC)
        saving = checked_save(customer, memory, p_remember, model, remember_at, answer_probabilities, expires_at,
                              now)
        record = MemoryRecord(customer, ticket_id(memory), copy.deepcopy(memory),
                              json.loads(saving.answer_probabilities), saving.p_remember, saving.remember_at,
                              saving.model, now, saving.expires_at)
        self.memories[customer].append((next(self.order), record))

    def log(self, entry: LedgerEntry) -> None:
        checked_entry(entry)  # refused as every store refuses it
        self.entries[entry["customer"]].append((next(self.order), copy.deepcopy(entry)))

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        kept = self.entries.values() if customer is None else [self.entries.get(customer, [])]
        return [copy.deepcopy(entry) for _, entry in sorted(itertools.chain(*kept), key=lambda kept: kept[0])]

    def saved(self) -> list[SavedMemory]:
        return [SavedMemory(record.customer, record.ticket, record.p_remember, record.model)
                for _, record in sorted(itertools.chain(*self.memories.values()), key=lambda kept: kept[0])]

    def memory_records(self, customer: str) -> list[MemoryRecord]:
        return [copy.deepcopy(record) for _, record in self.memories.get(customer, [])]

    def invalidate(self, customer: str, ticket: str, reason: str, by: str) -> int:
        reason, by = non_empty_text("reason", reason), non_empty_text("by", by)
        kept, now, marked = self.memories.get(customer, []), datetime.now(UTC), 0
        for position, (order, record) in enumerate(kept):
            if record.ticket == ticket and record.invalidated_at is None:
                kept[position] = order, dataclasses.replace(record, invalidated_at=now, invalidated_by=by,
                                                            invalidation_reason=reason)
                marked += 1
        return marked

    def restore(self, customer: str, records: Sequence[MemoryRecord], entries: Sequence[LedgerEntry]) -> None:
        checked_restore(customer, records, entries)
        if self.memories.get(customer) or self.entries.get(customer):
            raise CustomerAlreadyKept(customer, len(self.memories.get(customer, [])),
                                      len(self.entries.get(customer, [])))
        self.memories[customer] = [(next(self.order), copy.deepcopy(record)) for record in records]
        self.entries[customer] = [(next(self.order), copy.deepcopy(entry)) for entry in entries]

    def forget_ticket(self, customer: str, ticket: str) -> int:
        kept = self.memories.get(customer, [])
        self.memories[customer] = [(order, record) for order, record in kept if record.ticket != ticket]
        return len(kept) - len(self.memories[customer])

    def forget_customer(self, customer: str) -> int:
        self.entries.pop(customer, None)
        return len(self.memories.pop(customer, []))
