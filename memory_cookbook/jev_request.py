"""One request to Jev as data: the exact text that is sent (and keys the cache), the key it is recorded under, the
ticket it is about, and a TypeSafe playground link that opens it; and an answer in brief, the one way the cookbook
shows an answer to people. Hand-written, tested in tests/test_replay.py and tests/test_lesson.py."""

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from cooksafe import make_playground_link
from cooksafe.cache import MAX_KEY_CHARS
from pydantic import TypeAdapter
from typesafe_sdk import Answer, Choice, ChoiceAnswer, Noul, NoulAnswer, Score, ScoreAnswer

__all__ = ["ANSWERS", "Questions", "answer_in_brief", "cache_key", "carried_memory_ids", "describe_call",
           "playground_link", "questions_wire", "request_text", "ticket_id", "without_memories"]

Questions = dict[str, Choice | Noul | Score]  # {question id: question}, as ask() takes them


def ticket_id(state: object) -> str | None:
    """The id of the ticket in a state, or in the request of a memory (the gate's state); None if there is none."""
    inner = state.get("request", state) if isinstance(state, dict) else None
    ticket = inner.get("ticket") if isinstance(inner, dict) else None
    return ticket.get("id") if isinstance(ticket, dict) else None


def carried_memory_ids(state: object) -> tuple[str | None, ...]:
    """The source ticket ids of the memories a routing state carries (a list of {"request", "jev_answered"})."""
    for value in state.values() if isinstance(state, dict) else ():
        if isinstance(value, list) and value and all(isinstance(m, dict) and "request" in m for m in value):
            return tuple(ticket_id(memory) for memory in value)
    return ()


def without_memories(state: Any) -> Any:
    if not isinstance(state, dict):
        return state
    return {key: value for key, value in state.items() if not carried_memory_ids({key: value})}


def describe_call(state: object, questions: Mapping[str, object]) -> str:
    """'questions ['team'] about ticket T-201': what a call asks, for messages."""
    about = f" about ticket {ticket_id(state)}" if ticket_id(state) else ""
    return f"questions {sorted(questions)}{about}"


def questions_wire(questions: Questions) -> dict[str, Any]:
    """Questions as they are sent: {question_id: question.model_dump(mode="json", exclude_none=True)}."""
    return {question_id: question.model_dump(mode="json", exclude_none=True)
            for question_id, question in questions.items()}


def request_text(state: object, questions: object) -> tuple[str, str]:
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


def cache_key(model: str, state_json: str, questions_json: str) -> str:
    """The key cooksafe.JsonCache records this call under: the name of replay._system_one (the function the published
    cache was recorded with) and the arguments joined by |, as a sha256 digest when longer than 200 characters."""
    key = "|".join(["_system_one", model, state_json, questions_json])
    return hashlib.sha256(key.encode()).hexdigest() if len(key) > MAX_KEY_CHARS else key


ANSWERS: TypeAdapter[Any] = TypeAdapter(Answer)  # an answer's JSON, as a response holds it, back to its class


def answer_in_brief(answer: Any) -> str:
    """'cloud_ops 0.80' for a Choice (the option chosen and its probability), 'P(yes) 0.07' for a Noul, 'score 4' for
    a Score: an answer (typesafe_sdk's, or its JSON) in a few characters, for tables, ledgers and links."""
    if isinstance(answer, dict):
        answer = ANSWERS.validate_json(json.dumps(answer))  # JSON mode: a Score's levels come back as integers
    if isinstance(answer, ChoiceAnswer):
        return f"{answer.choice} {answer.probabilities[answer.choice]:.2f}"
    if isinstance(answer, NoulAnswer):
        return f"P(yes) {answer.noul:.2f}"
    if isinstance(answer, ScoreAnswer):
        return f"score {answer.score:g}"
    raise TypeError(f"no brief form for a {type(answer).__name__}")


def playground_link(state: object, questions: Mapping[str, object], model: str) -> str:
    """A link that opens this request (state, questions, model) in the TypeSafe playground. The state goes in as its
    JSON text, as cooksafe writes a dict's: a state that is a JSON string stays one, not the document's bare text."""
    return make_playground_link(json.dumps(state, ensure_ascii=False), questions, models=[model])
