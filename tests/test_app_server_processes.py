"""Notebook 09's app servers as processes (memory_cookbook/from_notebooks/app_servers.py): asking for fewer servers
than run gives that many, and an app server's stderr stays apart from the answers on its stdout."""

import pytest

from memory_cookbook.from_notebooks import app_servers

URL = "postgresql://nobody@127.0.0.1:9/nothing"  # a closed port: nothing is ever reached


class FakeProcess:
    def __init__(self):
        self.stdin = self
        self.closed = False

    def poll(self):
        return None

    def close(self):
        self.closed = True


class FakeAppServer:
    """An app server that starts no process: what start_app_servers needs of one."""

    def __init__(self, url, schema="memory_cookbook", *, lesson):
        self.url, self.schema, self.lesson, self.process, self.stopped = url, schema, lesson, FakeProcess(), False
        self.stdin = self.process.stdin

    def stop(self):
        self.stopped = True


@pytest.fixture
def fake_app_servers(monkeypatch):
    monkeypatch.setattr(app_servers, "AppServer", FakeAppServer)
    monkeypatch.setattr(app_servers, "RUNNING", [])
    return app_servers


def test_asking_for_fewer_app_servers_gives_that_many_and_stops_the_others(fake_app_servers):
    four = fake_app_servers.start_app_servers(URL, 4, lesson="jev_memory_lesson")
    assert fake_app_servers.start_app_servers(URL, 4, lesson="jev_memory_lesson") == four  # the same servers
    two = fake_app_servers.start_app_servers(URL, 2, lesson="jev_memory_lesson")
    assert len(two) == 2 and fake_app_servers.RUNNING == two
    assert all(app.stopped for app in four) and not any(app.stopped for app in two)
    other = fake_app_servers.start_app_servers(URL, 2, lesson="another_lesson")  # another app: new servers
    assert all(app.stopped for app in two) and [app.lesson for app in other] == ["another_lesson"] * 2


@pytest.mark.slow  # an app server process (it imports psycopg and the lesson)
def test_an_app_servers_stderr_is_not_read_as_an_answer(tmp_path, monkeypatch):
    lesson = tmp_path / "chatty_lesson.py"  # chatty on stderr, then the server's store fails to connect
    lesson.write_text("import sys\nprint('a warning, not an answer', file=sys.stderr, flush=True)\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # where the app server finds the module it is named
    app = app_servers.AppServer(URL, lesson="chatty_lesson")
    try:
        with pytest.raises(RuntimeError, match=r"app server \d+ stopped:\n") as raised:
            app.send(do="recall", customer="C-1042")
    finally:
        app.process.kill()
        app.process.wait()
    assert "a warning, not an answer" in str(raised.value)
