"""Print a Markdown table of every recorded call of the published run, each with its TypeSafe playground link.

    python scripts/playground_links.py > links.md

One row per distinct request, in order of first use (recorded_requests.json): the ticket, the questions, the memories
the state carries, Jev's recorded answer, and a link that opens that exact request (state, questions, model) in the
playground.
"""

from cookbook_tools.links import playground_links

if __name__ == "__main__":
    playground_links()
