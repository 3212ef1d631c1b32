"""A key set in the environment never appears in what the cookbook writes or says: notebook outputs, the playground
link, the cache, the ledger, error messages."""

import json

import pytest
import typesafe_sdk
from conftest import CANARY_KEY, PLAYGROUND_LINK, configure, link_share, output_texts, run_earlier_tickets
from memory_cookbook.from_notebooks.stores import SqliteStore

pytestmark = pytest.mark.slow  # the readers' run


@pytest.fixture
def live_session_texts(lesson, monkeypatch, tmp_path, jev_server):
    """What a live session with the canary key writes and says: a recorded cache, memories, ledger, an error."""
    cache_path = tmp_path / "json_cache.json"
    cache_path.write_text("{}")
    configure(monkeypatch, cache_path, key=CANARY_KEY, endpoint=jev_server.url)
    monkeypatch.setattr(lesson.MEMORY, "store", SqliteStore(tmp_path / "memories.sqlite"))
    run_earlier_tickets(lesson)  # live calls, recorded
    texts = [json.dumps(lesson.CALLS), json.dumps(lesson.MEMORY.ledger())]
    monkeypatch.setenv("TYPESAFE_ENDPOINT", jev_server.url + "/no-such-path")
    with pytest.raises(typesafe_sdk.TypeSafeError) as raised:
        lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    texts += [str(raised.value), repr(raised.value), " ".join(getattr(raised.value, "__notes__", []))]
    return texts + [path.read_bytes().decode("utf-8", "replace") for path in tmp_path.iterdir()]


def test_with_a_key_the_notebooks_still_replay_and_send_nothing(readers_run):
    assert readers_run.requests == 0


def test_the_key_appears_nowhere(readers_run, live_session_texts):
    texts = [json.dumps(cell.get("outputs", [])) for run in readers_run.runs.values()
             for cell in [*run.twice.cells, *run.again.cells]]
    links = [link for run in readers_run.runs.values() for notebook in (run.twice, run.again)
             for text in output_texts(notebook) for _, link in PLAYGROUND_LINK.findall(text)]
    assert links, "the playground link was not found"
    decoded = [json.dumps(link_share(link)) for link in links]  # compressed, so read it decoded
    assert len(live_session_texts) > 5
    assert [text[:80] for text in texts + decoded + live_session_texts if CANARY_KEY in text] == []
