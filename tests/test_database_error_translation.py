"""What memory_cookbook/postgres/errors.py makes of what PostgreSQL says, with psycopg's own error classes and no
server: a URL's password masked but not its user name; a missing database refused; a lost or failed connection
(SQLSTATE class 08) unavailable; an id of exactly the length limit taken, one character more refused."""

import psycopg
import pytest

from memory_cookbook.postgres.errors import (ID_MAX_LENGTH, DatabaseRefused, DatabaseUnavailable, checked_id,
                                             masked, translated)

URL = "postgresql://desk_owner:s3cret@db.example:5432/desk"


def postgres_error(sqlstate, message):
    """The psycopg error PostgreSQL's SQLSTATE maps to, as psycopg raises it."""
    return psycopg.errors.lookup(sqlstate)(message)


def test_a_urls_password_is_masked_and_its_user_name_kept():
    assert masked(URL) == "postgresql://desk_owner:***@db.example:5432/desk"
    assert masked("host=db user=desk_owner password=s3cret dbname=desk") == \
        "host=db user=desk_owner password=*** dbname=desk"


def test_a_missing_database_is_refused_not_a_failed_query():
    error = translated(postgres_error("3D000", 'database "desk" does not exist'), URL)
    assert isinstance(error, DatabaseRefused) and error.sqlstate == "3D000"
    assert "s3cret" not in str(error) and "desk_owner:***@" in str(error)


@pytest.mark.parametrize("sqlstate", ["08006", "08001", "08003"])
def test_a_connection_class_error_is_unavailable(sqlstate):
    error = translated(postgres_error(sqlstate, "connection to server was lost"), URL)
    assert isinstance(error, DatabaseUnavailable) and error.sqlstate == sqlstate


def test_an_id_of_exactly_the_length_limit_is_taken_and_one_more_character_refused():
    assert checked_id("customer_id", "C" * ID_MAX_LENGTH) == "C" * ID_MAX_LENGTH
    with pytest.raises(ValueError, match=f"customer_id is {ID_MAX_LENGTH + 1} characters long; the store takes at most"
                                         f" {ID_MAX_LENGTH}"):
        checked_id("customer_id", "C" * (ID_MAX_LENGTH + 1))
