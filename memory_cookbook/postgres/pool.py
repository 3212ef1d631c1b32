"""Plumbing for PostgresStore's pools of connections, with psycopg_pool's own callbacks: the time limits each
connection starts with; the check= callback, which refuses a connection the server has closed meanwhile (a restart, a
terminated backend), seen without a round trip; the reset= callback, which gives a lent connection back as a new
session. When the pool gets no connection in time, a connection of its own, tried once, names the reason the pool only
logged (too many connections, a wrong password, a server gone)."""

import select
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

__all__ = ["NEW_SESSION", "closed_by_server", "connection_pool", "new_session", "pooled", "session_options"]


def session_options(conninfo: str, **limits: float) -> str:
    """libpq's `options` for the store's connections: each limit (seconds) as a setting. Options already in
    `conninfo` come after, so that they win."""
    settings = [f"-c {name}={round(seconds * 1000)}" for name, seconds in limits.items()]
    given = psycopg.conninfo.conninfo_to_dict(conninfo).get("options")
    return " ".join([*settings, *([str(given)] if given else [])])


def closed_by_server(db: psycopg.Connection[Any]) -> bool:
    """Whether the server closed this idle connection: an idle connection has nothing to read, unless the server said
    goodbye (its termination message, or the end of the stream). Asked of the socket, not the server."""
    if db.closed or db.pgconn.status != psycopg.pq.ConnStatus.OK:
        return True
    if hasattr(select, "poll"):
        poll = select.poll()
        poll.register(db.pgconn.socket, select.POLLIN)
        return bool(poll.poll(0))
    return bool(select.select([db.pgconn.socket], [], [], 0)[0])


# What DISCARD ALL does, but DEALLOCATE ALL and DISCARD PLANS: psycopg keeps its prepared statements, and does not see
# them deallocated when DISCARD ALL runs on a connection a second time.
NEW_SESSION = ("CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; UNLISTEN *; SELECT pg_advisory_unlock_all();"
               " DISCARD TEMP; DISCARD SEQUENCES")


def new_session(db: psycopg.Connection[Any]) -> None:
    """The reset= callback: a lent connection comes back to its pool as a new session starts, whatever its borrower
    did: session settings (SET memory_cookbook.customer, SET ROLE), cursors, temporary tables, advisory locks, LISTEN.
    The limits the connection was opened with stay: they are its session's defaults."""
    db.autocommit = True
    db.execute(NEW_SESSION)


def connection_pool(conninfo: str, reset: Callable[[psycopg.Connection[Any]], None] | None = None,
                    **options: Any) -> ConnectionPool[Any]:
    """A psycopg_pool ConnectionPool whose check= callback refuses a connection the server has closed, and then has
    the pool check the ones it holds (a server restart closes them all), so that the pool's next try, after its
    back-off, gets a new connection."""
    def refuse_closed(db: psycopg.Connection[Any]) -> None:
        if closed_by_server(db):
            db.close()  # the pool replaces it
            pool.check()
            raise psycopg.OperationalError("the server closed this pooled connection")

    pool = ConnectionPool(conninfo, check=refuse_closed, reset=reset, open=True, **options)
    return pool


@contextmanager
def pooled(pool: ConnectionPool[Any]) -> Iterator[psycopg.Connection[Any]]:
    """A connection of `pool`, back to it at the end of the block. A pool timeout is said with the reason the pool
    met and only logged."""
    try:
        db = pool.getconn()
    except PoolTimeout as timeout:
        try:  # what the pool met and only logged, said by a connection of our own
            kwargs = pool.kwargs() if callable(pool.kwargs) else dict(pool.kwargs or {})
            conninfo = pool.conninfo() if callable(pool.conninfo) else pool.conninfo
            psycopg.connect(conninfo, **{**kwargs, "connect_timeout": max(2, round(pool.timeout))}).close()
        except psycopg.Error as refused:
            raise refused from timeout
        raise PoolTimeout(f"{timeout}; a new connection, tried then, succeeded: every connection of the pool was"
                          " in use for the whole timeout") from timeout
    try:
        yield db
    finally:
        pool.putconn(db)
