"""A customer's export (memory_cookbook/desk/export.py, docs/customer_export.md): it reads back as what was exported,
its reader names the field and what is wrong instead of failing on a key, refuses a newer version, and an import
writes into a store that keeps nothing of the customer, or writes nothing."""

import copy
import json
import re

import pytest
from published_memories import AFTER_EXPIRY, BEFORE_EXPIRY, published_run

from cookbook_tools.paths import ROOT
from memory_cookbook.checked_files import DamagedFile
from memory_cookbook.contract import CustomerAlreadyKept, LedgerEntry
from memory_cookbook.desk.export import (FORMAT, FORMAT_VERSION, LEDGER_FIELDS, NotACustomerExport, customer_export,
                                         export_customer, import_customer, load_customer_export, read_customer_export)
from memory_cookbook.dict_store import DictStore


@pytest.fixture
def c1042(lesson):
    records, ledger = published_run(lesson)
    return records, [entry for entry in ledger if entry["customer"] == "C-1042"], ledger


def test_an_export_reads_back_as_the_records_and_ledger_entries_it_was_made_from(c1042):
    records, entries, ledger = c1042
    document = customer_export("C-1042", records, ledger, exported_at=AFTER_EXPIRY)
    assert (document["format"], document["format_version"]) == (FORMAT, FORMAT_VERSION)
    assert [memory["status"] for memory in document["memories"]] == ["expired", "invalidated"]
    assert len(document["ledger"]) == len(entries) == 6  # T-101, T-103 and T-105, then 3 later messages

    data = read_customer_export(json.dumps(document, ensure_ascii=False, indent=2))
    assert (data.customer, data.exported_at, data.memories, data.ledger) == ("C-1042", AFTER_EXPIRY, records, entries)
    for exported, record in zip(data.memories, records, strict=True):  # each memory's text as saved, key order too
        assert json.dumps(exported.memory) == json.dumps(record.memory)


def test_a_call_whose_response_gave_no_token_count_reads_back_as_null(c1042):
    records, entries, ledger = c1042
    document = customer_export("C-1042", records, ledger)
    document["ledger"][0]["input_tokens"] = None  # the contract's LedgerEntry allows it
    assert read_customer_export(json.dumps(document)).ledger[0]["input_tokens"] is None


def test_export_customer_reads_the_store(c1042):
    records, entries, ledger = c1042
    store = DictStore()
    store.restore("C-1042", records, entries)
    assert export_customer(store, "C-1042", BEFORE_EXPIRY) == customer_export("C-1042", records, entries,
                                                                              BEFORE_EXPIRY)


def damaged(document, change):
    document = copy.deepcopy(document)
    change(document)
    return document


CHANGES = {
    "a memory without p_remember": (lambda d: d["memories"][0].pop("p_remember"), "memories[0] has no 'p_remember'"),
    "p_remember a word": (lambda d: d["memories"][1].update(p_remember="high"),
                          "memories[1] is not a memory a store can keep: p_remember must be a number from 0 to 1"),
    "a field the format lacks": (lambda d: d["memories"][0].update(mood="calm"),
                                 "memories[0] has 'mood', which format version 1 does not have"),
    "a time without a zone": (lambda d: d["memories"][0].update(saved_at="2026-09-28T09:00:00"),
                              "memories[0].saved_at has no time zone"),
    "a status its times deny": (lambda d: d["memories"][1].update(status="in force"),
                                "memories[1].status is 'in force', but its times make it 'invalidated'"),
    "another customer's ledger entry": (lambda d: d["ledger"][3].update(customer="C-2210"),
                                        "ledger[3].customer is \"C-2210\", not the document's customer 'C-1042'"),
    "a ledger entry's count a string": (lambda d: d["ledger"][0].update(input_tokens="600"),
                                        "ledger[0].input_tokens must be a whole number"),
    "memories not a list": (lambda d: d.update(memories={}), "memories must be a list"),
    "no customer named": (lambda d: d.update(customer=" "), "customer is empty"),
    "no ledger": (lambda d: d.pop("ledger"), "the document has no 'ledger'"),
    "another format": (lambda d: d.update(format="mem0"), "format is \"mem0\", not 'memory-cookbook/customer-export'"),
    "a newer version": (lambda d: d.update(format_version=2, memories="read by version 2 only"),
                        "format_version is 2, newer than this reader's 1"),
}


@pytest.mark.parametrize("name", CHANGES)
def test_the_reader_names_the_field_and_what_is_wrong(c1042, name):
    records, _, ledger = c1042
    change, message = CHANGES[name]
    document = damaged(customer_export("C-1042", records, ledger, exported_at=BEFORE_EXPIRY), change)
    with pytest.raises(NotACustomerExport) as raised:
        read_customer_export(json.dumps(document), source="c1042.json")
    assert str(raised.value).startswith("c1042.json: ") and message in str(raised.value)


def test_the_reader_knows_every_field_of_the_contracts_ledger_entry():
    assert ["customer", *LEDGER_FIELDS] == list(LedgerEntry.__annotations__)


def test_a_document_that_is_not_json_is_named_and_a_file_that_cannot_be_read_is_a_damaged_file(tmp_path):
    with pytest.raises(NotACustomerExport, match="the customer export: the document is not JSON"):
        read_customer_export('{"format": ')
    path = tmp_path / "c1042.json"
    path.write_text('{"format": ', encoding="utf-8")
    with pytest.raises(DamagedFile, match="c1042.json"):
        load_customer_export(path)


def test_an_import_writes_into_a_store_that_keeps_nothing_of_the_customer_and_says_what_it_wrote(c1042):
    records, entries, ledger = c1042
    document = json.dumps(customer_export("C-1042", records, ledger, exported_at=BEFORE_EXPIRY))
    store = DictStore()
    report = import_customer(store, document, now=AFTER_EXPIRY)
    assert (store.memory_records("C-1042"), store.ledger("C-1042")) == (records, entries)
    assert (report.memories, report.statuses, report.ledger_entries) == (
        2, {"in force": 0, "invalidated": 1, "expired": 1}, 6)
    assert str(report) == "C-1042: imported 2 memories (0 in force, 1 invalidated, 1 expired) and 6 ledger entries"


def test_an_import_never_overwrites_what_a_store_keeps_of_the_customer(c1042):
    records, entries, ledger = c1042
    document = json.dumps(customer_export("C-1042", records, ledger))
    only_a_call = DictStore()
    only_a_call.log(entries[0])
    with pytest.raises(CustomerAlreadyKept, match="already keeps 0 memories and 1 ledger entry of C-1042"):
        import_customer(only_a_call, document)
    assert (only_a_call.memory_records("C-1042"), only_a_call.ledger()) == ([], entries[:1])


def test_a_ledger_entry_without_its_customer_is_named_and_nothing_is_imported(c1042):
    records, _, ledger = c1042
    document = damaged(customer_export("C-1042", records, ledger), lambda d: d["ledger"][-1].pop("customer"))
    store = DictStore()
    with pytest.raises(NotACustomerExport, match=r"ledger\[5\] has no 'customer'"):
        import_customer(store, document)
    assert (store.memory_records("C-1042"), store.ledger()) == ([], [])


def test_the_documented_example_is_what_the_export_writes_and_the_reader_takes(c1042):
    """docs/customer_export.md's example: C-1042's export with T-105 alone and the last call, field for field and in
    the order written."""
    records, _, ledger = c1042
    example = re.search(r"```json\n(.*?)```", (ROOT / "docs" / "customer_export.md").read_text(), re.S).group(1)
    written = customer_export("C-1042", records[1:], ledger, exported_at=BEFORE_EXPIRY)
    written["ledger"] = written["ledger"][-1:]
    assert json.dumps(json.loads(example)) == json.dumps(written)
    data = read_customer_export(example)
    assert (data.memories, data.ledger) == (records[1:], written["ledger"])
