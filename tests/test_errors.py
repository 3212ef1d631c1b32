"""Bad input gets one clear error that names the problem and the fix, before any network attempt, and leaves the
cache and the saved memories as they were."""

import json

from memory_cookbook.replay import cache_file
import pytest
from conftest import CACHE_FILE, CANARY_KEY, configure


RESTORE = "git checkout json_cache.json"


@pytest.mark.parametrize("text, problem", [
    (CACHE_FILE.read_text()[:5000], "is not valid JSON"),
    ("this is not JSON", "is not valid JSON"),
    ("", "is empty (not valid JSON)"),
    ('["a", "list"]', "is not a JSON object of responses"),
    ('{"abc123": {"model": "jev-1.13.0"}}', "entry abc123… is not a SystemOneResponse (usage: Field required)"),
    ('{"abc123": {"model": "jev-1.13.0", "usage": {}, "answers": {"team": {"type": "choice"}}}}',
     "entry abc123… is not a SystemOneResponse (answers.team.choice.choice: Field required)"),
])
def test_a_broken_cache_file_says_what_is_wrong_and_how_to_restore_it(lesson, monkeypatch, tmp_path, text, problem):
    broken = tmp_path / "json_cache.json"
    broken.write_text(text)
    configure(monkeypatch, broken)
    with pytest.raises(cache_file.CacheError) as raised:
        lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert problem in str(raised.value) and RESTORE in str(raised.value)
    assert broken.read_text() == text


def test_a_missing_cache_file_with_no_key_says_how_to_restore_or_record(lesson, monkeypatch, tmp_path):
    configure(monkeypatch, tmp_path / "missing.json")
    with pytest.raises(cache_file.CacheError, match=f"There is no cache file at .*{RESTORE}.*set TYPESAFE_API_KEY"):
        lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)
    assert not (tmp_path / "missing.json").exists()


def test_a_missing_cache_file_with_a_key_starts_an_empty_cache(monkeypatch, tmp_path):
    configure(monkeypatch, tmp_path / "new.json", key=CANARY_KEY)
    assert cache_file.open_cache(cache_file.cache_path())._data == {}


def test_cookbook_cache_pointing_at_a_folder_says_so(lesson, monkeypatch, tmp_path):
    configure(monkeypatch, tmp_path)
    with pytest.raises(cache_file.CacheError, match="is a folder: point COOKBOOK_CACHE at a JSON file"):
        lesson.ask(lesson.later_state("C-1042", "Slow dashboards"), lesson.ROUTE)


@pytest.fixture
def guarded(lesson, monkeypatch, cache_copy):
    """The lesson with a key and an endpoint nobody listens on, with one memory saved: a request would fail with a
    connection error, not the error the test expects."""
    configure(monkeypatch, cache_copy, key=CANARY_KEY, endpoint="http://127.0.0.1:9")
    lesson.ask_with_memory(lesson.ticket_state(lesson.EARLIER[0]), lesson.ROUTE)
    before = (json.dumps(dict(lesson.MEMORIES)), cache_copy.read_bytes(), len(lesson.CALLS))
    yield lesson
    assert (json.dumps(dict(lesson.MEMORIES)), cache_copy.read_bytes(), len(lesson.CALLS)) == before


@pytest.mark.parametrize("call", ["ask", "ask_with_memory"])
def test_a_state_that_is_not_json_says_so(guarded, call):
    state = {**guarded.later_state("C-1042", "Slow dashboards"), "tags": {"urgent"}}
    with pytest.raises(TypeError, match=r"The state must be JSON-serialisable \(Object of type set"):
        getattr(guarded, call)(state, guarded.ROUTE)


@pytest.mark.parametrize("questions", [
    {"team": {"type": "choice", "criteria": {"a": None}}},
    {"team": "Which team?"},
    {},
    "team",
    [("team", None)],
])
@pytest.mark.parametrize("call", ["ask", "ask_with_memory"])
def test_questions_that_are_not_typesafe_questions_say_so(guarded, call, questions):
    with pytest.raises(TypeError, match="questions must be a non-empty dict {question_id: typesafe_sdk Choice, Noul"):
        getattr(guarded, call)(guarded.later_state("C-1042", "Slow dashboards"), questions)


@pytest.mark.parametrize("threshold", [1.5, -0.1, "0.5", None])
def test_remember_at_outside_0_to_1_says_so_when_it_is_set(guarded, threshold):
    with pytest.raises(ValueError, match="remember_at is a probability between 0 and 1; got"):
        guarded.MEMORY.remember_at = threshold
    assert guarded.MEMORY.remember_at == 0.5
