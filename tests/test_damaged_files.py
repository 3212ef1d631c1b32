"""Every file a reader can damage by hand is read by one checked reader (memory_cookbook/checked_files.py, and
cache_file for the cache): a damaged one is one error that names the file, what is wrong (a line and column, or the
field) and how to get it back, and nothing is written. The cache's own shape errors are in test_errors.py."""

import json
import re
import sqlite3
import subprocess
import sys

import nbformat
import pytest
from conftest import CACHE_FILE, RECORDED_REQUESTS_FILE, ROOT, committed_entries, configure
from memory_cookbook.replay import cache_file
from memory_cookbook.checked_files import DamagedFile, read_recorded_requests, read_tickets, requests_fix, restore_hint
from memory_cookbook.replay.recorded_requests import recorded_requests
from memory_cookbook.from_notebooks.stores import SqliteStore
from cookbook_tools.paths import ENGLISH_NOTEBOOKS, TICKETS_FILE

TICKETS = json.loads(TICKETS_FILE.read_text())


def without(data, *path):
    """A deep copy of `data` with the field at `path` removed."""
    copy = json.loads(json.dumps(data))
    inner = copy
    for step in path[:-1]:
        inner = inner[step]
    del inner[path[-1]]
    return copy


def replaced(data, path, value):
    """A deep copy of `data` with the field at `path` set to `value`."""
    copy = json.loads(json.dumps(data))
    inner = copy
    for step in path[:-1]:
        inner = inner[step]
    inner[path[-1]] = value
    return copy


def damaged_copy(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


TICKET_DAMAGE = {
    "truncated": (TICKETS_FILE.read_text()[:700], r"is not valid JSON \(line \d+, column \d+: .*cut short"),
    "empty": ("", r"is empty \(not valid JSON\):"),
    "not JSON at all": ("tickets", r"is not valid JSON \(line 1, column 1: Expecting value\):"),
    "cut short after a value": ('{"customers": {}', r"column 17: Expecting ',' delimiter, the file ends too early"),
    "another shape": ("[1, 2]", "has the file that is a list, not a JSON object"),
    "a ticket without its text": (json.dumps(without(TICKETS, "earlier_tickets", 0, "text")),
                                  r"has no field 'text' in earlier_tickets\[0\]"),
    "a customer without a company": (json.dumps(without(TICKETS, "customers", "C-2210", "company")),
                                     r"has no field 'company' in customers.C-2210"),
    "an expected team missing": (json.dumps(without(TICKETS, "expected_team", "C-1042", "More seats")),
                                 r"has no field 'More seats' in expected_team.C-1042"),
    "a number for a subject": (TICKETS_FILE.read_text().replace('"subject": "More seats"', '"subject": 7'),
                               r"has later_messages\[2\].subject that is a number, not a string"),
    "cut short after a colon": ('{"customers": ', r"line 1, column 15: Expecting value, the file ends too early"),
    "a customer's expected teams missing": (json.dumps(without(TICKETS, "expected_team", "C-2210")),
                                            r"has no field 'C-2210' in expected_team"),
    "null for a customer's expected teams": (json.dumps(TICKETS | {"expected_team": {
        **TICKETS["expected_team"], "C-1042": None}}), "has expected_team.C-1042 that is a null, not a JSON object"),
    "null for an earlier ticket's text": (json.dumps(TICKETS | {"earlier_tickets": [
        TICKETS["earlier_tickets"][0] | {"text": None}, *TICKETS["earlier_tickets"][1:]]}),
        r"has earlier_tickets\[0\].text that is a null, not a string"),
    "the later ticket ids missing": (json.dumps(without(TICKETS, "later_ticket_ids")),
                                     "has no field 'later_ticket_ids' in the file"),
    "a customer's later ticket ids missing": (json.dumps(without(TICKETS, "later_ticket_ids", "C-2210")),
                                              "has no field 'C-2210' in later_ticket_ids"),
    "a later message's ticket id missing": (json.dumps(without(TICKETS, "later_ticket_ids", "C-2210", "More seats")),
                                            r"has no field 'More seats' in later_ticket_ids.C-2210"),
    "a later ticket id that is a number": (
        json.dumps(replaced(TICKETS, ("later_ticket_ids", "C-2210", "More seats"), 206)),
        r"has later_ticket_ids.C-2210.More seats that is a number, not a string"),
    "the later messages' date that is a number": (json.dumps(replaced(TICKETS, ("later_received_on",), 20260928)),
                                                  "has the file.later_received_on that is a number, not a string"),
    "true for a message's text": (TICKETS_FILE.read_text().replace(
        '"text": "We\'d like to add 20 more seats before next quarter."', '"text": true'),
        r"has later_messages\[2\].text that is a boolean, not a string"),
}


MAKE_UNREADABLE = {"missing": (lambda path: None, "is missing"),
                   "a folder": (lambda path: path.mkdir(), "is a folder, not a JSON file"),
                   "not UTF-8 text": (lambda path: path.write_bytes(b'["\xff\xfe"]'), "is not UTF-8 text")}
# The checked reader of each file and how its error says to get it back.
CHECKED_READERS = {"tickets": (read_tickets, restore_hint), "recorded requests": (read_recorded_requests, requests_fix)}


@pytest.mark.parametrize("file, damage", [(file, damage) for file in CHECKED_READERS for damage in MAKE_UNREADABLE])
def test_a_file_that_is_missing_a_folder_or_not_text_says_so_and_how_to_get_it_back(tmp_path, file, damage):
    read, fix = CHECKED_READERS[file]
    make, problem = MAKE_UNREADABLE[damage]
    path = tmp_path / "file.json"
    make(path)
    with pytest.raises(DamagedFile) as raised:
        read(path)
    assert str(raised.value) == f"{path} {problem}: {fix(path)}."
    assert raised.value.__cause__ is None


def test_a_ticket_of_an_unknown_customer_is_named(tmp_path):
    data = json.loads(json.dumps(TICKETS))
    data["earlier_tickets"][1]["customer_id"] = "C-9999"
    with pytest.raises(DamagedFile, match=r"earlier_tickets\[1\].customer_id 'C-9999', which is not one of"):
        read_tickets(damaged_copy(tmp_path, "tickets.json", json.dumps(data)))


def test_the_committed_files_read_cleanly():
    assert read_tickets(TICKETS_FILE) == TICKETS
    assert len(read_recorded_requests(RECORDED_REQUESTS_FILE)) == 32


def test_the_fix_names_git_checkout_for_a_committed_file_and_a_good_copy_elsewhere(tmp_path):
    assert restore_hint(TICKETS_FILE).startswith("get the committed file back with `git checkout -- data/tickets.json`")
    assert restore_hint(tmp_path / "tickets.json") == "replace it with a good copy"


def test_the_lesson_stops_on_damaged_tickets_with_the_checked_message(tmp_path):
    damaged = tmp_path / "data" / "tickets.json"
    damaged.parent.mkdir()
    damaged.write_text(json.dumps(without(TICKETS, "earlier_tickets", 0, "text")))
    damaged_instead = (f"from memory_cookbook import locations; locations.TICKETS_FILE = {str(damaged)!r}\n"
                       "import jev_memory_lesson")  # the lesson reads locations.TICKETS_FILE as it is imported
    result = subprocess.run([sys.executable, "-c", damaged_instead], cwd=ROOT / "notebooks", capture_output=True,
                            text=True, timeout=60)
    last_line = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 1
    assert re.fullmatch(r"memory_cookbook\.checked_files\.DamagedFile: .*/data/tickets\.json has no field 'text' in"
                        r" earlier_tickets\[0\]: replace it with a good copy\.", last_line), last_line


REQUESTS = json.loads(RECORDED_REQUESTS_FILE.read_text())
REQUEST_DAMAGE = {
    "truncated": (RECORDED_REQUESTS_FILE.read_text()[:3000], "is not valid JSON .*cut short"),
    "empty": ("", "is empty"),
    "another shape": (json.dumps({"requests": REQUESTS}), "has the file that is a JSON object, not a list"),
    "a request without its state": (json.dumps([REQUESTS[0], without(REQUESTS[1], "state")]),
                                    r"has no field 'state' in request \[1\]"),
    "a request without its answer's digest": (json.dumps([without(REQUESTS[0], "answer_sha256")]),
                                              r"has no field 'answer_sha256' in request \[0\]"),
    "a request that is a string": (json.dumps(["T-201"]), r"has request \[0\] that is a string, not a JSON object"),
    "a state that is a string": (json.dumps([REQUESTS[0] | {"state": "T-201"}]),
                                 r"has request \[0\].state that is a string, not a JSON object"),
}


# (the reader, the file's name, how its error says to get it back, {damage: (text, what the error says is wrong)})
READERS = {"tickets": (read_tickets, "tickets.json", restore_hint, TICKET_DAMAGE),
           "recorded requests": (recorded_requests, "recorded_requests.json", requests_fix, REQUEST_DAMAGE)}


@pytest.mark.parametrize("file, damage", [(file, damage) for file, (*_, damages) in READERS.items()
                                          for damage in damages])
def test_a_damaged_file_says_which_file_what_is_wrong_and_how_to_get_it_back(tmp_path, file, damage):
    read, name, fix, damages = READERS[file]
    text, problem = damages[damage]
    path = damaged_copy(tmp_path, name, text)
    with pytest.raises(DamagedFile, match=problem) as raised:
        read(path)
    assert str(raised.value).startswith(str(path)) and str(raised.value).endswith(f": {fix(path)}.")
    assert raised.value.__cause__ is None and path.read_text() == text


def test_an_answer_edited_into_another_valid_answer_is_caught_when_the_cache_opens(lesson, monkeypatch, tmp_path):
    entries = committed_entries()
    key = REQUESTS[0]["key"]  # the plain routing of C-1042's "Slow dashboards": cloud_ops 0.80
    entries[key]["answers"]["team"]["choice"] = "selfhosted_windows"
    edited = tmp_path / CACHE_FILE.name
    edited.write_text(cache_file.cache_text(entries))
    (tmp_path / RECORDED_REQUESTS_FILE.name).write_text(RECORDED_REQUESTS_FILE.read_text())
    configure(monkeypatch, edited)
    with pytest.raises(cache_file.CacheError, match=r"the answer to questions \['team'\] about ticket T-201 .* is not"
                                                    r" the one recorded: it was edited. Restore the committed cache"):
        lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)


def test_every_recorded_answer_is_checked_not_only_the_first(lesson, monkeypatch, tmp_path):
    entries = committed_entries()
    key = REQUESTS[-1]["key"]  # the last answer the published run recorded
    entries[key] = json.loads(json.dumps(entries[key]).replace("0.", "0.0", 1))  # still a valid answer
    edited = tmp_path / CACHE_FILE.name
    edited.write_text(cache_file.cache_text(entries))
    (tmp_path / RECORDED_REQUESTS_FILE.name).write_text(RECORDED_REQUESTS_FILE.read_text())
    configure(monkeypatch, edited)
    with pytest.raises(cache_file.CacheError, match=rf"\(entry {key[:12]}…\) is not the one recorded: it was edited"):
        lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)


def test_answers_the_published_run_did_not_record_are_checked_only_for_shape(lesson, monkeypatch, tmp_path):
    mine = tmp_path / CACHE_FILE.name
    mine.write_text(CACHE_FILE.read_text())
    (tmp_path / RECORDED_REQUESTS_FILE.name).write_text(json.dumps(REQUESTS[1:]))  # the first answer is "mine"
    configure(monkeypatch, mine)
    assert lesson.routed(lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)) == "cloud_ops 0.80"


@pytest.mark.parametrize("content", [b"this is a text file, not a database", b"SQLite format 3\x00" + b"\x01" * 200])
def test_a_damaged_store_database_names_the_file_and_what_to_do_and_is_left_as_it_was(tmp_path, content):
    path = tmp_path / "memories.sqlite"
    path.write_bytes(content)
    with pytest.raises(DamagedFile, match=f"{re.escape(str(path))} is not a memory store SQLite can open .*: delete"
                                          " it .* or choose another file") as raised:
        SqliteStore(path)
    assert raised.value.__cause__ is None and path.read_bytes() == content
    assert isinstance(raised.value.__context__, sqlite3.DatabaseError)


USES = {"saved": lambda store: store.saved(), "recall": lambda store: store.recall("C-1042"),
        "forget": lambda store: store.forget_customer("C-1042")}


@pytest.mark.parametrize("use", USES.values(), ids=USES)
def test_a_store_whose_file_was_deleted_since_says_so_and_makes_no_empty_file(tmp_path, use):
    """Two kernels of notebook 10 (English and Chinese) could share desk_memories.sqlite, and each one's last cell
    deletes it: the other kernel's store then names the file and says it was deleted, instead of SQLite's "no such
    table"."""
    path = tmp_path / "memories.sqlite"
    store = SqliteStore(path)
    path.unlink()
    with pytest.raises(DamagedFile, match=f"{re.escape(str(path))} was deleted after this store opened it"):
        use(store)
    assert not path.exists()


@pytest.mark.parametrize("use", USES.values(), ids=USES)
def test_a_store_whose_file_was_made_anew_since_says_so_and_leaves_the_new_one_alone(tmp_path, use):
    """The other kernel's first cell makes the file anew: this kernel's store must not read or forget its memories."""
    path = tmp_path / "memories.sqlite"
    store = SqliteStore(path)
    path.unlink()
    other = SqliteStore(path)
    other.log({"customer": "C-1042"})
    with pytest.raises(DamagedFile, match=f"{re.escape(str(path))} was replaced by a new file after this store"):
        use(store)
    assert other.ledger("C-1042") == [{"customer": "C-1042"}]


def test_a_store_opened_again_on_its_file_by_another_process_shares_it(tmp_path):
    """07's fresh process opens the same file (its own SqliteStore): the same store, not a new one."""
    path = tmp_path / "memories.sqlite"
    first = SqliteStore(path)
    SqliteStore(path).log({"customer": "C-1042"})
    first.log({"customer": "C-1042"})
    assert first.ledger("C-1042") == [{"customer": "C-1042"}] * 2


def test_a_store_file_whose_path_has_spaces_a_hash_and_chinese_is_opened_as_named(tmp_path):
    path = tmp_path / "课堂 #1" / "memories.sqlite"
    path.parent.mkdir()
    store = SqliteStore(path)
    store.log({"customer": "C-1042"})
    assert store.ledger("C-1042") == [{"customer": "C-1042"}] and sorted(p.name for p in path.parent.iterdir()) == [
        "memories.sqlite"]


READ_DIRECTLY = re.compile(r"(json_cache|recorded_requests|tickets)\.json.*(read_text|read_bytes|open|json\.load)\(|"
                           r"(read_text|read_bytes|open|json\.load)\(.*(json_cache|recorded_requests|tickets)\.json|"
                           r"json\.loads?\((cache_path|requests_path)\(")


@pytest.mark.parametrize("path", ENGLISH_NOTEBOOKS, ids=lambda path: path.name)
def test_no_notebook_cell_reads_a_checked_file_around_its_reader(path):
    cells = [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    assert [source for source in cells if READ_DIRECTLY.search(source)] == []
