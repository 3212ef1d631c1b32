"""The live path, over real HTTP, against jevcompat's local fake Jev-compatible server (its answers are hashes, not a
model: they stay in temporary caches and never reach a notebook or a figure)."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
import tenacity.nap
import typesafe_sdk
from conftest import CANARY_KEY, committed_entries, configure, requests_served, unseen_state

pytestmark = pytest.mark.slow  # each test starts a local HTTP server


@pytest.fixture
def live(lesson, monkeypatch, cache_copy, jev_server):
    """The lesson with the canary key, the fake server as TYPESAFE_ENDPOINT and a temporary cache."""
    configure(monkeypatch, cache_copy, key=CANARY_KEY, endpoint=jev_server.url)
    return lesson


def test_a_cache_miss_goes_over_http_and_is_recorded(live, jev_server, cache_copy):
    response = live.ask(unseen_state(live), live.ROUTE)
    assert requests_served(jev_server) == 1
    assert response.choices["team"].choice in live.ROUTE["team"].criteria
    recorded = json.loads(cache_copy.read_text())
    (new_key,) = set(recorded) - set(committed_entries())
    assert typesafe_sdk.SystemOneResponse.model_validate(recorded[new_key]) == response


def test_the_same_call_again_is_a_replay_with_no_request(live, jev_server):
    first = live.ask(unseen_state(live), live.ROUTE)
    second = live.ask(unseen_state(live), live.ROUTE)
    assert requests_served(jev_server) == 1
    assert second == first


def test_a_recorded_call_is_replayed_even_with_a_key(live, jev_server):
    assert live.routed(live.ask(live.later_state("C-1042", "Slow dashboards"), live.ROUTE)) == "cloud_ops 0.80"
    assert requests_served(jev_server) == 0


def test_the_wrapper_sends_both_requests(live, jev_server):
    live.ask_with_memory(unseen_state(live), live.ROUTE)
    assert requests_served(jev_server) == 2
    assert [list(json.loads(call.questions_json)) for call in live.CALLS] == [["team"], ["remember"]]
    assert [call.source for call in live.CALLS] == ["live", "live"]


def test_the_ledger_says_live_for_a_live_call_and_replay_for_the_same_call_again(live, jev_server):
    live.MEMORY.remember_at = 1  # nothing the fake server answers is saved: the same call again (the fixture resets it)
    for source in ("live", "replay"):
        live.ask_with_memory(unseen_state(live), live.ROUTE)
        assert (live.MEMORY.ledger()[-1]["source"], requests_served(jev_server)) == (source, 2)


class AlwaysFails(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"detail": {"error_type": "internal_error", "message": "boom"}}'
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def failing_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), AlwaysFails)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def closed_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def retry_waits(monkeypatch):
    """The waits typesafe-sdk's retries ask tenacity for, recorded instead of slept (tenacity's own mock point)."""
    waits = []
    monkeypatch.setattr(tenacity.nap, "time", SimpleNamespace(sleep=waits.append))
    return waits


def live_error(module, monkeypatch, cache_copy, endpoint, key=CANARY_KEY):
    configure(monkeypatch, cache_copy, key=key, endpoint=endpoint)
    before = cache_copy.read_bytes()
    with pytest.raises(typesafe_sdk.TypeSafeError) as raised:
        module.ask(unseen_state(module), module.ROUTE)
    assert cache_copy.read_bytes() == before
    return raised.value


def test_a_server_error_is_the_sdks_own_after_its_retries_and_says_what_was_asked(lesson, monkeypatch, cache_copy,
                                                                                   failing_endpoint, retry_waits):
    error = live_error(lesson, monkeypatch, cache_copy, failing_endpoint)
    assert isinstance(error, typesafe_sdk.TypeSafeInternalServerError) and len(retry_waits) == 2
    assert "questions ['team'] about ticket T-999" in " ".join(error.__notes__)


def test_a_closed_port_is_a_connection_error_after_the_sdks_retries_that_says_what_was_asked(lesson, monkeypatch,
                                                                                              cache_copy, retry_waits):
    error = live_error(lesson, monkeypatch, cache_copy, f"http://127.0.0.1:{closed_port()}")
    assert isinstance(error, typesafe_sdk.TypeSafeAPIConnectionError) and len(retry_waits) == 2
    assert "questions ['team'] about ticket T-999" in " ".join(error.__notes__)


def test_a_wrong_key_is_an_authentication_error_that_does_not_echo_the_key(lesson, monkeypatch, cache_copy, jev_server):
    wrong_key = CANARY_KEY + "-wrong"
    error = live_error(lesson, monkeypatch, cache_copy, jev_server.url, key=wrong_key)
    assert isinstance(error, typesafe_sdk.TypeSafeAuthenticationError)
    said = str(error) + " ".join(error.__notes__) + repr(error.args)
    assert CANARY_KEY not in said


def test_a_crash_while_recording_leaves_the_old_cache_whole(live, cache_copy, monkeypatch):
    before = cache_copy.read_bytes()

    def crash(*args):
        raise OSError("the machine stopped halfway")

    monkeypatch.setattr("os.replace", crash)
    with pytest.raises(OSError, match="halfway"):
        live.ask(unseen_state(live), live.ROUTE)
    assert cache_copy.read_bytes() == before
    assert sorted(path.name for path in cache_copy.parent.iterdir()) == [".json_cache.json.lock", "json_cache.json"]


def test_recording_leaves_no_temporary_file(live, cache_copy):
    live.ask(unseen_state(live), live.ROUTE)
    assert sorted(path.name for path in cache_copy.parent.iterdir()) == [".json_cache.json.lock", "json_cache.json"]
