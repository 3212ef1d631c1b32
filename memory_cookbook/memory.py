"""The wrapper's state in one object: the store that keeps memories and the ledger, and the gate's threshold. The
lesson binds one, MEMORY (notebook 04), and its wrapper reads both settings from it at every call, so a reader
changes a setting one way, by assigning it (`MEMORY.remember_at = 0.8`, `MEMORY.store = SqliteStore(path)`), and a
value that cannot be one is refused there and then. `memories` reads the store as it is now: no name a reader
imported goes stale when the store is replaced. Hand-written, tested in tests/test_settings.py."""

import weakref
from collections.abc import Iterator, Mapping

from memory_cookbook.contract import LedgerEntry, MemoryItem, MemoryStore
from memory_cookbook.wrapper_checks import checked_threshold

__all__ = ["ALIVE", "Memories", "Memory", "handed_entries"]

ALIVE: "weakref.WeakSet[Memory]" = weakref.WeakSet()  # every Memory of this process, while it lives


def handed_entries(customer: str | None) -> list[LedgerEntry]:
    """The ledger entries for `customer` of every live Memory, which a CacheMiss is handed to lay a miss to the
    threshold a call was judged by; none from a store that cannot answer now (the miss stays the error)."""
    entries: list[LedgerEntry] = []
    for memory in list(ALIVE):
        try:
            entries += memory.ledger(customer)
        except Exception:  # noqa: BLE001 - a store that cannot answer now: the explanation goes without it
            continue
    return entries


class Memory:
    """The store and the gate's threshold the wrapper uses, checked as they are set; the ledger is the store's."""

    def __init__(self, store: MemoryStore, remember_at: float = 0.5) -> None:
        self.store = store
        self.remember_at = remember_at
        self.memories = Memories(self)
        self.last_entry: LedgerEntry | None = None  # the entry this process logged last (09's app servers send it)
        ALIVE.add(self)  # a CacheMiss is handed its ledger: it names the threshold a call was judged by

    @property
    def store(self) -> MemoryStore:
        """Where memories and the ledger are kept: any store that keeps the contract (memory_cookbook.contract)."""
        return self._store

    @store.setter
    def store(self, store: MemoryStore) -> None:
        if isinstance(store, type) or not isinstance(store, MemoryStore):
            raise TypeError(f"a memory store is an object with the methods of memory_cookbook.contract.MemoryStore"
                            f" (such as DictStore() or SqliteStore(path)); got {store!r:.80}")
        self._store = store

    @property
    def remember_at(self) -> float:
        """The gate's threshold: a ticket is saved at P(remember) >= remember_at."""
        return self._remember_at

    @remember_at.setter
    def remember_at(self, remember_at: float) -> None:
        self._remember_at = checked_threshold(remember_at)

    def log(self, entry: LedgerEntry) -> None:
        """Log one wrapper call's entry in the store's ledger, and keep it as last_entry."""
        self.store.log(entry)
        self.last_entry = entry

    def ledger(self, customer: str | None = None) -> list[LedgerEntry]:
        """The store's ledger: one entry per wrapper call, the customer's or every customer's, in order."""
        return self.store.ledger(customer)

    def forget_customer(self, customer: str) -> int:
        """Forget the customer's memories and ledger entries: how many memories were forgotten."""
        return self.store.forget_customer(customer)


class Memories(Mapping[str, list[MemoryItem]]):
    """customer id → that customer's memories, read from the memory's store as it is at each read."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def __getitem__(self, customer: str) -> list[MemoryItem]:
        return self.memory.store.recall(customer)  # [] for a customer with none, as the page's defaultdict gives

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(row.customer for row in self.memory.store.saved()))

    def __len__(self) -> int:
        return len(list(iter(self)))  # not list(self): list() asks len() for a size hint, which would recurse

    def __contains__(self, customer: object) -> bool:
        return any(name == customer for name in self)

    def __repr__(self) -> str:
        return repr(dict(self.items()))
