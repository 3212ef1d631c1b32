"""memory_cookbook/lesson_database.py: notebook 09 on a server it did not start works only in a schema it creates, and
drops only that; a refusal is shown only as a role that is really another than the owner. On the session's server
(slow: it takes seconds to start)."""

import psycopg
import pytest
from psycopg import sql

from memory_cookbook import lesson_database
from memory_cookbook.lesson_database import SchemaInUse, app_role, drop_lesson_schema, lesson_schema

pytestmark = pytest.mark.slow


def schemas(url):
    with psycopg.connect(url) as db:
        return {name for (name,) in db.execute("SELECT nspname FROM pg_namespace")}


def test_a_schema_that_was_there_is_refused_and_left_and_its_own_is_made_then_dropped(postgres_server, monkeypatch):
    url = postgres_server.url
    monkeypatch.setenv(lesson_database.LESSON_SCHEMA_VARIABLE, "a_desks_schema")
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE SCHEMA a_desks_schema")
        db.execute("CREATE TABLE a_desks_schema.kept AS SELECT 1 AS row")
    try:
        with pytest.raises(SchemaInUse, match="'a_desks_schema' is already in the database"):
            lesson_schema(url, own_server=False)
        assert drop_lesson_schema(url, "a_desks_schema").startswith("nothing")
        assert "a_desks_schema" in schemas(url)
    finally:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("DROP SCHEMA a_desks_schema CASCADE")
    monkeypatch.setenv(lesson_database.LESSON_SCHEMA_VARIABLE, "lessons_own")
    assert lesson_schema(url, own_server=False) == lesson_schema(url, own_server=False) == "lessons_own"  # run twice
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE TABLE lessons_own.made AS SELECT 1 AS row")
    said = drop_lesson_schema(url, "lessons_own")
    assert said == drop_lesson_schema(url, "lessons_own") == "schema lessons_own, with its 1 relation and 0 functions"
    assert "lessons_own" not in schemas(url)


@pytest.fixture
def superuser_url(postgres_server):
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute("CREATE ROLE cookbook_super LOGIN SUPERUSER")
    yield psycopg.conninfo.make_conninfo(postgres_server.url, user="cookbook_super")
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute("DROP ROLE cookbook_super")


def test_only_another_role_than_the_owner_is_a_separate_app_role(postgres_server, app_role_url, superuser_url):
    url = postgres_server.url
    assert app_role(url, None) == (url, "postgres", "no separate app role given (COOKBOOK_APP_DATABASE_URL is not"
                                                    " set), so the app servers connect as the owner, postgres")
    assert app_role(url, url).not_separate.endswith("it is the owner")
    assert app_role(url, superuser_url).not_separate.endswith("it is a superuser")
    assert app_role(url, app_role_url) == (app_role_url, "cookbook_app", None)
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(sql.SQL("GRANT postgres TO cookbook_app"))
        try:
            assert app_role(url, app_role_url).not_separate.endswith("a member of the owner's role, postgres")
        finally:
            db.execute(sql.SQL("REVOKE postgres FROM cookbook_app"))
