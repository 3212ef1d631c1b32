"""What a call the cache lacks says (CacheMiss): the nearest request of the published run (read from
recorded_requests.json beside the cache, written by scripts/record_cache.py), and how this one differs from it; a
difference in memories alone is laid to the gate's threshold when a ledger it was handed holds a decision the
published run did not make (every live Memory hands over its ledger: memory_cookbook.memory.handed_entries);
JupyterLab shows an uncaught one as its message alone. Hand-written, tested in tests/test_replay.py,
tests/test_cache_miss_message.py, tests/test_lesson.py and tests/test_requests_file.py."""

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

from memory_cookbook.contract import LedgerEntry

from memory_cookbook.memory import handed_entries
from memory_cookbook.replay.cache_file import cache_path, check_cache_file
from memory_cookbook.checked_files import DamagedFile
from memory_cookbook.jev_request import (cache_key, carried_memory_ids, describe_call, playground_link, ticket_id,
                                         without_memories)
from memory_cookbook.replay.recorded_requests import RecordedRequest, recorded_requests, requests_path
from memory_cookbook.shown_as_message import ShownAsMessage

__all__ = ["ABSENT", "Absent", "CacheMiss", "compared_with_published_run", "compared_with_recorded", "differences",
           "differing_parts", "edited_kinds", "explain_miss", "memory_keys", "memory_sets_text", "new_request_advice",
           "read_answers", "recorded_threshold_range", "shown_value", "threshold_cause", "window"]


class Absent:
    """Where one side has no value at a path (a key or a list item the other side has): shown as (absent), bare, so
    that it never reads as a text that was sent."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT = Absent()


class CacheMiss(ShownAsMessage, LookupError):
    """A call that the cache does not hold, with no TYPESAFE_API_KEY to make it live. `request` is that call, (model,
    state JSON, questions JSON), as its message's playground link carries it."""

    def __init__(self, message: str, request: tuple[str, str, str] | None = None) -> None:
        super().__init__(message)
        self.request = request


def differences(recorded: Any, sent: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """[(path, recorded value, sent value)] where two JSON values differ (ABSENT on the side that has no value
    there); memories are named by their ticket."""
    if isinstance(recorded, dict) and isinstance(sent, dict):
        found = []
        for key in dict.fromkeys([*recorded, *sent]):
            found += differences(recorded.get(key, ABSENT), sent.get(key, ABSENT), f"{path}.{key}")
        return found
    if isinstance(recorded, list) and isinstance(sent, list):
        same_memories = carried_memory_ids({"": recorded}) == carried_memory_ids({"": sent}) != ()
        named = len(recorded) == len(sent) and same_memories
        found = []
        for index in range(max(len(recorded), len(sent))):
            old = recorded[index] if index < len(recorded) else ABSENT
            new = sent[index] if index < len(sent) else ABSENT
            found += differences(old, new, f"{path}[memory {ticket_id(old)}]" if named else f"{path}[{index}]")
        return found
    return [] if recorded == sent else [(path.lstrip("."), recorded, sent)]


def differing_parts(recorded: Any, sent: Any, width: int = 90, before: int = 30) -> tuple[str, ...]:
    """The JSON texts of two differing values, each cut to `width` characters, both from the same place: `before`
    characters ahead of where they first differ (so an edit near the end of a long text shows on both sides, not
    the same beginning twice), or as far back as keeps the longer one's window full. … marks each cut; a side with no
    value is (absent), unquoted."""
    texts = [shown_value(value) for value in (recorded, sent)]
    longest = max(map(len, texts))
    if longest <= width:
        return tuple(texts)
    first = len(os.path.commonprefix(texts))
    start = max(0, min(first - before, longest - (width - 1)))
    return tuple(window(text, start, width) for text in texts)


def shown_value(value: Any) -> str:
    """A JSON value as its JSON text (a string in quotes); ABSENT as (absent), without quotes."""
    return repr(value) if value is ABSENT else json.dumps(value, ensure_ascii=False)


def window(text: str, start: int, width: int) -> str:
    """`text` from `start`, at most `width` characters, with … where it was cut."""
    head = "…" if start else ""
    rest = text[start:]
    room = width - len(head)
    return head + (rest if len(rest) <= room else rest[:room - 1] + "…")


def memory_keys(*states: Any) -> set[str]:
    """The keys under which the states carry memories (a list of {"request", "jev_answered"})."""
    return {key for state in states if isinstance(state, dict) for key, value in state.items()
            if carried_memory_ids({key: value})}


def edited_kinds(paths: Iterable[str], memories: set[str]) -> set[str]:
    """What the differing `paths` edited: "question", "memory" (a path under one of the keys `memories`) or
    "ticket" (anything else of the state)."""
    return {"question" if path.startswith("question ") else
            "memory" if any(path.startswith(f"{key}[") for key in memories) else "ticket" for path in paths}


def new_request_advice(kinds: set[str]) -> str:
    """What to do about an edit, naming a memory when one was edited."""
    edited = ("memory" if kinds == {"memory"} else "ticket, memory or question" if "memory" in kinds
              else "ticket or question")
    return (f"An edited {edited} is a new request: undo the edit (and Kernel → Restart Kernel and Run All Cells) to go"
            " back to the recorded answers.")


def memory_sets_text(ids_list: Iterable[Iterable[str | None]]) -> str:
    return "; ".join(", ".join(map(str, ids)) or "none" for ids in ids_list)


def explain_miss(model: str, state_json: str, questions_json: str, inside_offline: bool = False) -> str:
    """A CacheMiss's message: what was asked, how it differs from the nearest recorded request, and what to do
    (inside replay.offline(), which never asks live, it says so); last, the request's playground link."""
    where = os.path.relpath(cache_path())
    state, questions = json.loads(state_json), json.loads(questions_json)
    lines = [f"No recorded Jev answer for {describe_call(state, questions)} in {where}."]
    try:
        requests = recorded_requests(requests_path(cache_path()))
    except DamagedFile as error:  # the miss stays the error; why it cannot be compared is the requests file's own
        lines.append(f"It cannot be compared with the published run's requests: {error}")
    else:
        lines += compared_with_published_run(where, model, state, questions, state_json, questions_json, requests)
    if inside_offline:
        lines.append(f"This call ran inside offline(), which only replays {where}, key or not. Outside offline(), with"
                     f" TYPESAFE_API_KEY set, the same request would be sent to Jev ({model}) live and its answer"
                     f" recorded into {where}.")
    else:
        lines.append(f"Offline the cookbook only replays {where}. With TYPESAFE_API_KEY set (and TYPESAFE_ENDPOINT"
                     f" for another Jev-compatible server), this request would be sent to Jev ({model}) live and its"
                     f" answer recorded into {where}.")
    lines.append("To send this exact request by hand (a TypeSafe account is needed), open it in the playground:"
                 f" {playground_link(state, questions, model)}")
    return "\n".join(lines)


def compared_with_published_run(where: str, model: str, state: Any, questions: dict[str, Any], state_json: str,
                                 questions_json: str, requests: Sequence[RecordedRequest]) -> list[str]:
    """Lines that compare a missed request with the published run's `requests` (from beside the cache `where`)."""
    if not requests:
        return [f"{requests_path(cache_path())} holds no request to compare this one with."]
    if cache_key(model, state_json, questions_json) in {request.key for request in requests}:
        return [f"The published run made exactly this request, but {where} does not hold its answer: restore the"
                " committed cache with `git checkout json_cache.json`, or point COOKBOOK_CACHE at it."]
    customer = (state.get("customer") or {}).get("id") if isinstance(state, dict) else None
    return compared_with_recorded(model, state, questions, requests, handed_entries(customer), read_answers(requests))


def read_answers(requests: Sequence[RecordedRequest]) -> dict[str, Any]:
    """The cache's answers to the recorded requests {key: response JSON}; none if the cache cannot be read."""
    try:
        entries = check_cache_file(cache_path())
    except DamagedFile:  # the call that opened the cache has said what is wrong with it
        return {}
    return {request.key: entries[request.key] for request in requests if request.key in entries}


def recorded_threshold_range(requests: Sequence[RecordedRequest],
                             answers: dict[str, Any]) -> tuple[float, float] | None:
    """(above, up_to): any gate threshold above `above` and up to `up_to` makes the published run's decisions, the
    highest P(remember) of a ticket it never saved and the lowest of one it saved; None without both kinds."""
    saved = {memory for request in requests for memory in carried_memory_ids(request.state)}
    judged = [(ticket_id(request.state), answer["noul"]) for request in requests
              for answer in answers.get(request.key, {}).get("answers", {}).values() if answer.get("type") == "noul"]
    kept, dropped = [p for t, p in judged if t in saved], [p for t, p in judged if t not in saved]
    return (max(dropped), min(kept)) if kept and dropped else None


def threshold_cause(customer: str | None, entries: Sequence[LedgerEntry],
                    threshold_range: tuple[float, float] | None) -> str | None:
    """A line that names the ledger's latest call for `customer` whose gate decided otherwise than the published run
    (its threshold, remember_at, outside `threshold_range`), or None if there is none."""
    if threshold_range is None:
        return None
    above, up_to = threshold_range
    for entry in reversed(entries):
        published_saved = entry.get("p_remember", 0) >= up_to
        if entry.get("customer") == customer and "remember_at" in entry and entry["saved"] != published_saved:
            return (f"The gate's threshold changed what was saved: {entry['ticket']} was judged at"
                    f" remember_at = {entry['remember_at']} (P(remember) {entry['p_remember']:.2f}) and"
                    f" {'saved' if entry['saved'] else 'not saved'}, where the published run"
                    f" {'did not save it' if entry['saved'] else 'saved it'}. The recorded answers cover a threshold"
                    f" above {above:.2f} and up to {up_to:.2f} only: change or remove that setting, then Kernel →"
                    " Restart Kernel and Run All Cells.")
    return None


def compared_with_recorded(model: str, state: Any, questions: dict[str, Any], requests: Sequence[RecordedRequest],
                           entries: Sequence[LedgerEntry] = (), answers: dict[str, Any] | None = None) -> list[str]:
    """Lines that name the nearest of the recorded `requests` for the same ticket and questions, and how this one
    differs; a difference in memories alone is laid to the gate's threshold when a ledger entry in `entries` shows it
    (with the recorded `answers`, {key: response JSON})."""
    asked = sorted(questions)
    models = sorted({request.model for request in requests})
    if model not in models:
        return [f"The published run asked {', '.join(models)}, not {model}."]
    recorded = [(request.state, request.questions) for request in requests if request.model == model]
    if not any(sorted(q) == asked for _, q in recorded):
        return [f"The published run never asked questions {asked}."]
    tickets = list(dict.fromkeys(ticket_id(s) for s, q in recorded if sorted(q) == asked))
    same = [(s, q) for s, q in recorded if sorted(q) == asked and ticket_id(s) == ticket_id(state)]
    if not same:
        return [f"The published run asked {asked} about tickets {', '.join(map(str, tickets))}, never about"
                f" {ticket_id(state) or 'a state with no ticket id'}: a new ticket is a new request."]
    mine, sets = carried_memory_ids(state), list(dict.fromkeys(carried_memory_ids(s) for s, _ in same))

    def distance(candidate: tuple[Any, dict[str, Any]]) -> tuple[bool, int]:
        old_state, old_questions = candidate
        return (carried_memory_ids(old_state) != mine, len(differences(old_questions, questions))
                + len(differences(without_memories(old_state), without_memories(state))))

    nearest_state, nearest_questions = min(same, key=distance)
    memories = memory_keys(nearest_state, state)
    lines = []
    if mine not in sets:
        lines.append(f"Memories carried: recorded for {ticket_id(state)}: {memory_sets_text(sets)} · this request:"
                     f" {memory_sets_text([mine])}.")
        nearest_state, state = without_memories(nearest_state), without_memories(state)
    found = [("question " + path, old, new) for path, old, new in differences(nearest_questions, questions)]
    found += differences(nearest_state, state)
    if found:
        lines.append("Edited since the recording (recorded → this request):")
        lines += [f"  {path}: {' → '.join(differing_parts(old, new))}" for path, old, new in found[:6]]
        lines += [f"  … and {len(found) - 6} more differences"] if len(found) > 6 else []
    if ticket_id(state) in mine or len(set(mine)) < len(mine):
        lines.append("A ticket carries its own memory, or a memory is carried twice: a cell probably ran twice."
                     " Kernel → Restart Kernel and Run All Cells goes back to the recorded run.")
    elif mine not in sets and not found:
        customer = (state.get("customer") or {}).get("id") if isinstance(state, dict) else None
        cause = threshold_cause(customer, entries, recorded_threshold_range(requests, answers or {}))
        lines.append(cause or "Only the memories differ. Either a setting changed what was saved before this call"
                     " (such as the gate's threshold, remember_at, set outside the range the recorded"
                     " answers cover), or cells ran out of order or twice. Undo the setting, then Kernel → Restart"
                     " Kernel and Run All Cells goes back to the recorded run.")
    elif found:
        lines.append(new_request_advice(edited_kinds((path for path, _, _ in found), memories)))
    return lines
