"""A customer's data as one JSON document, out of a store and into another: every memory (in force, invalidated and
expired) with its provenance, and the customer's ledger entries. The format is documented, field by field, in
docs/customer_export.md; `read_customer_export` is its checked reader (an error names the field and what is wrong with
it, and a newer format version is refused), and `import_customer` puts a document into a store that keeps nothing of
the customer yet. Hand-written, tested in tests/test_desk_export.py."""

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, cast

from memory_cookbook.checked_files import read_json
from memory_cookbook.contract import CustomerAlreadyKept, LedgerEntry, MemoryItem, MemoryStore
from memory_cookbook.memory_checks import utc
from memory_cookbook.records import STATUSES, MemoryRecord, Provenance, Status, iso_utc
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["CustomerData", "CustomerExport", "ExportedMemory", "FORMAT", "FORMAT_VERSION",
           "ImportReport", "LEDGER_FIELDS", "NotACustomerExport", "Reader", "counted", "customer_export",
           "export_customer", "exported_memory", "import_customer", "load_customer_export", "read_customer_export",
           "shown"]

FORMAT = "memory-cookbook/customer-export"
FORMAT_VERSION = 1


class ExportedMemory(Provenance):
    """One memory in an export: its provenance, the probability of each answer saved, and the memory exactly as saved
    (docs/customer_export.md says what each field means)."""

    answer_probabilities: dict[str, float]
    memory: MemoryItem


class CustomerExport(TypedDict):
    """One customer's data: the document `customer_export` makes and `json.dumps` writes."""

    format: str
    format_version: int
    customer: str
    exported_at: str
    memories: list[ExportedMemory]
    ledger: list[LedgerEntry]


@dataclass(frozen=True)
class CustomerData:
    """What a checked export holds: the records as a store gives them, and the ledger entries."""

    customer: str
    exported_at: datetime
    memories: list[MemoryRecord]
    ledger: list[LedgerEntry]


class NotACustomerExport(ShownAsMessage, ValueError):
    """A document the reader cannot take: the message names where, the field, and what is wrong."""


def exported_memory(record: MemoryRecord, moment: datetime) -> ExportedMemory:
    """One record as the export writes it, its status at the export's moment."""
    return {**record.provenance_at(moment), "answer_probabilities": record.answer_probabilities,
            "memory": record.memory}


def customer_export(customer: str, records: Sequence[MemoryRecord], ledger: Sequence[LedgerEntry],
                    exported_at: datetime | None = None) -> CustomerExport:
    """The export of `customer`: every one of their records, in the order given (a store's: the order saved), and
    their ledger entries (another customer's entries are left out; another customer's record is a ValueError)."""
    moment = utc(exported_at or datetime.now(UTC), "exported_at")
    strangers = sorted({record.customer for record in records} - {customer})
    if strangers:
        raise ValueError(f"the export of {customer} was given records of {', '.join(strangers)}")
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "customer": customer, "exported_at": iso_utc(moment),
            "memories": [exported_memory(record, moment) for record in records],
            "ledger": [entry for entry in ledger if entry.get("customer") == customer]}


def export_customer(store: MemoryStore, customer: str, exported_at: datetime | None = None) -> CustomerExport:
    """The export of `customer` from what the store keeps of them now."""
    return customer_export(customer, store.memory_records(customer), store.ledger(customer), exported_at)


class Reader:
    """Reads one document, naming its source and the field in every error."""

    def __init__(self, source: str) -> None:
        self.source = source

    def wrong(self, field: str, problem: str) -> NotACustomerExport:
        return NotACustomerExport(f"{self.source}: {field} {problem}")

    def fields(self, value: object, field: str, required: Sequence[str], optional: Sequence[str] = ()
               ) -> Mapping[str, Any]:
        """`value` if it is a JSON object with every required key and no key the format lacks."""
        if not isinstance(value, dict):
            raise self.wrong(field, f"must be a JSON object; got {shown(value)}")
        missing = [key for key in required if key not in value]
        if missing:
            raise self.wrong(field, f"has no {', '.join(map(repr, missing))}")
        unknown = [key for key in value if key not in required and key not in optional]
        if unknown:
            raise self.wrong(field, f"has {', '.join(map(repr, unknown))}, which format version {FORMAT_VERSION}"
                             " does not have")
        return value

    def of_type(self, value: object, field: str, kind: type | tuple[type, ...], wanted: str) -> Any:
        """`value` if it is of `kind` (a bool is no number, a number is finite), else an error saying what is wanted."""
        if ((isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)))
                or not isinstance(value, kind) or (isinstance(value, float) and not math.isfinite(value))):
            raise self.wrong(field, f"must be {wanted}; got {shown(value)}")
        return value

    def time(self, value: object, field: str) -> datetime:
        """An ISO 8601 time with its zone, as a UTC datetime."""
        text = self.of_type(value, field, str, "an ISO 8601 time in UTC, e.g. \"2026-09-28T09:14:03Z\"")
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise self.wrong(field, f"is not an ISO 8601 time: {shown(value)}") from None
        if moment.utcoffset() is None:
            raise self.wrong(field, f"has no time zone: {shown(value)} (write it in UTC, ending in Z)")
        return moment.astimezone(UTC)

    def optional_time(self, value: object, field: str) -> datetime | None:
        return None if value is None else self.time(value, field)

    def header(self, document: object) -> Mapping[str, Any]:
        """The document's top level, its format and version checked first: a newer version is refused whole."""
        if not isinstance(document, dict):
            raise self.wrong("the document", f"must be a JSON object; got {shown(document)}")
        if document.get("format") != FORMAT:
            raise self.wrong("format", f"is {shown(document.get('format'))}, not {FORMAT!r}: this is not a customer"
                             " export of the memory cookbook")
        version = self.of_type(document.get("format_version"), "format_version", int, "a whole number")
        if version > FORMAT_VERSION:
            raise self.wrong("format_version", f"is {version}, newer than this reader's {FORMAT_VERSION}: read it"
                             " with the version of the memory cookbook that wrote it, or a later one")
        if version < 1:
            raise self.wrong("format_version", f"is {version}; versions start at 1")
        return self.fields(document, "the document", ("format", "format_version", "customer", "exported_at",
                                                      "memories", "ledger"))

    def memory(self, value: object, field: str, customer: str, exported_at: datetime) -> MemoryRecord:
        exported = self.fields(value, field, tuple(ExportedMemory.__annotations__))
        try:
            record = MemoryRecord(
                customer=customer, ticket=exported["ticket"], memory=exported["memory"],
                answer_probabilities=exported["answer_probabilities"], p_remember=exported["p_remember"],
                remember_at=exported["remember_at"], model=exported["model"],
                saved_at=self.time(exported["saved_at"], f"{field}.saved_at"),
                expires_at=self.optional_time(exported["expires_at"], f"{field}.expires_at"),
                invalidated_at=self.optional_time(exported["invalidated_at"], f"{field}.invalidated_at"),
                invalidated_by=exported["invalidated_by"], invalidation_reason=exported["invalidation_reason"])
        except ValueError as error:
            if isinstance(error, NotACustomerExport):
                raise
            raise self.wrong(field, f"is not a memory a store can keep: {error}") from None
        if exported["status"] not in STATUSES:
            raise self.wrong(f"{field}.status", f"must be one of {', '.join(map(repr, STATUSES))}; got"
                             f" {shown(exported['status'])}")
        if exported["status"] != record.status_at(exported_at):
            raise self.wrong(f"{field}.status", f"is {exported['status']!r}, but its times make it"
                             f" {record.status_at(exported_at)!r} when it was exported")
        return record

    def ledger_entry(self, value: object, field: str, customer: str) -> LedgerEntry:
        entry = self.fields(value, field, ("customer",), tuple(LEDGER_FIELDS))
        if entry["customer"] != customer:
            raise self.wrong(f"{field}.customer", f"is {shown(entry['customer'])}, not the document's customer"
                             f" {customer!r}")
        for key, (kind, wanted) in LEDGER_FIELDS.items():
            if key in entry:
                self.of_type(entry[key], f"{field}.{key}", kind, wanted)
        for key in ("questions", "memories_sent"):
            for index, item in enumerate(entry.get(key, ())):
                if not (isinstance(item, str) or (key == "memories_sent" and item is None)):
                    raise self.wrong(f"{field}.{key}[{index}]", f"must be a ticket id (a string); got {shown(item)}")
        return cast(LedgerEntry, dict(entry))  # each key's type is checked above

    def read(self, document: object) -> CustomerData:
        header = self.header(document)
        customer = self.of_type(header["customer"], "customer", str, "a customer id (a string)")
        if not customer.strip():
            raise self.wrong("customer", "is empty: an export is of one customer, named by their id")
        exported_at = self.time(header["exported_at"], "exported_at")
        memories = self.of_type(header["memories"], "memories", list, "a list")
        ledger = self.of_type(header["ledger"], "ledger", list, "a list")
        return CustomerData(
            customer=customer, exported_at=exported_at,
            memories=[self.memory(value, f"memories[{index}]", customer, exported_at)
                      for index, value in enumerate(memories)],
            ledger=[self.ledger_entry(value, f"ledger[{index}]", customer) for index, value in enumerate(ledger)])


# What a ledger entry (memory_cookbook.contract.LedgerEntry) may hold beside its customer, and the JSON type of each
# (docs/customer_export.md).
LEDGER_FIELDS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "ticket": ((str, type(None)), "a ticket id or null"), "questions": (list, "a list of question ids"),
    "memories_sent": (list, "a list of ticket ids"), "answer": (dict, "a JSON object"),
    "p_remember": ((int, float), "a number"), "remember_at": ((int, float), "a number"),
    "saved": (bool, "true or false"), "input_tokens": ((int, type(None)), "a whole number or null"),
    "source": (str, "a string")}


def shown(value: object) -> str:
    """A value as an error message quotes it: its JSON text, cut at 80 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def read_customer_export(document: str | bytes | Mapping[str, Any], source: str = "the customer export"
                         ) -> CustomerData:
    """The customer, their records and ledger entries in `document` (its JSON text, or the parsed JSON), every field
    checked; a NotACustomerExport naming `source`, the field and what is wrong, for a document of another format, a
    newer version, or a field missing, unknown or wrong."""
    reader = Reader(source)
    if isinstance(document, (str, bytes)):
        try:
            document = json.loads(document)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise reader.wrong("the document", f"is not JSON ({error})") from None
    return reader.read(document)


def load_customer_export(path: str | Path) -> CustomerData:
    """read_customer_export of a file: a DamagedFile if it cannot be read as JSON, naming the file."""
    return read_customer_export(read_json(path, fix="export the customer again"), source=str(path))


def counted(number: int, one: str, many: str) -> str:
    """'1 memory', '3 memories'."""
    return f"{number} {one if number == 1 else many}"


@dataclass(frozen=True)
class ImportReport:
    """What an import wrote: the customer's memories (by status at the import) and ledger entries."""

    customer: str
    memories: int
    statuses: dict[Status, int]
    ledger_entries: int

    def __str__(self) -> str:
        counts = ", ".join(f"{self.statuses[status]} {status}" for status in STATUSES)
        return (f"{self.customer}: imported {counted(self.memories, 'memory', 'memories')} ({counts}) and"
                f" {counted(self.ledger_entries, 'ledger entry', 'ledger entries')}")


def import_customer(store: MemoryStore, document: str | bytes | Mapping[str, Any], now: datetime | None = None,
                    source: str = "the customer export") -> ImportReport:
    """Put an export into `store`: the whole document is checked first, then written in one `store.restore`. A store
    that keeps any memory or ledger entry of the customer already is left as it is (CustomerAlreadyKept): an import
    never overwrites or mixes two histories. Returns what it wrote."""
    data = read_customer_export(document, source)
    try:
        store.restore(data.customer, data.memories, data.ledger)
    except CustomerAlreadyKept as kept:  # said again with the document's name
        raise CustomerAlreadyKept(kept.customer, kept.memories, kept.entries, source) from None
    moment = utc(now or datetime.now(UTC), "now")
    return ImportReport(data.customer, len(data.memories),
                        {status: sum(record.status_at(moment) == status for record in data.memories)
                         for status in STATUSES}, len(data.ledger))
