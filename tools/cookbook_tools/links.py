"""The playground links of every recorded call of the published run, as a Markdown table
(scripts/playground_links.py)."""

import sys
from collections.abc import Iterator
from typing import Any

from memory_cookbook.replay.cache_file import cache_path, check_cache_file
from memory_cookbook.jev_request import answer_in_brief, carried_memory_ids, playground_link, ticket_id
from memory_cookbook.checked_files import DamagedFile
from memory_cookbook.replay.recorded_requests import check_in_step, recorded_requests, requests_path


def answers_in_brief(answers: dict[str, Any]) -> str:
    """A recorded response's answers, one per question, each as the cookbook shows an answer: 'cloud_ops 0.80' for a
    Choice, 'P(yes) 0.07' for a Noul."""
    return "; ".join(map(answer_in_brief, answers.values()))


def rows() -> Iterator[tuple[object, ...]]:
    """Read from the cache file, never asked: the requests file beside it, missing, damaged or out of step with it,
    is a DamagedFile before any row."""
    entries = check_cache_file(cache_path())
    requests = recorded_requests(requests_path(cache_path()))
    check_in_step(cache_path(), entries, requests)
    for number, request in enumerate(requests, 1):
        state, questions = request.state, request.questions
        answers = entries[request.key]["answers"]
        yield (number, ticket_id(state), ", ".join(questions), ", ".join(map(str, carried_memory_ids(state))) or "-",
               answers_in_brief(answers), f"[open]({playground_link(state, questions, request.model)})")


def playground_links() -> None:
    try:
        table = list(rows())
    except DamagedFile as error:
        sys.exit(f"playground_links: {error}")
    print("| # | ticket | question | memories carried | Jev's answer | playground |")
    print("|---|---|---|---|---|---|")
    for row in table:
        print("| " + " | ".join(map(str, row)) + " |")

