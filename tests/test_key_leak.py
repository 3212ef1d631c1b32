"""A key set in the environment never appears in what the cookbook writes or says: notebook outputs, the playground
link, the cache, the ledger, error messages."""

import json
import re

import pytest
import typesafe_sdk
from conftest import CANARY_KEY, configured_module, run_earlier_tickets
from jevcompat.mock import MockConfig, Running
from lzstring import LZString


@pytest.fixture(scope="module")
def live_session_texts(tmp_path_factory):
    """What a live session with the canary key writes and says: a recorded cache, memories, ledger, an error."""
    folder = tmp_path_factory.mktemp("leak")
    cache_path = folder / "json_cache.json"
    cache_path.write_text("{}")
    with Running(MockConfig(key=CANARY_KEY)) as server, pytest.MonkeyPatch.context() as patch:
        module = configured_module(patch, cache_path, key=CANARY_KEY, endpoint=server.url)
        module.STORE = module.SqliteStore(folder / "memories.sqlite")
        run_earlier_tickets(module)  # live calls, recorded
        texts = [json.dumps(module.LEDGER), json.dumps(module.STORE.ledger())]
        patch.setenv("TYPESAFE_ENDPOINT", server.url + "/no-such-path")
        state = module.later_state("C-1042", "Slow dashboards")
        with pytest.raises(typesafe_sdk.TypeSafeError) as raised:
            module.ask(state, module.ROUTE)
        texts += [str(raised.value), repr(raised.value), " ".join(getattr(raised.value, "__notes__", []))]
    texts += [path.read_bytes().decode("utf-8", "replace") for path in folder.iterdir()]
    return texts


def test_with_a_key_the_notebooks_still_replay_and_send_nothing(second_run):
    assert second_run.requests == 0


def test_the_key_appears_nowhere(second_run, live_session_texts):
    texts = [json.dumps(cell.get("outputs", [])) for run in second_run.runs.values()
             for cell in [*run.twice.cells, *run.again.cells]]
    links = [link for text in texts for link in re.findall(r"playground#share/([A-Za-z0-9+$-]+)", text)]
    assert links, "the playground link was not found"
    decoded = [LZString.decompressFromEncodedURIComponent(link) for link in links]  # compressed, so read it decoded
    assert len(live_session_texts) > 5
    assert [text[:80] for text in texts + decoded + live_session_texts if CANARY_KEY in text] == []
