"""scripts/build_docs.py (over cookbook_tools/pages.py) builds readable pages that work offline: a page per notebook,
every local link resolving, nothing fetched from another host, llms.txt listing every Markdown page. The template
and the renderers are tested on their own first; the site is built once, into a temporary folder."""

import re

import nbformat
import pytest
from conftest import ROOT
from cookbook_tools.paths import ENGLISH_NOTEBOOKS

from cookbook_tools.pages import (MarkdownPageRenderer, NotebookPage, PageRenderer, ParsedMarkdown, SiteLinks, build,
                                  first_heading, first_sentences, markdown_page_text, notebook_paths, site_path)

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


# The pieces

NOTEBOOK = ROOT / "notebooks" / "01_tickets.ipynb"
PAGE = site_path(NOTEBOOK)
MARKDOWN = """See [notebook 02](02_routing.ipynb#Setup) and [the site](https://example.org/x.ipynb).

Inline code stays: `[notebook 02](02_routing.ipynb)`.

```python
print("[notebook 02](02_routing.ipynb)")
```
"""


def html_of(markdown):
    import mistune
    return mistune.create_markdown(renderer=PageRenderer(SiteLinks(NOTEBOOK, PAGE)))(markdown)


def test_the_html_renderer_points_links_at_the_pages_and_leaves_code_and_other_hosts_alone():
    rendered = html_of(MARKDOWN)
    assert 'href="02_routing.html#Setup"' in rendered and 'href="https://example.org/x.ipynb"' in rendered
    assert rendered.count("02_routing.ipynb") == 2  # in the code span and the code block


def test_the_markdown_renderer_points_links_at_the_markdown_pages_and_leaves_code_alone():
    rendered = markdown_page_text(MARKDOWN, SiteLinks(NOTEBOOK, PAGE, markdown_pages=True))
    assert "[notebook 02](02_routing.md#Setup)" in rendered and "(https://example.org/x.ipynb)" in rendered
    assert "`[notebook 02](02_routing.ipynb)`" in rendered and 'print("[notebook 02](02_routing.ipynb)")' in rendered
    assert isinstance(MarkdownPageRenderer(SiteLinks(NOTEBOOK, PAGE)), MarkdownPageRenderer)


def test_a_link_to_a_file_beside_the_notebooks_is_kept_for_copying_and_others_are_left_as_they_are():
    links = SiteLinks(NOTEBOOK, PAGE)
    assert links("replay.py") == "replay.py" and links.files == {ROOT / "notebooks" / "replay.py"}
    assert links("../tests/test_docs.py") == "../tests/test_docs.py" and links("#Setup") == "#Setup"


def test_the_html_renderer_draws_mermaid_as_svg():
    rendered = html_of("```mermaid\nflowchart LR\n  A --> B\n```\n")
    assert '<div class="mermaid-diagram"><svg' in rendered and "<code" not in rendered and "A --> B" not in rendered


def test_the_notebook_template_loads_nothing_from_a_cdn_and_shows_a_widget_as_its_text():
    notebook = nbformat.v4.new_notebook(metadata={"widgets": {"application/vnd.jupyter.widget-state+json": {
        "state": {"abc": {}}, "version_major": 2, "version_minor": 0}}})
    notebook.cells = [nbformat.v4.new_markdown_cell("$x^2$"), nbformat.v4.new_code_cell("w", outputs=[
        nbformat.v4.new_output("display_data", data={"text/plain": "A widget as text", "application/vnd.jupyter."
                                                     "widget-view+json": {"model_id": "abc", "version_major": 2}})])]
    page, _ = NotebookPage(SiteLinks(NOTEBOOK, PAGE)).from_notebook_node(notebook, resources={"page_css": "p {}"})
    assert "<script" not in page and "cdn" not in page.lower() and "unpkg" not in page
    assert "A widget as text" in page and "<style>p {}</style>" in page


def test_a_hidden_code_cell_starts_folded_on_both_pages(site):
    for page in (site / "03_gate.html", site / "03_gate.md"):
        assert page.read_text().count("<summary>Show the code</summary>") == 1, page.name


# The site, built once

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


def test_no_page_runs_a_script(site):
    assert [page.name for page in pages(site, ".html") if "<script" in page.read_text()] == []


def test_every_page_closes_each_details_it_opens(site):
    for page in [*pages(site, ".html"), *pages(site, ".md")]:
        text = page.read_text()
        assert text.count("<details") == text.count("</details>"), page.name


def test_the_explorer_shows_as_text_and_its_static_chart_as_an_image_on_the_05_pages(site):
    for page in (site / "05_probe_sequence.html", site / "05_probe_sequence.md"):
        text = page.read_text()
        assert "Memory explorer (runs in JupyterLab)" in text and "widget-view" not in text, page.name


def test_diagrams_are_drawn_into_the_page(site):
    assert "<svg" in (site / "04_wrapper.html").read_text() and "<svg" in (site / "index.html").read_text()
    assert "```mermaid" not in (site / "04_wrapper.html").read_text()


def test_llms_txt_lists_every_markdown_page(site):
    text = (site / "llms.txt").read_text()
    assert text.startswith("# ") and re.search(r"^> \S", text, re.M)
    listed = set(re.findall(r"^- \[[^\]]+\]\(([^)]+\.md)\): \S", text, re.M))
    assert listed == {page.relative_to(site).as_posix() for page in pages(site, ".md")}


def test_a_table_row_is_read_by_its_link_as_markdown_with_its_escaped_pipe():
    parsed = ParsedMarkdown("Intro. More.\n\n| notebook | what |\n|---|---|\n| [01](notebooks/01.ipynb) | `a \\| b`, "
                            "and *c* |\n| plain | no link |\n")
    assert parsed.linked_rows() == {"notebooks/01.ipynb": "`a \\| b`, and *c*"}
    assert first_sentences(parsed.first_paragraph()) == "Intro."


def test_a_chinese_paragraph_splits_into_sentences_at_each_full_stop():
    assert first_sentences("第一句，还没完。第二句。Third.") == "第一句，还没完。"
    assert first_sentences("One. Python 3.11 stays whole. Three.", 2) == "One. Python 3.11 stays whole."


CHINESE_GUIDE = ROOT / "docs" / "teaching.zh.md"


def test_the_chinese_teachers_guide_is_a_chinese_page_that_links_the_chinese_notebooks(site):
    page = site / site_path(CHINESE_GUIDE)
    assert page.name == "teaching.zh.html" and page.with_suffix(".md").is_file()
    assert page.read_text().startswith('<!DOCTYPE html>\n<html lang="zh">')
    notebooks = [target for target in links(page) if re.match(r"\d\d_", target)]
    assert len(notebooks) == 6 and all(target.endswith(".zh.html") for target in notebooks), notebooks


def test_the_readme_links_the_chinese_guide_from_its_chinese_section():
    readme = (ROOT / "README.md").read_text()
    chinese_section = readme[readme.index("## 中文版"):readme.index("## Beyond the published cookbook")]
    assert "](docs/teaching.zh.md)" in chinese_section


def test_llms_txt_lists_the_chinese_guide_by_its_title_and_first_sentence(site):
    text = CHINESE_GUIDE.read_text()
    opening = ParsedMarkdown(text).first_paragraph()
    entry = f"- [{first_heading(text)}](teaching.zh.md): {opening[:opening.index('。') + 1]}\n"
    assert entry in (site / "llms.txt").read_text()


def test_llms_txt_describes_each_notebook_by_its_readme_row(site):
    text = (site / "llms.txt").read_text()
    entry = "(06_final_comparison.md): the result table, each answer linked to the playground"
    assert entry in text


def test_the_06_page_carries_the_result_table_and_the_totals(site):
    page = re.sub(r"<[^>]+>", "", (site / "06_final_comparison.html").read_text())
    for row in [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| C-")]:
        customer, message, expected, plain, memory = [cell.strip() for cell in row.strip("|").split("|")]
        assert re.search(rf"{customer}\s*{message}\s*{expected}\s*{re.escape(plain)}\s*{re.escape(memory)}", page), row
    assert "Expected routes: 2/6 without memory, 6/6 with memory." in page


def test_the_index_is_the_readme_with_its_notebook_list_linking_to_the_pages(site):
    index = (site / "index.html").read_text()
    assert len(ENGLISH_NOTEBOOKS) == 8
    assert all(f'href="{site_path(path).as_posix()}"' in index for path in ENGLISH_NOTEBOOKS)


def test_try_it_answers_are_folded_on_the_pages(site):
    for path in notebook_paths():
        answers = sum(bool(cell.metadata.get("jupyter", {}).get("source_hidden"))
                      for cell in nbformat.read(path, as_version=4).cells)
        for page in (site / site_path(path), site / site_path(path).with_suffix(".md")):
            assert page.read_text().count("<details><summary>Show the answer</summary>") == answers, page.name
