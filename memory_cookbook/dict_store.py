"""The published store, as notebook 04 installs it: memories and the ledger in dicts of lists by customer id, gone when
the kernel stops. It keeps the store contract (memory_cookbook.contract) like every other store. Hand-written, tested
by the contract suite (tests/test_store_contract.py)."""

import copy
import itertools
from collections import defaultdict

from memory_cookbook.contract import LedgerEntry, MemoryItem, SavedMemory
from memory_cookbook.jev_request import ticket_id
from memory_cookbook.memory_checks import checked_entry, checked_memory

__all__ = ["DictStore"]


class DictStore:
    """Memories and the ledger in this process's memory, by customer id, gone when the kernel stops: for one kernel,
    as published. What it hands out are copies, as a database's rows would be."""

    def __init__(self) -> None:
        self.order = itertools.count()  # one sequence for memories and entries: every customer's, in order
        self.memories: defaultdict[str, list[tuple[int, SavedMemory, MemoryItem]]] = defaultdict(list)
        self.entries: defaultdict[str, list[tuple[int, LedgerEntry]]] = defaultdict(list)

    def recall(self, customer: str) -> list[MemoryItem]:
        return [copy.deepcopy(memory) for _, _, memory in self.memories.get(customer, [])]

    def save(self, customer: str, memory: MemoryItem, p_remember: float, model: str) -> None:
        checked_memory(memory)  # refused as every store refuses it
        row = SavedMemory(customer, ticket_id(memory), p_remember, model)
        self.memories[customer].append((next(self.order), row, copy.deepcopy(memory)))

    def log(self, entry: LedgerEntry) -> None:
        checked_entry(entry)  # refused as every store refuses it
        self.entries[entry["customer"]].append((next(self.order), copy.deepcopy(entry)))

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        kept = self.entries.values() if customer is None else [self.entries.get(customer, [])]
        return [copy.deepcopy(entry) for _, entry in sorted(itertools.chain(*kept), key=lambda kept: kept[0])]

    def saved(self) -> list[SavedMemory]:
        return [row for _, row, _ in sorted(itertools.chain(*self.memories.values()), key=lambda kept: kept[0])]

    def forget_ticket(self, customer: str, ticket: str) -> int:
        kept = self.memories.get(customer, [])
        self.memories[customer] = [(order, row, memory) for order, row, memory in kept if row.ticket != ticket]
        return len(kept) - len(self.memories[customer])

    def forget_customer(self, customer: str) -> int:
        self.entries.pop(customer, None)
        return len(self.memories.pop(customer, []))
