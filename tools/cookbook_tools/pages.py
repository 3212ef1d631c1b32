"""The cookbook's pages, built from the committed notebooks for reading offline: no re-execution, no network.

For every notebook (the Chinese edition too): an HTML page and a Markdown page (prose, code, text outputs, images
beside it). Beside them: a page for each of the project's Markdown documents (index.html from the README,
index.zh.html from README.zh.md, CONTRIBUTING and every page of docs/), the LICENSE as LICENSE.txt, and llms.txt, an
index of the Markdown pages for people and agents (https://llmstxt.org). It rests on nbconvert's and mistune's
own extension points:

- templates/page.html.j2 and page.md.j2 extend nbconvert's lab and markdown templates: the blocks that load
  require.js, MathJax, mermaid and the widget manager from a CDN are empty, the page's CSS is a block, a widget
  shows its text, and a cell JupyterLab shows collapsed starts collapsed. (A Try it answer folds itself: its output
  is HTML <details>, see memory_cookbook/classroom/folded.py.)
- PageRenderer (HTML) and MarkdownPageRenderer (Markdown) are mistune renderers that point local links at the pages
  and put mermaid diagrams in as SVG; code spans and code blocks are left as they are. Each diagram is drawn once and
  its SVG committed in docs/diagrams/, named by a hash of its source (`scripts/build_docs.py --draw-diagrams` draws
  them with mermaidx, mermaid.js in an embedded JavaScript engine: about a second a diagram).
- One HTML and one Markdown exporter serve every notebook of a build: each template is compiled once.
- The documents' headings get GitHub's ids (`#layout`), the ones their links are written for; a
  notebook's headings keep JupyterLab's (`#Setup`), and its page is titled by its H1.
"""

import argparse
import functools
import hashlib
import html
import json
import re
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import mistune
import nbformat
from jinja2 import pass_context
from mistune.renderers.markdown import MarkdownRenderer
from nbconvert import HTMLExporter, MarkdownExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

from cookbook_tools.paths import CHINESE_NOTEBOOKS, ENGLISH_NOTEBOOKS, ROOT

TEMPLATES = Path(__file__).resolve().parent / "templates"
DIAGRAMS = ROOT / "docs" / "diagrams"
README, CHINESE_README = ROOT / "README.md", ROOT / "README.zh.md"
LICENSE = ROOT / "LICENSE"


def documents() -> list[Path]:
    """The project's Markdown documents that get a page: the two READMEs, CONTRIBUTING, and every page of docs/."""
    return [README, CHINESE_README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


MARKDOWN_PLUGINS = ["strikethrough", "table"]
# A command longer than the column wraps onto the next line instead of running past the right edge.
# A table wider than a phone's screen scrolls inside its own box, so that the page itself never scrolls sideways.
PAGE_STYLE = """body { max-width: 72rem; margin: 2rem auto; padding: 0 1rem; font: 16px/1.55 system-ui, sans-serif;
  color: #1f2328; overflow-wrap: break-word; }
table { border-collapse: collapse; display: block; max-width: 100%; overflow-x: auto; }
td, th { border: 1px solid #d0d7de; padding: .3rem .6rem; }
pre, code { background: #f6f8fa; font-size: 90%; } pre { padding: .8rem; white-space: pre-wrap;
  overflow-wrap: anywhere; }
a { color: #0969da; } a.anchor-link { display: none; margin-left: .3rem; text-decoration: none; }
:hover > a.anchor-link { display: inline; }"""
# mermaidx measures labels with DejaVu Sans, which has no CJK glyphs, so a Chinese label can come out wider than its
# box: let it show past the box rather than be cut off (the Chinese diagram also asks mermaid for wider padding).
DIAGRAM_STYLE = (".mermaid-diagram svg { max-width: 100%; height: auto; }"
                 " .mermaid-diagram foreignObject { overflow: visible; }")
SHOW_CODE = {"en": "Show the code", "zh": "显示代码"}  # a hidden code cell's label, in the page's language
NOTEBOOK_STYLE = DIAGRAM_STYLE + """
details > summary { margin: .5rem 0; font: 600 14px system-ui, sans-serif; color: #0969da; cursor: pointer; }
details.hidden-source > summary { margin-left: 70px; }
.jp-OutputArea-output td:not(:last-child) { white-space: nowrap; }
.jp-RenderedHTMLCommon table, .jp-OutputArea-output table { display: block; max-width: 100%; overflow-x: auto; }"""
# (dates and ids stay whole, the last column wraps; a table wider than the screen scrolls in its own box)


def notebook_paths() -> list[Path]:
    """Every notebook of the cookbook, the Chinese edition's too, in reading order."""
    return sorted([*ENGLISH_NOTEBOOKS, *CHINESE_NOTEBOOKS])


def site_path(repo_path: Path) -> Path | None:
    """Where a file of the repository lives in the site (relative to its root), or None if the site lacks it."""
    resolved = repo_path.resolve()
    if not resolved.is_relative_to(ROOT):
        return None
    relative = resolved.relative_to(ROOT)
    if resolved == README:
        return Path("index.html")
    if resolved == CHINESE_README:
        return Path("index.zh.html")
    if resolved == LICENSE:
        return Path("LICENSE.txt")
    if relative.suffix == ".ipynb" and relative.parts[0] == "notebooks":
        return Path(*relative.parts[1:]).with_suffix(".html")
    if resolved in [document.resolve() for document in documents()]:
        return Path(relative.name).with_suffix(".html")
    if relative.parts[0] == "notebooks" and repo_path.is_file():
        return Path(*relative.parts[1:])  # a module beside the notebooks, copied as it is
    if relative.parts[0] == "memory_cookbook" and relative.suffix == ".py" and repo_path.is_file():
        return relative  # a module of the package, copied as it is
    return None


class SiteLinks:
    """Rewrites the links of a text written at repository file `source` for the site page at `page` (a Markdown page
    links the Markdown pages), and remembers the files they reach that the site copies as they are."""

    def __init__(self, source: Path, page: Path, markdown_pages: bool = False) -> None:
        self.source, self.page, self.markdown_pages = source, page, markdown_pages
        self.files = set()

    def __deepcopy__(self, memo: dict[int, Any]) -> "SiteLinks":
        return self  # nbconvert copies a page's resources to render it: the files its links reach stay recorded here

    def __call__(self, target: str) -> str:
        path, _, anchor = target.partition("#")
        if re.match(r"[a-z]+:", target) or not path:
            return target
        repo_path = self.source.parent / path
        target_site = site_path(repo_path)
        if target_site is None:
            return target
        if repo_path.is_file() and repo_path.suffix not in (".ipynb", ".md"):  # a module, the LICENSE
            self.files.add(repo_path)
        if self.markdown_pages and target_site.suffix == ".html" and target_site != Path("index.html"):
            target_site = target_site.with_suffix(".md")
            if anchor and repo_path.suffix == ".ipynb":
                anchor = github_id(unquote(anchor))  # a Markdown reader ids a heading as GitHub does
        relative = Path(*([".."] * (len(self.page.parts) - 1)), target_site).as_posix()
        return relative + ("#" + anchor if anchor else "")


def github_id(heading: str) -> str:
    """The id GitHub gives a heading with this text: lower case, spaces as hyphens, punctuation dropped."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def diagram_file(source: str) -> Path:
    """Where the SVG drawn for this mermaid source is committed."""
    return DIAGRAMS / f"{hashlib.sha256(source.strip().encode()).hexdigest()[:16]}.svg"


def draw_diagram(source: str) -> str:
    """A mermaid diagram drawn as SVG, offline (about a second)."""
    import mermaidx  # only to draw a diagram: a build uses the committed SVGs

    return mermaidx.render(source).svg()


def diagram_sources() -> list[str]:
    """The source of every mermaid diagram the pages show: in the documents and the notebooks."""
    texts = [path.read_text() for path in documents()]
    # The notebooks' JSON as it is (nbformat's validation would double this quick-loop check's time); only a text
    # that names mermaid is parsed.
    texts += ["".join(cell["source"]) for path in notebook_paths() for cell in json.loads(path.read_text())["cells"]
              if cell["cell_type"] == "markdown"]
    tokens = [token for text in texts if "mermaid" in text for token in iter_tokens(ParsedMarkdown(text).tokens)]
    return sorted({token["raw"] for token in tokens if token["type"] == "block_code"
                   and (token.get("attrs", {}).get("info") or "").split()[:1] == ["mermaid"]})


def draw_diagrams() -> list[Path]:
    """Draw every diagram the pages show into docs/diagrams/, and remove the SVGs no diagram uses any more."""
    DIAGRAMS.mkdir(exist_ok=True)
    wanted = {diagram_file(source): source for source in diagram_sources()}
    for path in set(DIAGRAMS.glob("*.svg")) - set(wanted):
        path.unlink()
    for path, source in wanted.items():
        path.write_text(draw_diagram(source))
    return sorted(wanted)


@functools.cache
def mermaid_svg(source: str) -> str:
    """The SVG committed for a mermaid diagram; a diagram without one (new, or edited) is drawn now."""
    committed = diagram_file(source)
    return committed.read_text() if committed.is_file() else draw_diagram(source)


class PageRenderer(IPythonRenderer):
    """nbconvert's Markdown-to-HTML renderer, with local links pointing at the pages and mermaid drawn as SVG."""

    def __init__(self, links: "SiteLinks", **options: Any) -> None:
        super().__init__(escape=False, **options)
        self.links = links

    def link(self, text: str, url: str, title: str | None = None) -> str:
        return super().link(text, self.links(url), title)

    def image(self, text: str, url: str, title: str | None = None) -> str:
        return super().image(text, self.links(url), title)

    def block_code(self, code: str, info: str | None = None) -> str:
        if info and info.split()[0] == "mermaid":
            return f'<div class="mermaid-diagram">{mermaid_svg(code)}</div>\n'
        return super().block_code(code, info)


class DocumentPageRenderer(PageRenderer):
    """PageRenderer for a Markdown file of the repository: its headings get the ids GitHub gives them, the ones its
    links (`#layout`) are written for; a repeated heading's id gets -1, -2, ... as on GitHub."""

    def __init__(self, links: "SiteLinks") -> None:
        super().__init__(links)
        self.ids: set[str] = set()

    def heading(self, text: str, level: int, **attrs: Any) -> str:
        base = candidate = github_id(html.unescape(re.sub(r"<[^>]+>", "", text)))
        suffix = 0
        while candidate in self.ids:
            suffix += 1
            candidate = f"{base}-{suffix}"
        self.ids.add(candidate)
        return (f'<h{level} id="{candidate}">{text}<a class="anchor-link" href="#{candidate}">'
                f"{self.anchor_link_text}</a></h{level}>\n")


class MarkdownPageRenderer(MarkdownRenderer):
    """Markdown back to Markdown, with local links pointing at the pages (mermaid stays a code block: GitHub and most
    Markdown readers draw it)."""

    def __init__(self, links: "SiteLinks") -> None:
        super().__init__()
        self.links = links

    def link(self, token: dict[str, Any], state: Any) -> str:
        token["attrs"]["url"] = self.links(token["attrs"]["url"])
        return super().link(token, state)

    def image(self, token: dict[str, Any], state: Any) -> str:
        token["attrs"]["url"] = self.links(token["attrs"]["url"])
        return super().image(token, state)


def markdown_page_text(text: str, links: "SiteLinks") -> str:
    return mistune.create_markdown(renderer=MarkdownPageRenderer(links), plugins=MARKDOWN_PLUGINS)(text)


IMAGE_WITHOUT_ALT = re.compile(r"<img(?![^>]*\salt=)")
FOCUSABLE = re.compile(r'<div class="([^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*)"')


class NotebookPage(HTMLExporter):
    """nbconvert's HTML exporter with the cookbook's template and renderer; one serves every page of a build (its
    templates are compiled once), each page's links come in its resources as `site_links`. The committed notebooks
    are validated once after nbconvert's preprocessing, not after each of its steps. What HTMLExporter does to the
    finished page (an alt text for an image without one, inputs and outputs focusable) is done on its text: its
    BeautifulSoup pass over every tag took half the build."""

    def __init__(self) -> None:
        super().__init__(template_name="lab", template_file="page.html.j2", extra_template_paths=[str(TEMPLATES)],
                         optimistic_validation=True)

    @pass_context
    def markdown2html(self, context: Any, source: str) -> str:
        cell = context.get("cell", {})
        renderer = PageRenderer(context["resources"]["site_links"], attachments=cell.get("attachments", {}),
                                anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links)
        return MarkdownWithMath(renderer=renderer).render(source)

    def from_notebook_node(self, nb: Any, resources: dict[str, Any] | None = None, **kw: Any) -> Any:
        """HTMLExporter.from_notebook_node (nbconvert 7.17), its page finished with two substitutions."""
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name", None))
        self.register_filter("highlight_code", self.filters.get("highlight_code",
                                                                Highlight2HTML(pygments_lexer=lexer, parent=self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata,
                                                                       parent=self, resources=resources))
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        page = IMAGE_WITHOUT_ALT.sub('<img alt="No description has been provided for this image"', page)
        return FOCUSABLE.sub(r'<div class="\1" tabindex="0"', page), resources


@pass_context
def site_markdown(context: Any, text: str) -> str:
    return markdown_page_text(text, context["resources"]["site_links"])


class NotebookMarkdownPage(MarkdownExporter):
    """nbconvert's Markdown exporter with the cookbook's template; like NotebookPage, one serves a whole build."""

    def __init__(self) -> None:
        super().__init__(template_name="markdown", template_file="page.md.j2", extra_template_paths=[str(TEMPLATES)],
                         filters={"site_markdown": site_markdown}, optimistic_validation=True)


def notebook_pages(notebook_path: Path, out: Path, html_exporter: Any, markdown_exporter: Any) -> set[Path]:
    """Write the notebook's HTML page and Markdown page (with its images beside it); return the files it links to."""
    page = site_path(notebook_path)
    notebook = nbformat.read(notebook_path, as_version=4)
    html_links, markdown_links = SiteLinks(notebook_path, page), SiteLinks(notebook_path, page, markdown_pages=True)
    language = page_language(notebook_path)
    show_code = SHOW_CODE[language]
    html_exporter.language_code = language  # <html lang>: one exporter serves every page
    body, _ = html_exporter.from_notebook_node(notebook, resources={
        "page_css": NOTEBOOK_STYLE, "site_links": html_links, "metadata": {"name": notebook_title(notebook)},
        "show_code": show_code})
    (out / page).parent.mkdir(parents=True, exist_ok=True)
    (out / page).write_text(body)
    markdown, resources = markdown_exporter.from_notebook_node(notebook, resources={
        "output_files_dir": f"{page.stem}_files", "site_links": markdown_links, "show_code": show_code})
    (out / page.with_suffix(".md")).write_text(markdown)
    for name, data in resources.get("outputs", {}).items():
        (out / page.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (out / page.parent / name).write_bytes(data)
    return html_links.files | markdown_links.files


def document_pages(source: Path, out: Path, title: str) -> set[Path]:
    """A Markdown document of the repository (a README, a page of docs/) as an HTML page, and as Markdown beside it;
    return the files it links to."""
    page = site_path(source)
    text = source.read_text()
    html_links, markdown_links = SiteLinks(source, page), SiteLinks(source, page, markdown_pages=True)
    body = mistune.create_markdown(renderer=DocumentPageRenderer(html_links), plugins=MARKDOWN_PLUGINS)(text)
    (out / page).write_text(f"<!DOCTYPE html>\n<html lang=\"{page_language(source)}\"><head><meta charset=\"utf-8\">"
                            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                            f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}\n{DIAGRAM_STYLE}</style></head>"
                            f"<body>\n{body}</body></html>\n")
    (out / page.with_suffix(".md")).write_text(markdown_page_text(text, markdown_links))
    return html_links.files | markdown_links.files


def page_language(source: Path) -> str:
    """The language of a page: Chinese for a NAME.zh.md or NAME.zh.ipynb file, else English (the README holds both)."""
    return "zh" if source.name.endswith((".zh.md", ".zh.ipynb")) else "en"


def first_heading(text: str) -> str:
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


def notebook_title(notebook: Any) -> str:
    """A notebook's H1 (in its first cell, by the house rules), as plain text."""
    return ParsedMarkdown(first_heading(notebook.cells[0].source)).plain_text()


def first_sentences(text: str, count: int = 1) -> str:
    """The first `count` sentences of a paragraph, on one line."""
    sentences = re.split(r"(?<=\.)\s+|(?<=。)\s*", " ".join(text.split()))  # Chinese puts no space after 。
    return " ".join(sentences[:count])


def iter_tokens(tokens: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for token in tokens:
        yield token
        yield from iter_tokens(token.get("children", []))


class ParsedMarkdown:
    """A Markdown document as mistune's tokens: its first paragraph, and its tables' rows, each cell as Markdown."""

    def __init__(self, text: str) -> None:
        self.tokens, self.state = mistune.create_markdown(renderer=None, plugins=MARKDOWN_PLUGINS).parse(text)

    def markdown(self, children: list[dict[str, Any]]) -> str:
        return MarkdownRenderer().render_tokens(children, self.state).strip()

    def plain_text(self) -> str:
        """The document's text without its Markdown: `code` and [links](x) as their words."""
        return "".join(token.get("raw", "") for token in iter_tokens(self.tokens) if "children" not in token)

    def first_paragraph(self) -> str:
        """The first paragraph that is more than links (a README opens with a link to its other language)."""
        return self.markdown(next(token for token in self.tokens if token["type"] == "paragraph" and any(
            child["type"] not in ("link", "softbreak") and child.get("raw", "").strip()
            for child in token["children"]))["children"])

    def linked_rows(self) -> dict[str, str]:
        """{the link of a row's first cell: the row's second cell} over every table body."""
        rows = [row for table in self.tokens if table["type"] == "table" for part in table["children"]
                if part["type"] == "table_body" for row in part["children"]]
        return {link["attrs"]["url"]: self.markdown(row["children"][1]["children"]) for row in rows
                for link in row["children"][0]["children"] if link["type"] == "link"}


def summary(notebook_path: Path, readme: "ParsedMarkdown") -> tuple[str, str]:
    """The notebook's H1, and what it builds: its row in the READMEs' notebook tables, or else the first sentence of
    its goal paragraph."""
    first = nbformat.read(notebook_path, as_version=4).cells[0].source
    row = readme.linked_rows().get(f"notebooks/{notebook_path.name}")
    return first_heading(first), row or first_sentences(ParsedMarkdown(first).first_paragraph())


def llms_txt(notebooks: list[Path]) -> str:
    """llms.txt (https://llmstxt.org): the README's title and opening, then every Markdown page with what it holds."""
    readme_text = README.read_text()
    readme = ParsedMarkdown(readme_text)
    rows = ParsedMarkdown(f"{readme_text}\n\n{CHINESE_README.read_text()}")
    lines = [f"# {first_heading(readme_text)}", "", f"> {first_sentences(readme.first_paragraph(), 2)}", ""]
    chinese = [path for path in notebooks if path.name.endswith(".zh.ipynb")]
    for heading, paths in (("Notebooks", [path for path in notebooks if path not in chinese]),
                           ("Chinese edition (中文版)", chinese)):
        lines += [f"## {heading}", "", *(f"- [{title}]({site_path(path).with_suffix('.md').as_posix()}): {goal}"
                                         for path in paths for title, goal in [summary(path, rows)]), ""]
    guides = [(path, path.read_text()) for path in documents()]
    lines += ["## Guides", "", *(f"- [{first_heading(text)}]({site_path(path).with_suffix('.md').as_posix()}): "
                                 f"{first_sentences(ParsedMarkdown(text).first_paragraph())}" for path, text in guides)]
    return "\n".join(lines) + "\n"


def build(out: Path) -> list[Path]:
    """Write the site into the folder `out`; return the notebooks it has pages for."""
    out.mkdir(parents=True, exist_ok=True)
    notebooks = notebook_paths()
    copies = set()
    html_exporter, markdown_exporter = NotebookPage(), NotebookMarkdownPage()
    for path in notebooks:
        copies |= notebook_pages(path, out, html_exporter, markdown_exporter)
    for document in documents():
        copies |= document_pages(document, out, first_heading(document.read_text()))
    for path in copies:
        (out / site_path(path)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out / site_path(path))
    (out / "llms.txt").write_text(llms_txt(notebooks))
    return notebooks


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the cookbook's pages from the committed notebooks.")
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="the folder to build into (default: site/)")
    parser.add_argument("--draw-diagrams", action="store_true",
                        help="draw every mermaid diagram into docs/diagrams/ (committed; the build reads them there)")
    arguments = parser.parse_args()
    if arguments.draw_diagrams:
        print(f"drew {len(draw_diagrams())} diagrams into {DIAGRAMS}")
        return
    out = arguments.out.resolve()
    notebooks = build(out)
    print(f"built {len(notebooks)} notebook pages, index.html and llms.txt into {out}; open {out / 'index.html'}")

