"""scripts/build_docs.py builds readable pages that work offline: a page per notebook, every local link resolving,
nothing fetched from another host, llms.txt listing every Markdown page."""

import re
import nbformat
import pytest
from build_docs import build, notebook_paths, site_path
from conftest import ROOT

# Tags and CSS that make a browser fetch something: any of them pointing at another host breaks offline reading.
FETCHES = re.compile(r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*\b(?:src|href|data)="
                     r"\"(?:https?:)?//|\bimport\b[^;\n]*[\"'](?:https?:)?//|url\(\s*[\"']?(?:https?:)?//|@import\s")
HTML_LINK = re.compile(r"(?:href|src)=\"([^\"\s]+)\"")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


def links(page):
    """The link and image targets of a page: attributes of HTML, and Markdown links outside code blocks."""
    if page.suffix == ".html":
        return HTML_LINK.findall(page.read_text())
    return MARKDOWN_LINK.findall(re.sub(r"```.*?```", "", page.read_text(), flags=re.S))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    build(out)
    return out


def pages(site, suffix):
    return sorted(site.glob(f"**/*{suffix}"))


def test_every_notebook_has_an_html_and_a_markdown_page(site):
    for path in notebook_paths():
        assert (site / site_path(path)).is_file() and (site / site_path(path).with_suffix(".md")).is_file(), path


def test_every_local_link_and_image_resolves(site):
    broken = []
    for page in [*pages(site, ".html"), *pages(site, ".md"), site / "llms.txt"]:
        for target in links(page):
            if not re.match(r"[a-z]+:|#|//", target) and not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(site)} → {target}")
    assert broken == []


def test_next_links_point_at_pages_not_notebooks(site):
    assert "02_routing.html" in (site / "01_tickets.html").read_text()
    assert [page.name for page in pages(site, ".html") if ".ipynb\"" in page.read_text()] == []


def test_no_page_fetches_from_another_host(site):
    assert {page.name: FETCHES.findall(page.read_text()) for page in pages(site, ".html")
            if FETCHES.search(page.read_text())} == {}


def test_diagrams_are_drawn_into_the_page(site):
    assert "<svg" in (site / "04_wrapper.html").read_text() and "<svg" in (site / "index.html").read_text()
    assert "```mermaid" not in (site / "04_wrapper.html").read_text()


def test_llms_txt_lists_every_markdown_page(site):
    text = (site / "llms.txt").read_text()
    assert text.startswith("# ") and re.search(r"^> \S", text, re.M)
    listed = set(re.findall(r"^- \[[^\]]+\]\(([^)]+\.md)\): \S", text, re.M))
    assert listed == {page.relative_to(site).as_posix() for page in pages(site, ".md")}


def test_the_06_page_carries_the_result_table_and_the_totals(site):
    page = re.sub(r"<[^>]+>", "", (site / "06_final_comparison.html").read_text())
    for row in [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| C-")]:
        customer, message, expected, plain, memory = [cell.strip() for cell in row.strip("|").split("|")]
        assert re.search(rf"{customer}\s*{message}\s*{expected}\s*{re.escape(plain)}\s*{re.escape(memory)}", page), row
    assert "Expected routes: 2/6 without memory, 6/6 with memory." in page


def test_the_index_is_the_readme_with_its_notebook_list_linking_to_the_pages(site):
    index = (site / "index.html").read_text()
    english = [path for path in notebook_paths() if not path.name.endswith(".zh.ipynb")]
    assert len(english) == 8 and all(f'href="{site_path(path).as_posix()}"' in index for path in english)


def test_try_it_answers_are_folded_on_the_pages(site):
    for path in notebook_paths():
        answers = sum(bool(cell.metadata.get("jupyter", {}).get("source_hidden"))
                      for cell in nbformat.read(path, as_version=4).cells)
        for page in (site / site_path(path), site / site_path(path).with_suffix(".md")):
            assert page.read_text().count("<details><summary>Show the answer</summary>") == answers, page.name
