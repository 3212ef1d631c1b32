"""Re-recording (tools/cookbook_tools/recording.py, scripts/record_cache.py): the cache is replaced whole or not at
all, unused entries go only with --prune, and recorded_requests.json is rewritten beside the cache."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from memory_cookbook.replay import recorded_requests
import pytest
from memory_cookbook.replay import calls as replay
from conftest import (CACHE_FILE, CANARY_KEY, ROOT, committed_entries, configure, committed_requests, fake_jev,
                      request_call, requests_served)
from cookbook_tools.paths import ENGLISH_NOTEBOOKS, RECORDED_REQUESTS_FILE
from cookbook_tools.recording import arguments, record

PLAIN_CALL = "107f0ab117c2"  # plain routing of T-202 (call 27): only a table cell reads its answer
UNUSED = "0" * 64


def leftovers(folder):
    return sorted(path.name for path in folder.iterdir() if path.name != "json_cache.json")


def replaying(calls_by_notebook):
    """A stand-in for running a notebook: make its calls in this process (against the copy being recorded)."""
    def calls_of(notebook_path):
        calls = calls_by_notebook.get(notebook_path.name, [])
        for call in calls:
            replay.call_jev(*call)
        return calls
    return calls_of


def published_calls():
    return [request_call(request) for request in committed_requests()]


@pytest.fixture
def cache_with_an_unused_entry(tmp_path):
    path = tmp_path / "json_cache.json"
    published = committed_entries()
    path.write_text(json.dumps(published | {UNUSED: next(iter(published.values()))}))  # a real answer, unused key
    return path


def test_without_prune_unused_entries_are_listed_and_kept(lesson, cache_with_an_unused_entry, capsys):
    record(cache_with_an_unused_entry, ENGLISH_NOTEBOOKS, calls_of=replaying({"02_routing.ipynb": published_calls()}))
    assert UNUSED in json.loads(cache_with_an_unused_entry.read_text())
    assert f"unused entry {UNUSED[:12]}… kept (--prune removes it)" in capsys.readouterr().out


def test_a_recording_rewrites_the_recorded_requests_beside_the_cache(lesson, cache_copy):
    record(cache_copy, ENGLISH_NOTEBOOKS, calls_of=replaying({"02_routing.ipynb": published_calls()}))
    assert (cache_copy.parent / "recorded_requests.json").read_text() == RECORDED_REQUESTS_FILE.read_text()
    assert cache_copy.read_bytes() == CACHE_FILE.read_bytes()
    assert leftovers(cache_copy.parent) == ["recorded_requests.json"]


def test_prune_keeps_every_entry_the_recorded_requests_name(lesson, cache_copy):
    record(cache_copy, ENGLISH_NOTEBOOKS, prune=True, calls_of=replaying({}))
    assert cache_copy.read_bytes() == CACHE_FILE.read_bytes()
    recorded = recorded_requests.recorded_requests(cache_copy.with_name(recorded_requests.REQUESTS_NAME))
    assert {request.key for request in recorded} <= set(json.loads(cache_copy.read_text()))


def test_a_recording_of_some_notebooks_leaves_the_recorded_requests_alone(lesson, cache_copy):
    record(cache_copy, ENGLISH_NOTEBOOKS[1:2], calls_of=replaying({"02_routing.ipynb": published_calls()[:1]}))
    assert leftovers(cache_copy.parent) == []


def test_a_recording_that_lacks_a_call_leaves_the_cache_as_it_was(lesson, cache_copy, monkeypatch):
    before = cache_copy.read_bytes()
    configure(monkeypatch, cache_path=cache_copy, key=CANARY_KEY, endpoint="http://127.0.0.1:9")
    with pytest.raises(RuntimeError, match="lacks 1 of the calls"):
        record(cache_copy, ENGLISH_NOTEBOOKS[1:2], calls_of=lambda path: [("jev-1.13.0", '"unseen"', "{}")])
    assert cache_copy.read_bytes() == before and leftovers(cache_copy.parent) == []


@pytest.mark.slow
def test_recording_fills_in_missing_calls_and_prunes_unused_entries(lesson, readers_run, tmp_path, jev_server,
                                                                     monkeypatch):
    published = committed_entries()
    (plain_key,) = [key for key in published if key.startswith(PLAIN_CALL)]
    entries = {key: value for key, value in published.items() if key != plain_key}
    entries[UNUSED] = published[plain_key]  # a real response under a key no notebook asks for
    cache_path = tmp_path / "json_cache.json"
    cache_path.write_text(json.dumps(entries, indent=2))
    configure(monkeypatch, cache_path=cache_path, key=CANARY_KEY, endpoint=jev_server.url)
    record(cache_path, ENGLISH_NOTEBOOKS, prune=True,
           calls_of=replaying({name: run.calls for name, run in readers_run.runs.items()}))
    assert requests_served(jev_server) == 1
    recorded = json.loads(cache_path.read_text())
    assert set(recorded) == set(published)
    assert {key: recorded[key] for key in published if key != plain_key} == {
        key: published[key] for key in published if key != plain_key}


def start_recording(cache_path, server, *flags, key=CANARY_KEY):
    env = {name: value for name, value in os.environ.items() if name not in ("TYPESAFE_API_KEY", "COOKBOOK_CACHE")}
    if key:
        env |= {"TYPESAFE_API_KEY": key, "TYPESAFE_ENDPOINT": server.url}
    return subprocess.Popen([sys.executable, "scripts/record_cache.py", "--cache", str(cache_path), *flags], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


INTERRUPTS = {"SIGINT": signal.SIGINT, "SIGKILL": signal.SIGKILL}


def held_after_the_first_request(server):
    """Make `server` answer its first request, and hold every later one until the returned event is set: the recording
    cannot finish, and write its cache, before the test has sent its signal, however slowly the test's loop runs on a
    busy machine (it did once, under a load of 4.6)."""
    released = threading.Event()
    answering = server.server.RequestHandlerClass

    def do_POST(handler):  # noqa: N802 (http.server's name)
        if answering.cfg.requests >= 1:
            released.wait(timeout=120)
        answering.do_POST(handler)

    server.server.RequestHandlerClass = type("HeldAfterTheFirst", (answering,), {"do_POST": do_POST})
    return released


@pytest.fixture(scope="module")
def interrupted_recordings(tmp_path_factory):
    """A fresh recording of 02 per signal, both started at once (each with its own fake server and copy of the
    cache), each sent its signal as soon as its server has answered a request: {signal name: what it left}."""
    with contextlib.ExitStack() as servers:
        started = {}
        for name in INTERRUPTS:
            cache_path = tmp_path_factory.mktemp(name) / "json_cache.json"
            shutil.copyfile(CACHE_FILE, cache_path)
            server = servers.enter_context(fake_jev())
            held = held_after_the_first_request(server)
            servers.callback(held.set)  # let go before the server stops
            before = cache_path.read_bytes()
            recording = start_recording(cache_path, server, "--fresh", "02_routing.ipynb")
            started[name] = SimpleNamespace(cache_path=cache_path, before=before, server=server, recording=recording,
                                            interrupted=False, held=held)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(run.interrupted or run.recording.poll() is not None
                                                      for run in started.values()):
            for name, run in started.items():
                if not run.interrupted and run.recording.poll() is None and requests_served(run.server) >= 1:
                    run.recording.send_signal(INTERRUPTS[name])
                    run.interrupted = True
                    run.held.set()  # the requests after the signal go on, as they would
            time.sleep(0.05)
        for run in started.values():
            if not run.interrupted:
                run.recording.kill()
            _, run.err = run.recording.communicate(timeout=60)
    return started


@pytest.mark.slow
@pytest.mark.parametrize("interrupt", INTERRUPTS)
def test_an_interrupted_recording_leaves_the_old_cache_intact(interrupted_recordings, interrupt):
    run = interrupted_recordings[interrupt]
    assert run.interrupted, "the recording ended (or never reached the server) before it could be interrupted"
    assert run.recording.returncode != 0
    assert run.cache_path.read_bytes() == run.before
    if interrupt == "SIGINT":
        assert "is unchanged" in run.err
        assert leftovers(run.cache_path.parent) == []


ARGUMENTS_ONLY_CACHE = Path(tempfile.gettempdir()) / "never-written-json_cache.json"  # only the arguments are read


def arguments_error(monkeypatch, *argv, key=CANARY_KEY):
    configure(monkeypatch, cache_path=ARGUMENTS_ONLY_CACHE, key=key)
    with pytest.raises(SystemExit) as raised:
        arguments(list(argv))
    return str(raised.value)


def test_record_cache_refuses_prune_with_some_notebooks(monkeypatch):
    assert "--prune needs every notebook" in arguments_error(monkeypatch, "--prune", "03_gate.ipynb")


def test_record_cache_refuses_an_unknown_notebook(monkeypatch):
    assert "no such notebook: 99_nothing.ipynb" in arguments_error(monkeypatch, "03_gate.ipynb", "99_nothing.ipynb")


@pytest.mark.parametrize("argv", [["99_typo.ipynb"], ["01_tickets.zh.ipynb"], ["--prune", "nope.ipynb"]],
                         ids=["typo", "chinese", "prune"])
def test_record_cache_refuses_a_lone_unknown_notebook_instead_of_recording_all(monkeypatch, argv):
    message = arguments_error(monkeypatch, *argv)
    assert f"no such notebook: {argv[-1]}" in message and "01_tickets.ipynb, 02_routing.ipynb" in message


def test_record_cache_records_every_notebook_when_none_is_named(monkeypatch):
    configure(monkeypatch, cache_path=ARGUMENTS_ONLY_CACHE, key=CANARY_KEY)
    assert arguments([])[1] == ENGLISH_NOTEBOOKS


def test_record_cache_refuses_to_start_without_a_key(monkeypatch):
    assert "set TYPESAFE_API_KEY" in arguments_error(monkeypatch, key=None)
