"""Every figure TypeSafe published appears in the committed notebook outputs (which nbval proves are computed)."""

import json
import re

from memory_cookbook import jev_request
import nbformat
import pytest
from conftest import PLAYGROUND_LINK, ROOT, cache_keys, committed_entries, decoded_link, link_share, output_texts
from cookbook_tools.paths import ENGLISH_NOTEBOOKS
from memory_cookbook.jev_request import questions_wire

PUBLISHED = (ROOT / "tests" / "published_results.md").read_text()


def committed_output_text():
    """Every text and Markdown output of the committed notebooks, with playground links reduced to their text."""
    texts = [text for path in ENGLISH_NOTEBOOKS for text in output_texts(nbformat.read(path, as_version=4))]
    return PLAYGROUND_LINK.sub(r"\1", "\n".join(texts))


def published_table_rows():
    rows = [line for line in PUBLISHED.splitlines() if line.startswith("| ") and not line.startswith("| customer |")
            and not line.startswith("| ticket |")]
    assert len(rows) == 4 + 5 + 6
    return rows


def test_every_published_table_row_is_in_the_outputs():
    outputs = committed_output_text()
    missing = [row for row in published_table_rows() if row not in outputs]
    assert missing == []


def totals_line():
    """The published totals (2/6 without memory, 6/6 with memory, none of the later messages saved) as notebook 06
    prints them, in its own words."""
    plain, count, memory, _ = re.search(r"^Expected routes: (\d+)/(\d+) without memory, (\d+)/(\d+) with memory\. The"
                                        r" gate saved none of the later messages\.$", PUBLISHED, re.M).groups()
    return f"The expected team: {plain}/{count} plain, {memory}/{count} with memory; memories saved from these" \
           " messages: 0."


def test_the_published_totals_and_plain_routing_are_in_the_outputs():
    outputs = committed_output_text()
    assert totals_line() in outputs.splitlines()
    assert "cloud_ops 0.80" in outputs.splitlines()


def final_table_links():
    """(link text, link) of every playground link in notebook 06's outputs."""
    notebook = nbformat.read(ROOT / "notebooks" / "06_final_comparison.ipynb", as_version=4)
    return PLAYGROUND_LINK.findall("\n".join(output_texts(notebook)))


def test_every_answer_of_the_final_table_links_to_its_exact_recorded_request(lesson):
    links = final_table_links()
    assert len(links) == 12
    recorded = set(committed_entries())
    for text, link in links:
        model, state, questions = decoded_link(link)
        assert model == "jev-1.13.0" and link_share(link)["apiVersion"] == "v1"
        assert questions == questions_wire(lesson.ROUTE)
        assert jev_request.cache_key("jev-1.13.0", json.dumps(state), json.dumps(questions)) in recorded, text
        # the answer the link shows is the recorded answer to that request
        assert text.endswith(lesson.routed(lesson.ask(state, lesson.ROUTE)))


def test_the_first_with_memory_link_is_published_call_25():
    _, link = final_table_links()[1]
    _, state, questions = decoded_link(link)
    assert [m["request"]["ticket"]["id"] for m in state["earlier_tickets_from_this_customer"]] == ["T-101", "T-105"]
    # Re-serialised as the cookbook sends it, the state is the request of published call 25 (key 012d589a1cc5...).
    assert cache_keys([("jev-1.13.0", json.dumps(state), json.dumps(questions))]) == {
        "012d589a1cc596af4440cfa53c46e448631a85d3baa5a59b446f2a773228407b"}
    assert link_share(link)["documentText"] == json.dumps(state, ensure_ascii=False)


@pytest.mark.parametrize("readme", ["README.md", "README.zh.md"])
def test_the_readmes_result_table_is_the_one_notebook_06_computes(readme):
    readme_rows = [line.replace("|---", "") for line in (ROOT / readme).read_text().splitlines()
                   if line.startswith("| C-")]
    assert len(readme_rows) == 6
    assert [row for row in readme_rows if row not in committed_output_text()] == []
