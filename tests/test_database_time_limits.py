"""No wait on the memory database is without a limit, even against a host that accepts connections and never
answers: opening a store gives up after its `timeout`, and so does the connection the pool makes to say why it had
no connection in time. No PostgreSQL needed; slow: libpq's shortest connect_timeout is 2 s."""

import socket
import threading
import time

import pytest

from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.postgres.errors import DatabaseUnavailable
from memory_cookbook.postgres.pool import connection_pool, pooled

pytestmark = pytest.mark.slow


@pytest.fixture
def silent_host():
    """A URL whose host accepts each connection and never says a word."""
    listener, accepted = socket.create_server(("127.0.0.1", 0)), []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"postgresql://desk:Pw-4471x@127.0.0.1:{listener.getsockname()[1]}/support"
    stop.set()
    thread.join()
    for connection in [listener, *accepted]:
        connection.close()


def borrowed(pool):
    with pooled(pool):
        pass


def test_no_connection_to_a_host_that_never_answers_waits_past_its_limit(silent_host):
    """Opening a store, and the connection that explains a pool's timeout, side by side (each waits 2 s)."""
    pool = connection_pool(silent_host, min_size=0, max_size=1, timeout=0.1, kwargs={"connect_timeout": 2})
    raised, calls = {}, {"open": lambda: PostgresStore(silent_host, timeout=2), "explain": lambda: borrowed(pool)}

    def run(name):
        try:
            calls[name]()
        except BaseException as error:
            raised[name] = error

    try:
        threads = [threading.Thread(target=run, args=(name,), daemon=True) for name in calls]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, 8 - (time.monotonic() - started)))
        assert [name for name, thread in zip(calls, threads, strict=True) if thread.is_alive()] == []
        assert time.monotonic() - started < 6
    finally:
        pool.close(timeout=5)
    assert isinstance(raised["open"], DatabaseUnavailable) and "Pw-4471x" not in str(raised["open"])
    assert "timeout expired" in str(raised["explain"])
