"""scripts/build_docs.py (over tools/cookbook_tools/pages.py) builds readable pages that work offline: a page per
notebook, titled by it, every local link and anchor resolving, nothing fetched from another host, llms.txt listing
every Markdown page. The template, the renderers and the committed diagrams are tested on their own first (the quick
loop); the whole site is built once per test session, into a temporary folder, by the slow tests."""

import html
import re
from urllib.parse import unquote
import sys

import nbformat
import pytest
from conftest import ROOT, built_site, pages_built_by_the_kit
from test_published_figures import totals_line
from memory_cookbook.classroom import folded
from cookbook_tools.paths import ENGLISH_NOTEBOOKS

from cookbook_tools import pages as pages_module
from cookbook_tools.pages import (CHINESE_README, DIAGRAMS, README, MarkdownPageRenderer, NotebookPage,
                                 PageRenderer, ParsedMarkdown, SiteLinks, diagram_file,
                                 diagram_sources, document_pages, documents, draw_diagram, first_heading,
                                 first_sentences, github_id, markdown_page_text, notebook_paths,
                                 notebook_title, site_path)

# Tags and CSS that make a browser fetch something: any of them pointing at another host breaks offline reading.
FETCHES = re.compile(r"<(?:script|link|img|iframe|source|video|audio|embed|object)\b[^>]*\b(?:src|href|data)="
                     r"\"(?:https?:)?//|\bimport\b[^;\n]*[\"'](?:https?:)?//|url\(\s*[\"']?(?:https?:)?//|@import\s")
HTML_LINK = re.compile(r"(?:href|src)=\"([^\"\s]+)\"")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")
HTML_ID = re.compile(r"\bid=\"([^\"]+)\"")


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
    # the id a Markdown reader gives the heading "Setup"
    assert "[notebook 02](02_routing.md#setup)" in rendered and "(https://example.org/x.ipynb)" in rendered
    assert "`[notebook 02](02_routing.ipynb)`" in rendered and 'print("[notebook 02](02_routing.ipynb)")' in rendered
    assert isinstance(MarkdownPageRenderer(SiteLinks(NOTEBOOK, PAGE)), MarkdownPageRenderer)


def test_a_link_to_a_file_beside_the_notebooks_is_kept_for_copying_and_others_are_left_as_they_are():
    links = SiteLinks(NOTEBOOK, PAGE)
    assert links("jev_memory_lesson.py") == "jev_memory_lesson.py"
    assert links.files == {ROOT / "notebooks" / "jev_memory_lesson.py"}
    assert links("../tests/test_docs.py") == "../tests/test_docs.py" and links("#Setup") == "#Setup"


def test_the_html_renderer_puts_in_a_diagrams_committed_svg_without_drawing_it(monkeypatch):
    monkeypatch.setattr(pages_module, "draw_diagram", lambda source: pytest.fail("drew a committed diagram again"))
    source = next(source for source in diagram_sources() if "一张工单" not in source)
    rendered = html_of(f"```mermaid\n{source}```\n")
    assert rendered == f'<div class="mermaid-diagram">{diagram_file(source).read_text()}</div>\n'
    assert rendered.startswith('<div class="mermaid-diagram"><svg') and "<code" not in rendered


def test_every_diagram_the_pages_show_has_its_committed_svg_and_no_other_svg_is_kept():
    """Editing a diagram in the README, a guide or a notebook needs `scripts/build_docs.py --draw-diagrams`."""
    assert len(diagram_sources()) >= 2  # the README's (the same in 04), and the Chinese 04's
    assert {diagram_file(source).name for source in diagram_sources()} == {path.name for path in DIAGRAMS.glob("*")}


def test_a_diagram_without_a_committed_svg_is_drawn_at_build_time(monkeypatch):
    monkeypatch.setattr(pages_module, "draw_diagram", lambda source: f"<svg>{len(source)}</svg>")
    rendered = html_of("```mermaid\nflowchart LR\n  A --> B\n```\n")
    assert rendered == '<div class="mermaid-diagram"><svg>23</svg></div>\n'


@pytest.mark.slow
def test_the_committed_svg_is_what_mermaidx_draws_from_its_source():
    """One diagram (a second each): the drawing works offline, and the committed SVGs are mermaidx's."""
    source = next(source for source in diagram_sources() if "一张工单" not in source)
    assert draw_diagram(source) == diagram_file(source).read_text()


def test_the_pages_and_the_tests_skip_jsonschemas_iri_parsers():
    """Importing rfc3987_syntax (jsonschema's "iri" format, under nbformat) builds 38 Lark parsers, about 3 s."""
    assert "rfc3987_syntax" in sys.modules and sys.modules["rfc3987_syntax"] is None


@pytest.mark.parametrize("heading, github", [
    ("Layout", "layout"), ("Read it offline, teach it", "read-it-offline-teach-it"),
    ("Teaching the cookbook: a 45-minute lesson", "teaching-the-cookbook-a-45-minute-lesson"),
    ("运行中文版", "运行中文版"), ("The wrapper: ask_with_memory()", "the-wrapper-ask_with_memory"),
    ("Setup", "setup")])
def test_a_heading_gets_the_id_github_gives_it(heading, github):
    assert github_id(heading) == github


def test_each_document_page_has_every_in_page_anchor_it_links(tmp_path):
    unresolved, linked = [], 0
    for document in documents():
        page = (tmp_path / site_path(document))
        document_pages(document, tmp_path, document.name)
        text = page.read_text()
        anchors = [unquote(target[1:]) for target in HTML_LINK.findall(text) if target.startswith("#")]
        linked += len(anchors)
        unresolved += [f"{page.name} → #{anchor}" for anchor in sorted(set(anchors) - set(HTML_ID.findall(text)))]
    assert linked and unresolved == []


def test_a_repeated_heading_gets_the_next_free_id_as_on_github(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# Notes\n\n## Setup\n\n## Setup\n\nSee [the second](#setup-1).\n")
    rendered = mistune_html(readme)
    assert re.findall(r'<h2 id="([^"]+)"', rendered) == ["setup", "setup-1"]


def mistune_html(readme):
    import mistune
    renderer = pages_module.DocumentPageRenderer(SiteLinks(readme, site_path(ROOT / "README.md")))
    return mistune.create_markdown(renderer=renderer)(readme.read_text())


def test_a_notebook_is_titled_by_its_h1_as_plain_text():
    notebook = nbformat.read(ROOT / "notebooks" / "04_wrapper.ipynb", as_version=4)
    assert notebook.cells[0].source.startswith("# 04 · The wrapper: `ask_with_memory()`")
    assert notebook_title(notebook) == "04 · The wrapper: ask_with_memory()"


def test_the_notebook_template_loads_nothing_from_a_cdn_and_shows_a_widget_as_its_text():
    notebook = nbformat.v4.new_notebook(metadata={"widgets": {"application/vnd.jupyter.widget-state+json": {
        "state": {"abc": {}}, "version_major": 2, "version_minor": 0}}})
    notebook.cells = [nbformat.v4.new_markdown_cell("$x^2$"), nbformat.v4.new_code_cell("w", outputs=[
        nbformat.v4.new_output("display_data", data={"text/plain": "A widget as text", "application/vnd.jupyter."
                                                     "widget-view+json": {"model_id": "abc", "version_major": 2}})])]
    page, _ = NotebookPage().from_notebook_node(notebook, resources={"page_css": "p {}",
                                                                    "site_links": SiteLinks(NOTEBOOK, PAGE)})
    assert "<script" not in page and "cdn" not in page.lower() and "unpkg" not in page
    assert "A widget as text" in page and "<style>p {}</style>" in page


def test_a_notebook_pages_images_have_an_alt_text_and_its_inputs_and_outputs_are_focusable():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("chart()", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})]),
        nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")])])
    page, _ = NotebookPage().from_notebook_node(notebook, resources={"page_css": "", "site_links": SiteLinks(NOTEBOOK,
                                                                                                            PAGE)})
    images = re.findall(r"<img[^>]*>", page)
    assert len(images) == 1 and 'alt="No description has been provided for this image"' in images[0]
    wrappers = re.findall(r'<div class="[^"]*\b(jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*"([^>]*)>', page)
    assert sorted(kind for kind, _ in wrappers) == ["jp-Cell-inputWrapper"] * 2 + ["jp-OutputArea-output"] * 2
    assert all('tabindex="0"' in attributes for _, attributes in wrappers)


@pytest.mark.slow
def test_a_hidden_code_cell_starts_folded_on_both_pages_labelled_in_the_pages_language(site):
    for name, label in (("03_gate", "Show the code"), ("03_gate.zh", "显示代码")):
        for page in (site / f"{name}.html", site / f"{name}.md"):
            assert page.read_text().count(f"<summary>{label}</summary>") == 1, page.name


# The site, built once per test session (slow: about 2 s; with --run-network by the classroom kit's check, which copies
# these same pages into its kit, in the background from the start)

@pytest.fixture(scope="session")
def site_build(pytestconfig, tmp_path_factory):
    """The site (conftest.built_site: counting each template's compilations and the diagrams drawn)."""
    return pages_built_by_the_kit(pytestconfig) or built_site(tmp_path_factory.mktemp("site"))


@pytest.fixture
def site(site_build):
    return site_build.out


def pages(site, suffix):
    return sorted(site.glob(f"**/*{suffix}"))


@pytest.mark.slow
def test_every_notebook_has_an_html_and_a_markdown_page(site):
    for path in notebook_paths():
        assert (site / site_path(path)).is_file() and (site / site_path(path).with_suffix(".md")).is_file(), path


@pytest.mark.slow
def test_every_local_link_and_image_resolves(site):
    broken = []
    for page in [*pages(site, ".html"), *pages(site, ".md"), site / "llms.txt"]:
        for target in links(page):
            if not re.match(r"[a-z]+:|#|//", target) and not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(site)} → {target}")
    assert broken == []


@pytest.mark.slow
def test_next_links_point_at_pages_not_notebooks(site):
    assert "02_routing.html" in (site / "01_tickets.html").read_text()
    assert [page.name for page in pages(site, ".html") if ".ipynb\"" in page.read_text()] == []


@pytest.mark.slow
def test_no_page_fetches_from_another_host(site):
    assert {page.name: FETCHES.findall(page.read_text()) for page in pages(site, ".html")
            if FETCHES.search(page.read_text())} == {}


@pytest.mark.slow
def test_no_page_runs_a_script(site):
    assert [page.name for page in pages(site, ".html") if "<script" in page.read_text()] == []


@pytest.mark.slow
def test_every_page_closes_each_details_it_opens(site):
    for page in [*pages(site, ".html"), *pages(site, ".md")]:
        text = page.read_text()
        assert text.count("<details") == text.count("</details>"), page.name


@pytest.mark.slow
def test_the_explorer_shows_as_text_and_its_static_chart_as_an_image_on_the_05_pages(site):
    for page in (site / "05_probe_sequence.html", site / "05_probe_sequence.md"):
        text = page.read_text()
        assert "Memory explorer (runs in JupyterLab)" in text and "widget-view" not in text, page.name


@pytest.mark.slow
def test_diagrams_are_drawn_into_the_page(site):
    assert "<svg" in (site / "04_wrapper.html").read_text() and "<svg" in (site / "index.html").read_text()
    assert "```mermaid" not in (site / "04_wrapper.html").read_text()


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_chinese_teachers_guide_is_a_chinese_page_that_links_the_chinese_notebooks(site):
    page = site / site_path(CHINESE_GUIDE)
    assert page.name == "teaching.zh.html" and page.with_suffix(".md").is_file()
    assert page.read_text().startswith('<!DOCTYPE html>\n<html lang="zh">')
    notebooks, english = ([target for target in links(guide) if re.match(r"\d\d_", target)]
                          for guide in (page, site / site_path(ROOT / "docs" / "teaching.md")))
    assert len(english) >= 6 and notebooks == [target.replace(".html", ".zh.html") for target in english], notebooks


@pytest.mark.slow
def test_llms_txt_lists_the_chinese_guide_by_its_title_and_first_sentence(site):
    text = CHINESE_GUIDE.read_text()
    opening = ParsedMarkdown(text).first_paragraph()
    entry = f"- [{first_heading(text)}](teaching.zh.md): {opening[:opening.index('。') + 1]}\n"
    assert entry in (site / "llms.txt").read_text()


@pytest.mark.slow
def test_llms_txt_describes_each_notebook_by_its_row_in_the_readme_of_its_language(site):
    text = (site / "llms.txt").read_text()
    for readme in (README, CHINESE_README):
        rows = ParsedMarkdown(readme.read_text()).linked_rows()
        notebook_rows = {target: row for target, row in rows.items() if target.startswith("notebooks/")}
        assert len(notebook_rows) == len(ENGLISH_NOTEBOOKS) == 10, readme.name
        for target, row in notebook_rows.items():
            page = site_path(ROOT / target).with_suffix(".md").as_posix()
            assert re.search(rf"^- \[[^\]]+\]\({re.escape(page)}\): {re.escape(row)}$", text, re.M), target


@pytest.mark.slow
def test_every_document_has_an_html_and_a_markdown_page_in_its_language(site):
    for document in documents():
        page = site / site_path(document)
        assert page.with_suffix(".md").is_file(), document.name
        language = "zh" if document.name.endswith(".zh.md") else "en"
        assert page.read_text().startswith(f'<!DOCTYPE html>\n<html lang="{language}">'), document.name
    assert (site / "index.html").is_file() and (site / "index.zh.html").is_file()
    assert (site / "LICENSE.txt").read_text() == (ROOT / "LICENSE").read_text()


@pytest.mark.slow
def test_the_06_page_carries_the_result_table_and_the_totals(site):
    page = re.sub(r"<[^>]+>", "", (site / "06_final_comparison.html").read_text())
    for row in [line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| C-")]:
        customer, message, expected, plain, memory = [cell.strip() for cell in row.strip("|").split("|")]
        assert re.search(rf"{customer}\s*{message}\s*{expected}\s*{re.escape(plain)}\s*{re.escape(memory)}", page), row
    assert totals_line() in page


@pytest.mark.slow
def test_the_index_is_the_readme_with_its_notebook_list_linking_to_the_pages(site):
    index = (site / "index.html").read_text()
    assert len(ENGLISH_NOTEBOOKS) == 10
    assert all(f'href="{site_path(path).as_posix()}"' in index for path in ENGLISH_NOTEBOOKS)


@pytest.mark.slow
def test_try_it_answers_are_folded_on_the_pages(site):
    for path in notebook_paths():
        answers = sum(bool(cell.metadata.get("jupyter", {}).get("source_hidden"))
                      for cell in nbformat.read(path, as_version=4).cells)
        for page in (site / site_path(path), site / site_path(path).with_suffix(".md")):
            label = folded.CHINESE_SUMMARY if path.name.endswith(".zh.ipynb") else folded.SUMMARY
            assert page.read_text().count(f"<details><summary>{label}</summary>") == answers, page.name


@pytest.mark.slow
def test_each_notebook_page_is_titled_by_its_notebooks_h1(site):
    for path in notebook_paths():
        heading = nbformat.read(path, as_version=4).cells[0].source.splitlines()[0]
        title = re.search(r"<title>(.*?)</title>", (site / site_path(path)).read_text(), re.S).group(1)
        assert html.unescape(title.strip()) == heading.removeprefix("# ").replace("`", ""), path.name


def anchor_targets(page, target):
    """The page a link with an anchor points at, and its anchor (None for a link without one or to another host)."""
    path, _, anchor = target.partition("#")
    if not anchor or re.match(r"[a-z]+:|//", target):
        return None, None
    return (page.parent / path if path else page), anchor


@pytest.mark.slow
def test_every_anchor_on_an_html_page_names_an_id_of_the_page_it_points_at(site):
    ids = {page.resolve(): set(HTML_ID.findall(page.read_text())) for page in pages(site, ".html")}
    unresolved = []
    for page in pages(site, ".html"):
        for target in HTML_LINK.findall(page.read_text()):
            linked, anchor = anchor_targets(page, target)
            if linked and not {anchor, unquote(anchor)} & ids.get(linked.resolve(), set()):
                unresolved.append(f"{page.relative_to(site)} → {target}")
    assert unresolved == []


@pytest.mark.slow
def test_every_anchor_on_a_markdown_page_names_a_heading_of_the_page_it_points_at(site):
    """As GitHub and most Markdown readers id a heading: lower case, hyphens for spaces, no punctuation. (The README's
    pages are both index.html: a Markdown page's link to it names an id of the HTML page.)"""
    unresolved = []
    for page in pages(site, ".md"):
        for target in links(page):
            linked, anchor = anchor_targets(page, target)
            if not linked:
                continue
            if linked.suffix == ".html":
                ids = set(HTML_ID.findall(linked.read_text()))
            else:
                headings = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", linked.read_text(), flags=re.S), re.M)
                ids = {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}
            if unquote(anchor) not in ids and anchor not in ids:  # a Chinese heading's id comes percent-encoded
                unresolved.append(f"{page.relative_to(site)} → {target}")
    assert unresolved == []


@pytest.mark.slow
def test_the_notebooks_links_to_the_readme_point_at_the_index_on_both_pages(site):
    linking = [path for path in notebook_paths() if "../README.md" in path.read_text()]
    assert len(linking) >= 2  # 01 and 08, and their Chinese twins
    for path in linking:
        assert re.search(r'href="index\.html(#[^"]+)?"', (site / site_path(path)).read_text()), path.name
        markdown_page = (site / site_path(path).with_suffix(".md")).read_text()
        assert re.search(r"\]\(index\.html(#[^)]+)?\)", markdown_page), path.name


@pytest.mark.slow
def test_each_template_is_compiled_once_per_build(site_build):
    """One HTML and one Markdown exporter serve all 16 notebooks; the templates both extend (base/null.j2) are
    compiled once by each."""
    assert site_build.compiled["page.html.j2"] == 1 and site_build.compiled["page.md.j2"] == 1
    assert {name: count for name, count in site_build.compiled.items() if count > 2} == {}


@pytest.mark.slow
def test_the_build_draws_no_diagram_it_has_a_committed_svg_for(site_build):
    assert site_build.drawn == []


@pytest.mark.slow
def test_each_notebook_page_declares_the_language_it_is_written_in(site):
    for path in notebook_paths():
        language = "zh" if path.name.endswith(".zh.ipynb") else "en"
        assert f'<html lang="{language}">' in (site / site_path(path)).read_text(), path.name


def style_rules(page):
    """{selector: declarations} of a page's <style> blocks, one entry per selector of a rule."""
    css = re.sub(r"/\*.*?\*/", "", " ".join(re.findall(r"<style>(.*?)</style>", page, re.S)), flags=re.S)
    return {selector.strip(): declarations for selectors, declarations in re.findall(r"([^{}]+)\{([^}]*)\}", css)
            for selector in selectors.split(",")}


@pytest.mark.slow
def test_a_wide_table_scrolls_in_its_own_box_on_a_phone_not_the_page(site):
    """At a phone's width the README's result table is wider than the screen: it must scroll inside itself."""
    for name, selector in (("index.html", "table"), ("06_final_comparison.html", ".jp-OutputArea-output table")):
        page = (site / name).read_text()
        declarations = re.sub(r"\s+", " ", style_rules(page)[selector])
        assert "<table" in page and "display: block" in declarations and "overflow-x: auto" in declarations, name
