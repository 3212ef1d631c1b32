"""SQLite's secure_delete: the store sets it itself, so forgetting overwrites the bytes even on a build where it
is off by default.
Each was seen failing with a one-line bug planted in the code it guards."""

import sqlite3
from datetime import UTC, datetime

import pytest

from memory_cookbook.from_notebooks.stores import SqliteStore
from memory_cookbook.records import MemoryRecord


@pytest.fixture
def secure_delete_off_by_default(monkeypatch):
    """sqlite3.connect as on a build compiled without SQLITE_SECURE_DELETE: each connection starts with it off."""
    connect = sqlite3.connect

    def connect_as_another_build(*args, **kwargs):
        connection = connect(*args, **kwargs)
        connection.execute("PRAGMA secure_delete = OFF")
        return connection

    monkeypatch.setattr(sqlite3, "connect", connect_as_another_build)


def test_the_stores_connection_overwrites_deleted_rows_even_where_sqlite_does_not_by_default(
        secure_delete_off_by_default, tmp_path):
    assert sqlite3.connect(":memory:").execute("PRAGMA secure_delete").fetchone() == (0,)  # the fixture holds
    with SqliteStore(tmp_path / "memories.sqlite").connect() as db:
        assert db.execute("PRAGMA secure_delete").fetchone() == (1,)


def test_forgetting_removes_the_bytes_from_the_file_even_where_sqlite_keeps_them_by_default(
        secure_delete_off_by_default, tmp_path):
    store = SqliteStore(tmp_path / "memories.sqlite")
    secret = "Harbor Logistics runs the self-hosted edition on Windows Server 2022"
    for customer, text in [("C-forget", secret), ("C-keep", "Fernwood Studio pays by invoice")]:
        store.save(customer, {"request": {"ticket": {"id": f"T-{customer}", "text": text}}, "jev_answered": {}},
                   p_remember=0.9, model="m")
        store.log({"customer": customer, "ticket": f"T-{customer}", "text": text})
    # its history too: an invalidation (the row's earlier version is overwritten as well) and a restored memory
    store.invalidate("C-forget", "T-C-forget", reason="Harbor moved to the cloud edition", by="desk@harbor-logistics")
    store.restore("C-restored", [MemoryRecord(
        "C-restored", "T-9", {"request": {"ticket": {"id": "T-9"}, "text": "Quayside Freight runs Linux"},
                              "jev_answered": {"q": "Self-hosted team, Linux"}}, {"q": 0.77}, 0.9, 0.5, "m",
        datetime(2026, 9, 1, tzinfo=UTC), invalidated_at=datetime(2026, 9, 2, tzinfo=UTC),
        invalidated_by="desk@quayside", invalidation_reason="Quayside left")], [])
    store.forget_customer("C-forget")
    store.forget_customer("C-restored")
    on_disk = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert [text for text in (secret, "C-forget", "Harbor moved to the cloud edition", "desk@harbor-logistics",
                              "C-restored", "Quayside", "desk@quayside", "Self-hosted team, Linux")
            if text.encode() in on_disk] == []
    assert b"Fernwood Studio pays by invoice" in on_disk
