"""memory_cookbook/postgres/errors.py: a password never shows, in any form of connection string; each psycopg error
becomes the DatabaseError that says what happened, with its SQLSTATE and psycopg's error as its cause; values
PostgreSQL cannot store are refused by name. No database needed."""

import psycopg
import pytest
from psycopg_pool import PoolTimeout

from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.memory_checks import checked_probability
from memory_cookbook.postgres.errors import (DatabaseRefused, DatabaseUnavailable, MemoryTablesMissing, QueryFailed,
                                             checked_id, database_errors, masked)

SECRET = "s3cr et&@x"  # a space, an ampersand and an at sign, as passwords have


@pytest.mark.parametrize("conninfo, shown", [
    ("postgresql://support:hunter2@db.example.com/support", "postgresql://support:***@db.example.com/support"),
    ("postgresql://support@db.example.com/support?password=hunter2&sslmode=require",
     "postgresql://support@db.example.com/support?password=***&sslmode=require"),
    ("host=db.example.com password=hunter2 dbname=support", "host=db.example.com password=*** dbname=support"),
    ("host=db.example.com password = 'hun ter2' dbname=support", "host=db.example.com password = *** dbname=support"),
    ("postgresql://support@db.example.com:5432/support", "postgresql://support@db.example.com:5432/support"),
], ids=["user:password@", "?password=", "key-value", "key-value, quoted", "no password"])
def test_a_password_is_masked_in_every_form_of_connection_string(conninfo, shown):
    assert masked(conninfo) == shown


@pytest.mark.parametrize("conninfo", [
    "postgresql://desk:Desk#Pw-4471x@db.example.com/support", "postgresql://desk:Pw:4471x@db.example.com/support",
    "postgresql://desk:Pw%234471x@db.example.com/support", "postgresql://desk:Pw?4471x@db.example.com/support",
    "postgresql://desk@db.example.com/support?sslmode=require&password=Pw%264471x",
    "postgresql://desk:wrong@db.example.com/support?password=Pw4471x",
    "host=db.example.com password=Pw\\#4471x\\ x dbname=support", "host=db.example.com password='Pw \\'4471x'",
], ids=["# in a URL", "a colon in a URL", "percent-encoded", "? in a URL", "?password=, percent-encoded",
        "both forms", "key-value, escaped", "key-value, quoted and escaped"])
def test_the_password_libpq_reads_is_masked_however_it_is_written(conninfo):
    password = psycopg.conninfo.conninfo_to_dict(conninfo)["password"]
    shown = masked(conninfo)
    assert psycopg.conninfo.conninfo_to_dict(shown) == {**psycopg.conninfo.conninfo_to_dict(conninfo),
                                                         "password": "***"}
    with pytest.raises(QueryFailed) as raised, database_errors(conninfo):
        raise psycopg.errors.QueryCanceled(f"canceling statement due to statement timeout ({password})")
    for said in (shown, str(raised.value), raised.value.database):
        assert "4471x" not in said and password not in said


def test_cannot_reach_the_database_is_a_psycopg_operational_error():
    with pytest.raises(psycopg.OperationalError) as raised:  # as a desk's code catches it
        PostgresStore("postgresql://desk:Desk#Pw-4471x@127.0.0.1:1/support", timeout=2)
    assert isinstance(raised.value, DatabaseUnavailable) and "4471x" not in str(raised.value)
    assert isinstance(raised.value.__cause__, psycopg.OperationalError)
    for kind, psycopg_kind in [(DatabaseRefused, psycopg.OperationalError), (QueryFailed, psycopg.DatabaseError),
                               (MemoryTablesMissing, psycopg.ProgrammingError)]:
        assert issubclass(kind, psycopg_kind)


def test_a_password_psycopg_repeats_is_masked_in_the_message_too():
    conninfo = f"host=db.example.com password='{SECRET}'"
    with pytest.raises(DatabaseUnavailable) as raised, database_errors(conninfo):
        raise psycopg.OperationalError(f"connection failed for password {SECRET}")
    assert SECRET not in str(raised.value) and "password=***" in str(raised.value)


@pytest.mark.parametrize("error, kind, sqlstate", [
    (psycopg.OperationalError("connection failed: Connection refused"), DatabaseUnavailable, None),
    (PoolTimeout("couldn't get a connection after 5.00 sec"), DatabaseUnavailable, None),
    (psycopg.errors.AdminShutdown("terminating connection due to administrator command"), DatabaseUnavailable, "57P01"),
    (psycopg.errors.InvalidPassword("password authentication failed for user"), DatabaseRefused, "28P01"),
    (psycopg.OperationalError('password authentication failed for user "support"'), DatabaseRefused, None),
    (psycopg.errors.QueryCanceled("canceling statement due to statement timeout"), QueryFailed, "57014"),
    (psycopg.errors.DeadlockDetected("deadlock detected"), QueryFailed, "40P01"),
    (psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"), QueryFailed, "55P03"),
    (psycopg.errors.InsufficientPrivilege("permission denied for table memories"), QueryFailed, "42501"),
    (psycopg.errors.TooManyConnections("too many connections for role"), DatabaseRefused, "53300"),
    (psycopg.OperationalError('FATAL: too many connections for role "app"'), DatabaseRefused, None),
    (psycopg.OperationalError("connection failed: FATAL:  sorry, too many clients already"), DatabaseRefused, None),
    (psycopg.errors.IdleInTransactionSessionTimeout("terminating connection due to idle-in-transaction timeout"),
     QueryFailed, "25P03"),
    (psycopg.ProgrammingError("only '%s', '%b', '%t' are allowed as placeholders, got '%''"), QueryFailed, None),
    (psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes"), QueryFailed, None),
    (psycopg.InterfaceError("the cursor is closed"), QueryFailed, None),
], ids=lambda value: type(value).__name__ if isinstance(value, Exception) else None)
def test_each_psycopg_error_is_the_error_that_says_what_happened(error, kind, sqlstate):
    conninfo = "postgresql://support:hunter2@db.example.com/support"
    with pytest.raises(DatabaseUnavailable.__base__) as raised, database_errors(conninfo):
        raise error
    assert type(raised.value) is kind and raised.value.sqlstate == sqlstate
    assert raised.value.__cause__ is error  # chained: psycopg's traceback and diagnostics stay reachable
    assert raised.value.database == "postgresql://support:***@db.example.com/support"
    assert "hunter2" not in str(raised.value) and (sqlstate is None or f"SQLSTATE {sqlstate}" in str(raised.value))


@pytest.mark.parametrize("value, says", [("C-1\x00", "customer holds a NUL character"),
                                         ("C-" + "9" * 300, "customer is 302 characters long; the store takes at most"),
                                         ("", "customer must be a non-empty string"),
                                         ("C-\ud800", "customer holds '\\\\ud800' at character 2, which is not"),
                                         (42, "customer must be a non-empty string")])
def test_an_id_postgresql_cannot_store_is_refused_by_name(value, says):
    with pytest.raises(ValueError, match=says):
        checked_id("customer", value)


@pytest.mark.parametrize("error", [psycopg.ProgrammingError("query has 1 placeholder but 2 parameters were passed"),
                                   psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")],
                         ids=lambda error: type(error).__name__)
def test_a_mistake_psycopg_finds_before_sending_never_reads_as_a_server_that_is_down(error):
    with pytest.raises(QueryFailed) as raised, database_errors("postgresql://support@db.example.com/support"):
        raise error
    assert "was not sent" in str(raised.value) and "Cannot reach" not in str(raised.value)


@pytest.mark.parametrize("value", [float("nan"), -0.1, 1.5, "0.9", None, True])
def test_a_p_remember_that_is_not_a_probability_is_refused_by_name(value):
    with pytest.raises(ValueError, match="p_remember must be a number from 0 to 1"):
        checked_probability("p_remember", value)


@pytest.mark.parametrize("variable, named", [(None, False), ("postgresql://support@db.example.com/other", False),
                                             ("postgresql://support@db.example.com/support", True)],
                         ids=["unset", "another URL", "this URL"])
def test_cannot_reach_names_cookbook_database_url_only_when_the_url_came_from_it(monkeypatch, variable, named):
    if variable is None:
        monkeypatch.delenv("COOKBOOK_DATABASE_URL", raising=False)
    else:
        monkeypatch.setenv("COOKBOOK_DATABASE_URL", variable)
    with pytest.raises(DatabaseUnavailable) as raised, database_errors("postgresql://support@db.example.com/support"):
        raise psycopg.OperationalError("connection failed: Connection refused")
    assert ("COOKBOOK_DATABASE_URL" in str(raised.value)) is named
