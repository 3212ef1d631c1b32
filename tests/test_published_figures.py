"""Every figure TypeSafe published appears in the committed notebook outputs (which nbval proves are computed)."""

import json
import re

import nbformat
from conftest import ROOT
from run_notebooks import NOTEBOOK_PATHS, cache_keys
from lzstring import LZString

PUBLISHED = (ROOT / "tests" / "published_results.md").read_text()


def committed_output_text():
    texts = []
    for path in NOTEBOOK_PATHS:
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                texts.append(output.get("text", ""))
                texts.append(output.get("data", {}).get("text/markdown", ""))
    return "\n".join(texts)


def published_table_rows():
    rows = [line for line in PUBLISHED.splitlines() if line.startswith("| ") and not line.startswith("| customer |")
            and not line.startswith("| ticket |")]
    assert len(rows) == 4 + 5 + 6
    return rows


def test_every_published_table_row_is_in_the_outputs():
    outputs = committed_output_text()
    missing = [row for row in published_table_rows() if row not in outputs]
    assert missing == []


def test_the_published_totals_and_plain_routing_are_in_the_outputs():
    outputs = committed_output_text()
    totals = re.search(r"^Expected routes: .*$", PUBLISHED, re.M).group(0)
    assert totals in outputs.splitlines()
    assert "cloud_ops 0.80" in outputs.splitlines()


def playground_link():
    notebook = nbformat.read(ROOT / "notebooks" / "06_final_comparison.ipynb", as_version=4)
    markdown = [output["data"]["text/markdown"] for cell in notebook.cells for output in cell.get("outputs", [])
                if "playground#share/" in output.get("data", {}).get("text/markdown", "")]
    assert len(markdown) == 1
    return re.search(r"\((https://console\.typesafe\.ai/playground#share/[^)]+)\)", markdown[0]).group(1)


def test_playground_link_decodes_to_the_exact_first_with_memory_call():
    import basic_memory

    share = json.loads(LZString.decompressFromEncodedURIComponent(playground_link().split("#share/", 1)[1]))
    state, questions = json.loads(share["documentText"]), json.loads(share["promptsText"])
    assert share["selectedModels"] == ["jev-1.13.0"] and share["apiVersion"] == "v1"
    assert questions == basic_memory.questions_wire(basic_memory.ROUTE)
    assert [m["request"]["ticket"]["id"] for m in state[basic_memory.MEMORY_KEY]] == ["T-101", "T-105"]
    # Re-serialised as the cookbook sends it, the state is the request of published call 25 (key 012d589a1cc5...).
    call = ("jev-1.13.0", json.dumps(state), json.dumps(questions))
    assert cache_keys([call]) == {"012d589a1cc596af4440cfa53c46e448631a85d3baa5a59b446f2a773228407b"}
    assert share["documentText"] == json.dumps(state, ensure_ascii=False)


def test_the_readme_result_table_is_the_one_notebook_06_computes():
    readme_rows = [line.replace("|---", "") for line in (ROOT / "README.md").read_text().splitlines()
                   if line.startswith("| C-")]
    assert len(readme_rows) == 6
    assert [row for row in readme_rows if row not in committed_output_text()] == []
