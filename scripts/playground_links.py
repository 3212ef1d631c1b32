"""Print a Markdown table of every recorded call of the published run, each with its TypeSafe playground link.

    python scripts/playground_links.py > links.md

One row per distinct request, in order of first use: the ticket, the question, the memories the state carries, Jev's
recorded answer, and a link that opens that exact request (state, question, model) in the playground. The requests are
derived by replaying the published run (notebook 08's `replay_published_run`), never from a hand-kept list.
"""

import json
import sys

from export_module import NOTEBOOKS

sys.path.insert(0, str(NOTEBOOKS))
from replay import _system_one, carried_memory_ids, playground_link, recorded_calls, ticket_id  # noqa: E402


def answer_text(answers):
    """'cloud_ops 0.80' for a Choice, 'P(yes) 0.07' for a Noul."""
    return "; ".join(f"{a['choice']} {a['probabilities'][a['choice']]:.2f}" if a["type"] == "choice"
                     else f"P(yes) {a['noul']:.2f}" for a in answers.values())


def rows():
    for number, (model, state_json, questions_json) in enumerate(recorded_calls(), 1):
        state, questions = json.loads(state_json), json.loads(questions_json)
        answer = _system_one(model, state_json, questions_json)["answers"]
        yield (number, ticket_id(state), ", ".join(questions), ", ".join(carried_memory_ids(state)) or "-",
               answer_text(answer), f"[open]({playground_link(state, questions, model)})")


def main():
    print("| # | ticket | question | memories carried | Jev's answer | playground |")
    print("|---|---|---|---|---|---|")
    for row in rows():
        print("| " + " | ".join(map(str, row)) + " |")


if __name__ == "__main__":
    main()
