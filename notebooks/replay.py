"""How the cookbook's calls reach Jev: replayed from the recorded cache, or asked live with a key.

This is the machinery beside the lesson, hand-written and tested in tests/test_replay.py; the lesson's own code is
exported from the notebooks into basic_memory.py. One concern, in four parts:

- the cache file: checked before use (CacheError), and shared safely: a write takes a lock, merges with what other
  processes recorded meanwhile, and replaces the file in one atomic rename;
- `call_jev`: one request, replayed, or asked live with a key, through `_system_one`, the function the published cache
  was recorded with (its name is part of every cache key); offline, a call the cache lacks raises CacheMiss;
- `explain_miss`: what a CacheMiss says: the nearest request of the published run (read from
  recorded_requests.json beside the cache, written by scripts/record_cache.py), and how this one differs from it;
- `playground_link` and `cache_key`: any request as a TypeSafe playground link, and as the key it is recorded under.
"""

import contextlib
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import NamedTuple

from cooksafe import JsonCache, make_playground_link
from cooksafe.cache import MAX_KEY_CHARS
from filelock import FileLock
from pydantic import ValidationError
from typesafe_sdk import Choice, Noul, Score, SystemOneResponse, TypeSafeClient, TypeSafeError

HERE = Path(__file__).resolve().parent
REQUESTS_NAME = "recorded_requests.json"  # the published run's requests, beside the cache they were recorded into
LIVE_CALLS = []  # the calls this session sent to Jev live, not replayed


# The cache file

class CacheError(RuntimeError):
    """The cache file can't be used as it is; the message says why and how to fix it."""


def check_cache_file(path):
    """Raise a CacheError naming the problem and the fix unless `path` holds SystemOneResponse entries (or may be
    created: it is missing and a key can record into it)."""
    fix = "restore the committed cache with `git checkout json_cache.json`, or point COOKBOOK_CACHE at a good file"
    if path.is_dir():
        raise CacheError(f"The cache {path} is a folder: point COOKBOOK_CACHE at a JSON file.")
    if not path.exists() and not os.environ.get("TYPESAFE_API_KEY"):
        raise CacheError(f"There is no cache file at {path}: {fix}, or set TYPESAFE_API_KEY to record a new one.")
    try:
        entries = json.loads(path.read_text()) if path.exists() else {}
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CacheError(f"The cache {path} is not valid JSON ({error}): {fix}.") from None
    if not isinstance(entries, dict):
        raise CacheError(f"The cache {path} is not a JSON object of responses: {fix}.")
    for key, raw in entries.items():
        try:
            SystemOneResponse.model_validate(raw)
        except ValidationError as error:
            problem = error.errors()[0]
            raise CacheError(f"In the cache {path}, entry {key[:12]}… is not a SystemOneResponse"
                             f" ({'.'.join(map(str, problem['loc']))}: {problem['msg']}): {fix}.") from None


def cache_text(entries, indent=2):
    """A cache file's text as cooksafe.JsonCache writes it: keys sorted (not recursively), two-space indent."""
    return json.dumps({key: entries[key] for key in sorted(entries)}, indent=indent)


def lock_for(path):
    """The lock every writer of `path` takes: a file beside it (filelock: fcntl on POSIX, msvcrt on Windows)."""
    return FileLock(path.with_name(f".{path.name}.lock"), timeout=60)


def write_atomically(path, text):
    """Write `text` to a temporary file beside `path`, then rename it over `path`: a reader sees the old file or the
    new one, never half; the temporary file is gone either way."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


class MergingWrite:
    """What a SharedJsonCache writes through (cooksafe.JsonCache calls `self.path.write_text`): under the lock, read
    the file as it is now, add this process's answers, write a temporary file beside it, rename it over the old one."""

    def __init__(self, cache, path):
        self.cache, self.file = cache, Path(path)

    def write_text(self, text):
        with lock_for(self.file):
            merged = json.loads(self.file.read_text()) if self.file.exists() else {}
            merged |= json.loads(text)
            self.cache._data.update(merged)  # answers other processes recorded are now hits here too
            write_atomically(self.file, cache_text(merged, self.cache.indent))


class SharedJsonCache(JsonCache):
    """cooksafe.JsonCache for a file that several notebooks may record into at once: no answer is lost, and a crash
    leaves the old file or the new one, never half of either."""

    def __init__(self, path):
        super().__init__(path)
        self.path = MergingWrite(self, path)


def cache_path():
    """The cache file calls are replayed from: COOKBOOK_CACHE, or the committed json_cache.json."""
    return Path(os.environ.get("COOKBOOK_CACHE") or HERE.parent / "json_cache.json")


OPEN_CACHES = {}  # path → SharedJsonCache, each opened (and checked) on its first call


def open_cache(path):
    """The SharedJsonCache over `path`, checked and opened on first use."""
    if path not in OPEN_CACHES:
        check_cache_file(path)
        OPEN_CACHES[path] = SharedJsonCache(path)
    return OPEN_CACHES[path]


# The one function that reaches Jev

class CacheMiss(LookupError):
    """A call that the cache does not hold, with no TYPESAFE_API_KEY to make it live."""


def ticket_id(state):
    """The id of the ticket in a state, or in the request of a memory (the gate's state); None if there is none."""
    inner = state.get("request", state) if isinstance(state, dict) else None
    ticket = inner.get("ticket") if isinstance(inner, dict) else None
    return ticket.get("id") if isinstance(ticket, dict) else None


def describe_call(state, questions):
    """'questions ['team'] about ticket T-201': what a call asks, for messages."""
    about = f" about ticket {ticket_id(state)}" if ticket_id(state) else ""
    return f"questions {sorted(questions)}{about}"


def call_jev(model, state_json, questions_json):
    """Jev's answer (a SystemOneResponse as JSON) to one request: replayed from the cache file, or asked live and
    recorded when TYPESAFE_API_KEY is set. Offline, a request the cache lacks raises CacheMiss."""
    return open_cache(cache_path())(_system_one)(model, state_json, questions_json)


def _system_one(model, state_json, questions_json):
    """Ask Jev live (the cache only calls this for a request it lacks). Its name is part of every cache key."""
    state, questions = json.loads(state_json), json.loads(questions_json)
    if not os.environ.get("TYPESAFE_API_KEY"):
        raise CacheMiss(explain_miss(model, state_json, questions_json))
    try:
        with TypeSafeClient(base_url=os.environ.get("TYPESAFE_ENDPOINT"), timeout=60) as client:
            answer = client.system_one(state, questions, model=model).model_dump(mode="json")
    except TypeSafeError as error:
        error.add_note(f"While asking {model} {describe_call(state, questions)}.")
        raise
    LIVE_CALLS.append((model, state_json, questions_json))
    return answer


@contextlib.contextmanager
def offline():
    """Set TYPESAFE_API_KEY aside for the block, so that a call the cache lacks raises CacheMiss even in a live
    session: nothing is sent, nothing recorded."""
    key = os.environ.pop("TYPESAFE_API_KEY", None)
    try:
        yield
    finally:
        if key:
            os.environ["TYPESAFE_API_KEY"] = key


def questions_wire(questions):
    """Questions as they are sent: {question_id: question.model_dump(mode="json", exclude_none=True)}."""
    return {question_id: question.model_dump(mode="json", exclude_none=True)
            for question_id, question in questions.items()}


def request_text(state, questions):
    """(state, questions) as the json.dumps text that is sent and keys the cache, or a TypeError naming the fix."""
    if not isinstance(questions, dict) or not questions or not all(
            isinstance(question, (Choice, Noul, Score)) for question in questions.values()):
        raise TypeError("questions must be a non-empty dict {question_id: typesafe_sdk Choice, Noul or Score};"
                        f" got {type(questions).__name__} {questions!r:.80}")
    try:
        return json.dumps(state), json.dumps(questions_wire(questions))
    except (TypeError, ValueError) as error:
        raise TypeError(f"The state must be JSON-serialisable ({error}): use dicts, lists, strings, numbers,"
                        " booleans and None (a set as a list, a date as an ISO string).") from None


def cache_key(model, state_json, questions_json):
    """The key cooksafe.JsonCache records this call under: the function's name and arguments joined by |, as a sha256
    digest when longer than 200 characters."""
    key = "|".join(["_system_one", model, state_json, questions_json])
    return hashlib.sha256(key.encode()).hexdigest() if len(key) > MAX_KEY_CHARS else key


def playground_link(state, questions, model):
    """A link that opens this request (state, questions, model) in the TypeSafe playground."""
    return make_playground_link(state, questions, models=[model])


# Explaining a miss: the nearest recorded request, and how this one differs

class RecordedRequest(NamedTuple):
    key: str
    model: str
    state: dict
    questions: dict


def requests_path():
    """recorded_requests.json beside the cache in use (cache_path(): COOKBOOK_CACHE, or the committed cache)."""
    return cache_path().with_name(REQUESTS_NAME)


def recorded_requests(path=None):
    """The published run's requests (RecordedRequest), in order of first use, as scripts/record_cache.py wrote them
    beside the cache (default: the cache in use); none when there is no such file. Re-read when the file changes."""
    path = Path(path or requests_path())
    try:
        modified = path.stat().st_mtime_ns
    except FileNotFoundError:
        return ()
    return requests_in(path, modified)


@functools.lru_cache(maxsize=8)
def requests_in(path, modified):
    """The requests `path` held when it was last modified at `modified` (the key that makes a changed file re-read)."""
    return tuple(RecordedRequest(**request) for request in json.loads(path.read_text()))


def carried_memory_ids(state):
    """The source ticket ids of the memories a routing state carries (a list of {"request", "jev_answered"})."""
    for value in state.values() if isinstance(state, dict) else ():
        if isinstance(value, list) and value and all(isinstance(m, dict) and "request" in m for m in value):
            return tuple(ticket_id(memory) for memory in value)
    return ()


def without_memories(state):
    if not isinstance(state, dict):
        return state
    return {key: value for key, value in state.items() if not carried_memory_ids({key: value})}


def differences(recorded, sent, path=""):
    """[(path, recorded value, sent value)] where two JSON values differ; memories are named by their ticket."""
    if isinstance(recorded, dict) and isinstance(sent, dict):
        found = []
        for key in dict.fromkeys([*recorded, *sent]):
            found += differences(recorded.get(key, "(absent)"), sent.get(key, "(absent)"), f"{path}.{key}")
        return found
    if isinstance(recorded, list) and isinstance(sent, list):
        same_memories = carried_memory_ids({"": recorded}) == carried_memory_ids({"": sent}) != ()
        named = len(recorded) == len(sent) and same_memories
        found = []
        for index in range(max(len(recorded), len(sent))):
            old = recorded[index] if index < len(recorded) else "(absent)"
            new = sent[index] if index < len(sent) else "(absent)"
            found += differences(old, new, f"{path}[memory {ticket_id(old)}]" if named else f"{path}[{index}]")
        return found
    return [] if recorded == sent else [(path.lstrip("."), recorded, sent)]


def truncated(value, width=90):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 1] + "…"


def memory_sets_text(ids_list):
    return "; ".join(", ".join(ids) or "none" for ids in ids_list)


def explain_miss(model, state_json, questions_json):
    """A CacheMiss's message: what was asked, how it differs from the nearest recorded request, and what to do."""
    where = os.path.relpath(cache_path())
    state, questions = json.loads(state_json), json.loads(questions_json)
    lines = [f"No recorded Jev answer for {describe_call(state, questions)} in {where}."]
    if not recorded_requests():
        lines.append(f"There is no {REQUESTS_NAME} beside {where} to compare this request with.")
    elif cache_key(model, state_json, questions_json) in {request.key for request in recorded_requests()}:
        lines.append(f"The published run made exactly this request, but {where} does not hold its answer: restore the"
                     " committed cache with `git checkout json_cache.json`, or point COOKBOOK_CACHE at it.")
    else:
        lines += compared_with_recorded(model, state, questions)
    lines.append(f"Offline the cookbook only replays {where}. With TYPESAFE_API_KEY set (and TYPESAFE_ENDPOINT for"
                 f" another Jev-compatible server), this request would be sent to Jev ({model}) live and its answer"
                 f" recorded into {where}.")
    return "\n".join(lines)


def compared_with_recorded(model, state, questions):
    """Lines that name the nearest recorded request for the same ticket and questions, and how this one differs."""
    asked = sorted(questions)
    models = sorted({m for _, m, _, _ in recorded_requests()})
    if model not in models:
        return [f"The published run asked {', '.join(models)}, not {model}."]
    recorded = [(s, q) for _, m, s, q in recorded_requests() if m == model]
    if not any(sorted(q) == asked for _, q in recorded):
        return [f"The published run never asked questions {asked}."]
    tickets = list(dict.fromkeys(ticket_id(s) for s, q in recorded if sorted(q) == asked))
    same = [(s, q) for s, q in recorded if sorted(q) == asked and ticket_id(s) == ticket_id(state)]
    if not same:
        return [f"The published run asked {asked} about tickets {', '.join(tickets)}, never about"
                f" {ticket_id(state) or 'a state with no ticket id'}: a new ticket is a new request."]
    mine, sets = carried_memory_ids(state), list(dict.fromkeys(carried_memory_ids(s) for s, _ in same))

    def distance(candidate):
        old_state, old_questions = candidate
        return (carried_memory_ids(old_state) != mine, len(differences(old_questions, questions))
                + len(differences(without_memories(old_state), without_memories(state))))

    nearest_state, nearest_questions = min(same, key=distance)
    lines = []
    if mine not in sets:
        lines.append(f"Memories carried: recorded for {ticket_id(state)}: {memory_sets_text(sets)} · this request:"
                     f" {memory_sets_text([mine])}.")
        nearest_state, state = without_memories(nearest_state), without_memories(state)
    found = [("question " + path, old, new) for path, old, new in differences(nearest_questions, questions)]
    found += differences(nearest_state, state)
    if found:
        lines.append("Edited since the recording (recorded → this request):")
        lines += [f"  {path}: {truncated(old)} → {truncated(new)}" for path, old, new in found[:6]]
        lines += [f"  … and {len(found) - 6} more differences"] if len(found) > 6 else []
    if ticket_id(state) in mine or len(set(mine)) < len(mine):
        lines.append("A ticket carries its own memory, or a memory is carried twice: a cell probably ran twice."
                     " Kernel → Restart Kernel and Run All Cells goes back to the recorded run.")
    elif mine not in sets and not found:
        lines.append("Only the memories differ: cells probably ran out of order or twice. Kernel → Restart Kernel and"
                     " Run All Cells goes back to the recorded run.")
    elif found:
        lines.append("An edited ticket or question is a new request: undo the edit (and Kernel → Restart Kernel and"
                     " Run All Cells) to go back to the recorded answers.")
    return lines
