"""Plumbing for PostgresStore's pool of connections: the time limits each connection starts with, and a connection
handed out only when the server has not closed it meanwhile (a restart, a terminated backend), which is seen without a
round trip. When the pool gets no connection in time, a connection of its own, tried once, names the reason the pool
only logged (too many connections, a wrong password, a server gone)."""

import select
from contextlib import contextmanager

import psycopg
from psycopg_pool import PoolTimeout

__all__ = ["closed_by_server", "connection_from", "live_connection", "session_options"]


def session_options(conninfo, **limits):
    """libpq's `options` for the store's connections: each limit (seconds) as a setting. Options already in
    `conninfo` come after, so that they win."""
    settings = [f"-c {name}={round(seconds * 1000)}" for name, seconds in limits.items()]
    given = psycopg.conninfo.conninfo_to_dict(conninfo).get("options")
    return " ".join([*settings, *([given] if given else [])])


def closed_by_server(db):
    """Whether the server closed this idle connection: an idle connection has nothing to read, unless the server said
    goodbye (its termination message, or the end of the stream). Asked of the socket, not the server."""
    if db.closed or db.pgconn.status != psycopg.pq.ConnStatus.OK:
        return True
    if hasattr(select, "poll"):
        poll = select.poll()
        poll.register(db.pgconn.socket, select.POLLIN)
        return bool(poll.poll(0))
    return bool(select.select([db.pgconn.socket], [], [], 0)[0])


@contextmanager
def live_connection(pool):
    """A connection of `pool` that the server has not closed (closed ones are dropped, and the pool opens new ones),
    back to the pool at the end of the block."""
    db = connection_from(pool)
    for _ in range(pool.max_size):  # at most every connection the pool holds was closed (a server restart)
        if not closed_by_server(db):
            break
        db.close()
        pool.putconn(db)
        db = connection_from(pool)
    try:
        yield db
    finally:
        pool.putconn(db)


def connection_from(pool):
    try:
        return pool.getconn()
    except PoolTimeout as timeout:
        try:  # what the pool met and only logged, said by a connection of our own
            psycopg.connect(pool.conninfo, **{**pool.kwargs, "connect_timeout": max(2, round(pool.timeout))}).close()
        except psycopg.Error as refused:
            raise refused from timeout
        raise PoolTimeout(f"{timeout}; a new connection, tried then, succeeded: every connection of the pool was"
                          " in use for the whole timeout") from timeout
