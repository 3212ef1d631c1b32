"""scripts/record_cache.py over real HTTP to jevcompat's fake server: the cache is replaced whole or not at all."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import CACHE_FILE, CANARY_KEY, ROOT, requests_served

PLAIN_CALL = "107f0ab117c2"  # plain routing of T-202 (call 27): only a table cell reads its answer
UNUSED = "0" * 64


def start_recording(cache_path, server, *flags, key=CANARY_KEY):
    env = {name: value for name, value in os.environ.items() if name not in ("TYPESAFE_API_KEY", "COOKBOOK_CACHE")}
    if key:
        env |= {"TYPESAFE_API_KEY": key, "TYPESAFE_ENDPOINT": server.url}
    return subprocess.Popen([sys.executable, "scripts/record_cache.py", "--cache", str(cache_path), *flags], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def leftovers(folder):
    return sorted(path.name for path in folder.iterdir() if path.name != "json_cache.json")


def test_recording_fills_in_missing_calls_and_prunes_unused_entries(tmp_path, jev_server):
    published = json.loads(CACHE_FILE.read_text())
    (plain_key,) = [key for key in published if key.startswith(PLAIN_CALL)]
    entries = {key: value for key, value in published.items() if key != plain_key}
    entries[UNUSED] = published[plain_key]  # a real response under a key no notebook asks for
    cache_path = tmp_path / "json_cache.json"
    cache_path.write_text(json.dumps(entries, indent=2))
    recording = start_recording(cache_path, jev_server, "--prune")
    out, err = recording.communicate(timeout=300)
    assert recording.returncode == 0, err
    assert requests_served(jev_server) == 1
    assert f"unused entry {UNUSED[:12]}… removed" in out
    recorded = json.loads(cache_path.read_text())
    assert set(recorded) == set(published)
    assert {key: recorded[key] for key in published if key != plain_key} == {
        key: published[key] for key in published if key != plain_key}
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("interrupt", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_an_interrupted_recording_leaves_the_old_cache_intact(cache_copy, jev_server, interrupt):
    before = cache_copy.read_bytes()
    recording = start_recording(cache_copy, jev_server, "--fresh", "02_routing.ipynb", "03_gate.ipynb")
    deadline = time.monotonic() + 120
    while requests_served(jev_server) < 1 and recording.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert recording.poll() is None, "the recording ended before it could be interrupted"
    recording.send_signal(interrupt)
    _, err = recording.communicate(timeout=60)
    assert recording.returncode != 0
    assert cache_copy.read_bytes() == before
    if interrupt == signal.SIGINT:
        assert "is unchanged" in err
        assert leftovers(cache_copy.parent) == []


def test_recording_without_a_key_refuses_and_touches_nothing(cache_copy, jev_server):
    before = cache_copy.read_bytes()
    recording = start_recording(cache_copy, jev_server, key=None)
    _, err = recording.communicate(timeout=60)
    assert recording.returncode == 1 and "set TYPESAFE_API_KEY" in err
    assert cache_copy.read_bytes() == before and requests_served(jev_server) == 0
