"""SQLite's secure_delete: the store sets it itself, so forgetting overwrites the bytes even on a build where it
is off by default.
Each was seen failing with a one-line bug planted in the code it guards."""

import sqlite3

import pytest

from memory_cookbook.from_notebooks.stores import SqliteStore


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
    store.forget_customer("C-forget")
    on_disk = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert [text for text in (secret, "C-forget") if text.encode() in on_disk] == []
    assert b"Fernwood Studio pays by invoice" in on_disk
