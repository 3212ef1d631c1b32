"""Print a Markdown table of every recorded call of the published run, each with its TypeSafe playground link.

    python scripts/playground_links.py > links.md

One row per distinct request, in order of first use (recorded_requests.json): the ticket, the questions, the memories
the state carries, Jev's recorded answer, and a link that opens that exact request (state, questions, model) in the
playground.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "notebooks"))  # replay.py and co.
from cache_file import cache_path, check_cache_file  # noqa: E402
from cache_miss import carried_memory_ids, recorded_requests  # noqa: E402
from jev_request import playground_link, ticket_id  # noqa: E402


def answers_in_brief(answers):
    """A recorded response's answers, one per question: 'cloud_ops 0.80' for a Choice, 'P(yes) 0.07' for a Noul."""
    return "; ".join(f"{a['choice']} {a['probabilities'][a['choice']]:.2f}" if a["type"] == "choice"
                     else f"P(yes) {a['noul']:.2f}" for a in answers.values())


def rows():
    """Read from the cache file, never asked: a request it lacks stops the script (KeyError) rather than going live."""
    entries = check_cache_file(cache_path())
    for number, request in enumerate(recorded_requests(), 1):
        state, questions = request.state, request.questions
        answers = entries[request.key]["answers"]
        yield (number, ticket_id(state), ", ".join(questions), ", ".join(carried_memory_ids(state)) or "-",
               answers_in_brief(answers), f"[open]({playground_link(state, questions, request.model)})")


def main():
    print("| # | ticket | question | memories carried | Jev's answer | playground |")
    print("|---|---|---|---|---|---|")
    for row in rows():
        print("| " + " | ".join(map(str, row)) + " |")


if __name__ == "__main__":
    main()
