"""A key set in the environment never appears in what the cookbook writes or says: notebook outputs, the playground
link, the cache, error messages."""

import json
import re

import pytest
import typesafe_sdk
from conftest import CANARY_KEY, fresh_module
from jevcompat.mock import MockConfig, Running
from lzstring import LZString
from run_notebooks import NOTEBOOK_PATHS, executed_with_calls


@pytest.fixture(scope="module")
def everything_said(tmp_path_factory):
    """Every text the cookbook produced in a session run with the canary key, and the fake server's request count."""
    folder = tmp_path_factory.mktemp("leak")
    cache_path = folder / "json_cache.json"
    cache_path.write_bytes(NOTEBOOK_PATHS[0].parent.parent.joinpath("json_cache.json").read_bytes())
    texts = []
    with Running(MockConfig(key=CANARY_KEY)) as server, pytest.MonkeyPatch.context() as patch:
        for name, value in {"TYPESAFE_API_KEY": CANARY_KEY, "TYPESAFE_ENDPOINT": server.url,
                            "COOKBOOK_CACHE": str(cache_path)}.items():
            patch.setenv(name, value)
        for path in NOTEBOOK_PATHS:
            notebook, _ = executed_with_calls(path)
            texts += [json.dumps(cell.get("outputs", [])) for cell in notebook.cells]
        replayed_requests = server.server.RequestHandlerClass.cfg.requests
        module = fresh_module()
        state = module.later_state("C-1042", "Slow dashboards")
        state["ticket"]["id"] = "T-999"
        module.ask_with_memory(state, module.ROUTE)  # two live calls, recorded in the temporary cache
        texts.append(json.dumps(module.MEMORIES))
        patch.setenv("TYPESAFE_ENDPOINT", server.url + "/no-such-path")
        state["ticket"]["id"] = "T-998"
        with pytest.raises(typesafe_sdk.TypeSafeError) as raised:
            module.ask(state, module.ROUTE)
        texts += [str(raised.value), repr(raised.value), " ".join(getattr(raised.value, "__notes__", []))]
    texts.append(cache_path.read_text())
    texts += [path.read_text() for path in folder.iterdir()]
    return texts, replayed_requests


def test_with_a_key_the_notebooks_still_replay_and_send_nothing(everything_said):
    _, replayed_requests = everything_said
    assert replayed_requests == 0


def test_the_key_appears_nowhere(everything_said):
    texts, _ = everything_said
    links = [link for text in texts for link in re.findall(r"playground#share/([A-Za-z0-9+$-]+)", text)]
    assert links, "the playground link was not found"
    decoded = [LZString.decompressFromEncodedURIComponent(link) for link in links]  # compressed, so read it decoded
    assert [text[:80] for text in texts + decoded if CANARY_KEY in text] == []
