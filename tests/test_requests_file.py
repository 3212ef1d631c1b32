"""recorded_requests.json beside the cache in use, missing, damaged or out of step with that cache: one DamagedFile
from the checked reader, naming the file and how to get it back, wherever the file is needed (notebook 05's explorer
cells, a CacheMiss's explanation, the playground links), and the explorer's before anything is drawn."""

import json
import shutil

import nbformat
import pytest
from conftest import committed_entries, configure

from cookbook_tools import links
from cookbook_tools.paths import NOTEBOOKS, RECORDED_REQUESTS_FILE
from memory_cookbook.replay import cache_miss
from memory_cookbook import checked_files
from memory_cookbook.checked_files import DamagedFile
from memory_cookbook.classroom.explorer import plt

EXPLORER_NOTEBOOK = NOTEBOOKS / "05_probe_sequence.ipynb"
REQUESTS = json.loads(RECORDED_REQUESTS_FILE.read_text())


def explorer_cells():
    """Notebook 05's setup cell and its cells that draw the recorded run (the explorer, the static chart)."""
    code = [cell.source for cell in nbformat.read(EXPLORER_NOTEBOOK, as_version=4).cells if cell.cell_type == "code"]
    drawing = [source for source in code if "recorded_routing_calls(" in source and "import" not in source]
    assert len(drawing) == 2, "05 has two cells that draw the recorded run: the explorer and the static chart"
    return [code[0], *drawing]


def run_explorer_cells():
    """Run 05's explorer cells in this process, as its kernel would: the DamagedFile the first raises, and whether
    anything was drawn before it."""
    namespace = {}
    figures_before = plt.get_fignums()
    with pytest.raises(DamagedFile) as raised:
        for source in explorer_cells():
            exec(compile(source, EXPLORER_NOTEBOOK.name, "exec"), namespace)
    drawn = [number for number in plt.get_fignums() if number not in figures_before]
    plt.close("all")
    return str(raised.value), drawn


@pytest.fixture
def own_cache(tmp_path, monkeypatch, lesson):
    """A copy of the committed cache in a folder of its own, in use (COOKBOOK_CACHE), with no requests file yet."""
    cache = tmp_path / "json_cache.json"
    cache.write_text(json.dumps(committed_entries()))
    configure(monkeypatch, cache_path=cache)
    return cache


def test_05s_explorer_cells_stop_on_a_missing_requests_file_naming_it_and_the_fix_before_drawing(own_cache):
    message, drawn = run_explorer_cells()
    requests_file = own_cache.with_name("recorded_requests.json")
    assert message.startswith(f"{requests_file} is missing: copy beside the cache the recorded_requests.json that was"
                              f" written with it (for a copy of the committed cache, {RECORDED_REQUESTS_FILE})")
    assert drawn == []


def test_05s_explorer_cells_stop_on_a_damaged_requests_file(own_cache):
    own_cache.with_name("recorded_requests.json").write_text(RECORDED_REQUESTS_FILE.read_text()[:500])
    message, drawn = run_explorer_cells()
    assert "recorded_requests.json is not valid JSON" in message and "write it again with scripts/record_cache.py" in \
        message and drawn == []


def test_05s_explorer_cells_stop_when_the_cache_lacks_an_answer_its_requests_file_names(own_cache):
    shutil.copyfile(RECORDED_REQUESTS_FILE, own_cache.with_name("recorded_requests.json"))
    entries = committed_entries()
    del entries[REQUESTS[-1]["key"]]
    own_cache.write_text(json.dumps(entries))
    message, drawn = run_explorer_cells()
    assert message.startswith(f"{own_cache.with_name('recorded_requests.json')} is out of step with the cache"
                              f" {own_cache}, which has no answer to 1 of its 32 requests (the first: questions")
    assert drawn == []


def test_05s_explorer_cells_stop_when_an_answer_is_not_the_one_its_requests_file_recorded(own_cache):
    shutil.copyfile(RECORDED_REQUESTS_FILE, own_cache.with_name("recorded_requests.json"))
    entries = committed_entries()
    entries[REQUESTS[0]["key"]]["usage"]["input_tokens"] += 1  # still a valid answer, not the one recorded
    own_cache.write_text(json.dumps(entries))
    message, drawn = run_explorer_cells()
    assert "is out of step with the cache" in message and "about ticket T-201 is not the one it recorded" in message
    assert drawn == []


def test_05s_explorer_cells_stop_when_the_requests_file_names_no_routing_call(own_cache):
    own_cache.with_name("recorded_requests.json").write_text(json.dumps(
        [request for request in REQUESTS if "team" not in request["questions"]]))
    message, drawn = run_explorer_cells()
    assert "names no routing call of a later message" in message and drawn == []


def test_the_committed_requests_file_is_restored_from_git():
    assert checked_files.requests_fix(RECORDED_REQUESTS_FILE).startswith(
        "get the committed file back with `git checkout -- recorded_requests.json`")


def off_script(lesson):
    state = lesson.later_state("C-1042", "Slow dashboards")
    state["ticket"]["id"] = "T-999"  # a request the cache lacks
    return state


def test_a_cache_miss_with_no_requests_file_gives_its_error_and_stays_a_cache_miss(own_cache, lesson):
    with pytest.raises(cache_miss.CacheMiss) as raised:
        lesson.ask(off_script(lesson), lesson.ROUTE)
    with pytest.raises(DamagedFile) as requests_error:
        links.recorded_requests(own_cache.with_name("recorded_requests.json"))
    assert f"It cannot be compared with the published run's requests: {requests_error.value}\n" in str(raised.value)
    assert "TYPESAFE_API_KEY" in str(raised.value)


def test_a_damaged_requests_file_stops_the_first_call_with_its_error(own_cache, lesson):
    requests_file = own_cache.with_name("recorded_requests.json")
    requests_file.write_text(RECORDED_REQUESTS_FILE.read_text()[:500])
    with pytest.raises(DamagedFile) as requests_error:
        links.recorded_requests(requests_file)
    with pytest.raises(DamagedFile) as raised:  # the cache's digests cannot be checked: it does not open
        lesson.ask(off_script(lesson), lesson.ROUTE)
    assert str(raised.value) == str(requests_error.value)


@pytest.mark.parametrize("damage", ["missing", "out of step"])
def test_the_playground_links_script_stops_with_the_requests_files_error(own_cache, capsys, damage):
    if damage == "out of step":
        own_cache.with_name("recorded_requests.json").write_text(json.dumps(
            REQUESTS + [REQUESTS[0] | {"key": "not in the cache"}]))
    with pytest.raises(SystemExit) as stopped:
        links.playground_links()
    assert str(stopped.value).startswith(f"playground_links: {own_cache.with_name('recorded_requests.json')} is ")
    assert "write it again with scripts/record_cache.py" in str(stopped.value)
    assert capsys.readouterr().out == ""  # no half table
