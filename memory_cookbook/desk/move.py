"""Moving a whole store into another, as a desk outgrowing one machine moves notebook 07's SQLite file into notebook
09's PostgreSQL: customer by customer, each customer's records (in force, invalidated and expired, with their times)
and ledger entries in one `restore`, so that a move stopped midway leaves each customer wholly moved or not at all, and
a move run again writes nothing twice. Every memory and entry is compared, by a digest, on both sides. The source is
only read. Any two stores that keep the contract (memory_cookbook.contract) will do. Hand-written, tested in
tests/test_move_store.py; `scripts/move_store.py` runs it from SQLite to PostgreSQL."""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from memory_cookbook.contract import CustomerAlreadyKept, LedgerEntry, MemoryStore
from memory_cookbook.records import MemoryRecord, iso_utc
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["MoveReport", "StoresDiffer", "customers_of", "digest", "memory_digest", "move_store"]


class StoresDiffer(ShownAsMessage, RuntimeError):
    """The target keeps a customer otherwise than the source does: nothing of that customer was written."""


def memory_digest(record: MemoryRecord) -> str:
    """SHA-256 of everything a store keeps of one memory: whose, the memory's exact text, and what is kept beside it
    (times to the microsecond). Equal digests, equal memories, whichever store keeps them."""
    times = [None if moment is None else iso_utc(moment)
             for moment in (record.saved_at, record.expires_at, record.invalidated_at)]
    kept = [record.customer, record.ticket, json.dumps(record.memory), record.answer_probabilities, record.p_remember,
            record.remember_at, record.model, *times, record.invalidated_by, record.invalidation_reason]
    return hashlib.sha256(json.dumps(kept).encode()).hexdigest()


def digest(records: Sequence[MemoryRecord], entries: Sequence[LedgerEntry]) -> str:
    """One SHA-256 of records and ledger entries, in their order."""
    parts = [memory_digest(record) for record in records] + [json.dumps(entry) for entry in entries]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def customers_of(store: MemoryStore) -> list[str]:
    """Every customer the store keeps a memory or a ledger entry of, in the order first saved or logged."""
    saved, logged = [row.customer for row in store.saved()], [entry["customer"] for entry in store.ledger()]
    return list(dict.fromkeys(saved + logged))


@dataclass(frozen=True)
class MoveReport:
    """What a move did, and what it found on both sides afterwards."""

    moved: list[str]  # customers written by this run
    already_there: list[str]  # customers an earlier run had moved: the same on both sides, so not written again
    memories: tuple[int, int]  # (in the source, in the target), over the source's customers
    ledger_entries: tuple[int, int]
    digests: tuple[str, str]  # of every memory and entry of those customers, in order, on each side

    def __str__(self) -> str:
        same = "the same" if self.digests[0] == self.digests[1] else "NOT the same"
        return (f"{len(self.moved)} customers moved, {len(self.already_there)} already there;"
                f" memories {self.memories[0]} → {self.memories[1]}, ledger entries {self.ledger_entries[0]} →"
                f" {self.ledger_entries[1]}; the digest of every memory and entry on both sides: {same}")


def move_store(source: MemoryStore, target: MemoryStore) -> MoveReport:
    """Copy every customer of `source` into `target`, one `restore` each. A customer the target keeps already is left
    as it is: counted as moved before if it is the same, down to the digest, else StoresDiffer (after the customers
    before it). Then both sides are read again and compared."""
    moved, already_there = [], []
    customers = customers_of(source)
    for customer in customers:
        records, entries = source.memory_records(customer), source.ledger(customer)
        try:
            target.restore(customer, records, entries)
            moved.append(customer)
        except CustomerAlreadyKept as kept:
            if digest(target.memory_records(customer), target.ledger(customer)) != digest(records, entries):
                raise StoresDiffer(
                    f"The target already keeps {kept.memories} memories and {kept.entries} ledger entries of"
                    f" {customer}, which differ from the source's {len(records)} and {len(entries)}: nothing of"
                    f" {customer} was written, and the move stopped there ({len(moved)} customers moved before it)."
                    " Forget the customer in the target (forget_customer) to move them again.") from None
            already_there.append(customer)
    sides = [[(store.memory_records(customer), store.ledger(customer)) for customer in customers]
             for store in (source, target)]
    counts = [(sum(len(records) for records, _ in side), sum(len(entries) for _, entries in side)) for side in sides]
    digests = [digest([record for records, _ in side for record in records],
                      [entry for _, entries in side for entry in entries]) for side in sides]
    report = MoveReport(moved, already_there, (counts[0][0], counts[1][0]), (counts[0][1], counts[1][1]),
                        (digests[0], digests[1]))
    if digests[0] != digests[1]:
        raise StoresDiffer(f"After the move the two stores differ: {report}")
    return report
