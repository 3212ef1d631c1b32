"""The one reader of each file a reader of the cookbook can damage by hand: the ticket data, the recorded requests and
(through cache_file) the cache. Whatever is wrong with one (missing, empty, cut short, not JSON, another shape, a field
missing) is one DamagedFile error that names the file, says what is wrong (a line and column, or the field) and how to
get the committed file back. A memory store file SQLite cannot open (07's SqliteStore) is a DamagedFile too, saying to
delete it or choose another, and so is one deleted or made anew since the store opened it. Hand-written, tested in
tests/test_damaged_files.py."""

import json
import secrets
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory_cookbook.locations import RECORDED_REQUESTS_FILE, ROOT
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["DamagedFile", "MESSAGE_FIELDS", "REQUEST_FIELDS", "TICKET_FIELDS", "changed_store_file", "check_fields",
           "check_list", "damaged", "json_type", "marked_store_file", "opened_store_file", "opening_memory_store",
           "read_json", "read_recorded_requests", "read_tickets", "requests_fix", "restore_hint"]


class DamagedFile(ShownAsMessage, RuntimeError):
    """A file the cookbook reads cannot be used as it is; the message names it, what is wrong, and the fix."""


@contextmanager
def opening_memory_store(path: Path) -> Iterator[None]:
    """Inside it, SQLite's DatabaseError (the file at `path` is not a database, or a damaged one) is a DamagedFile that
    names the file and what to do."""
    try:
        yield
    except sqlite3.DatabaseError as error:
        raise DamagedFile(f"{path} is not a memory store SQLite can open ({error}): delete it (its memories are lost)"
                          " or choose another file; the store then starts a new, empty one.") from None


def marked_store_file(db: sqlite3.Connection) -> int:
    """The mark of the store file `db` is open on: the one it has, or a random one written into a new file (SQLite's
    header keeps `user_version` for the application), so that a file made anew in its place is told apart."""
    mark: int = db.execute("PRAGMA user_version").fetchone()[0]
    if not mark:
        mark = secrets.randbelow(2**31 - 1) + 1
        db.execute(f"PRAGMA user_version = {mark}")
    return mark


def opened_store_file(path: Path, mark: int) -> sqlite3.Connection:
    """A connection to the store file at `path`, if it is still the file marked `mark`. Deleted since, or made anew
    (by hand, or by another kernel of the same notebook: its other edition, or a second tab, whose first cell makes
    the file anew and whose last deletes it), it is a DamagedFile that says so."""
    if not path.exists():
        raise changed_store_file(path, "deleted")
    with opening_memory_store(path):
        db = sqlite3.connect(path, timeout=30)
        found = db.execute("PRAGMA user_version").fetchone()[0]
    if found != mark:
        db.close()
        raise changed_store_file(path, "replaced by a new file")
    return db


def changed_store_file(path: Path, what: str) -> DamagedFile:
    """The error for a store file `what` ("deleted", "replaced by a new file") since the store opened it."""
    return DamagedFile(f"{path} was {what} after this store opened it, by hand or by another kernel of this notebook"
                       " (its other edition, or a second tab). This store's memories are not there: make it again"
                       " (Kernel → Restart Kernel and Run All Cells).")


def restore_hint(path: str | Path) -> str:
    """How to get a committed file back: git, or the classroom kit's copy."""
    try:
        relative = Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return "replace it with a good copy"
    return f"get the committed file back with `git checkout -- {relative}` (from a classroom kit: copy it again)"


def damaged(path: str | Path, problem: str, fix: str | None = None) -> DamagedFile:
    return DamagedFile(f"{path} {problem}: {fix or restore_hint(path)}.")


def read_json(path: str | Path, fix: str | None = None) -> Any:
    """The JSON value in `path`, or a DamagedFile naming what is wrong with the file and `fix` (default: restore it)."""
    path = Path(path)
    if path.is_dir():
        raise damaged(path, "is a folder, not a JSON file", fix)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise damaged(path, "is missing", fix) from None
    except UnicodeDecodeError:
        raise damaged(path, "is not UTF-8 text", fix) from None
    if not text.strip():
        raise damaged(path, "is empty (not valid JSON)", fix)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        ends_early = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string")
        cut_short = ", the file ends too early: it was probably cut short" if ends_early else ""
        raise damaged(path, f"is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}{cut_short})",
                      fix) from None


def check_fields(path: str | Path, where: str, value: Any, fields: Mapping[str, type], fix: str | None = None) -> Any:
    """`value` (at `where` in the file) is a JSON object with each of `fields` ({name: type}); else DamagedFile."""
    if not isinstance(value, dict):
        raise damaged(path, f"has {where} that is a {json_type(value)}, not a JSON object", fix)
    for name, kind in fields.items():
        if name not in value:
            raise damaged(path, f"has no field {name!r} in {where}", fix)
        if not isinstance(value[name], kind):
            raise damaged(path, f"has {where}.{name} that is a {json_type(value[name])}, not a {json_type(kind())}",
                          fix)
    return value


def json_type(value: object) -> str:
    return {dict: "JSON object", list: "list", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def check_list(path: str | Path, where: str, value: Any, fix: str | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise damaged(path, f"has {where} that is a {json_type(value)}, not a list", fix)
    return value


TICKET_FIELDS = {"id": str, "customer_id": str, "received_on": str, "subject": str, "text": str}
MESSAGE_FIELDS = {"subject": str, "text": str}


def read_tickets(path: str | Path) -> dict[str, Any]:
    """data/tickets.json, checked: customers, earlier tickets, later messages, their date, the expected teams and the
    later messages' ticket ids."""
    data = check_fields(path, "the file", read_json(path), {
        "customers": dict, "earlier_tickets": list, "later_messages": list, "later_received_on": str,
        "expected_team": dict, "later_ticket_ids": dict})
    for customer_id, customer in data["customers"].items():
        check_fields(path, f"customers.{customer_id}", customer, {"id": str, "company": str})
    for number, ticket in enumerate(data["earlier_tickets"]):
        check_fields(path, f"earlier_tickets[{number}]", ticket, TICKET_FIELDS)
        if ticket["customer_id"] not in data["customers"]:
            raise damaged(path, f"has earlier_tickets[{number}].customer_id {ticket['customer_id']!r}, which is not"
                                " one of its customers")
    for number, message in enumerate(data["later_messages"]):
        check_fields(path, f"later_messages[{number}]", message, MESSAGE_FIELDS)
    subjects = [message["subject"] for message in data["later_messages"]]
    check_fields(path, "expected_team", data["expected_team"], dict.fromkeys(data["customers"], dict))
    for customer_id in data["customers"]:
        check_fields(path, f"expected_team.{customer_id}", data["expected_team"][customer_id],
                     dict.fromkeys(subjects, str))
    # Each later message's ticket id, as the published run numbered them: part of every later request's cache key.
    check_fields(path, "later_ticket_ids", data["later_ticket_ids"], dict.fromkeys(data["customers"], dict))
    for customer_id in data["customers"]:
        check_fields(path, f"later_ticket_ids.{customer_id}", data["later_ticket_ids"][customer_id],
                     dict.fromkeys(subjects, str))
    return data


REQUEST_FIELDS = {"key": str, "model": str, "state": dict, "questions": dict, "answer_sha256": str}


def requests_fix(path: str | Path) -> str:
    """How to get a recorded_requests.json back: the committed one from git; beside a cache of your own, a copy of the
    file that was written with that cache; either, written again by recording."""
    if Path(path).resolve() == RECORDED_REQUESTS_FILE:
        return f"{restore_hint(path)}, or write it again with scripts/record_cache.py"
    return (f"copy beside the cache the {Path(path).name} that was written with it (for a copy of the committed cache,"
            f" {RECORDED_REQUESTS_FILE}), or write it again with scripts/record_cache.py")


def read_recorded_requests(path: str | Path) -> list[dict[str, Any]]:
    """recorded_requests.json, checked: a list of {key, model, state, questions, answer_sha256}."""
    fix = requests_fix(path)
    requests = check_list(path, "the file", read_json(path, fix), fix)
    return [check_fields(path, f"request [{number}]", request, REQUEST_FIELDS, fix)
            for number, request in enumerate(requests)]
