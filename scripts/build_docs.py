"""Build the cookbook's pages from the committed notebooks, for reading offline: no re-execution, no network.

    python scripts/build_docs.py              # into site/
    python scripts/build_docs.py --out DIR    # elsewhere

For every notebook under notebooks/ (the Chinese edition too): an HTML page (code highlighted, tables and charts
shown, links between notebooks pointing at the pages) and a Markdown page (prose, code, text outputs, images beside
it). Beside them: index.html from the README, the teacher's guide, and llms.txt, an index of the Markdown pages for
people and agents (https://llmstxt.org). A page fetches nothing from another host: nbconvert's script tags for
require.js, MathJax and mermaid (all from a CDN) are taken out, and mermaid diagrams are drawn into the page as SVG at
build time by mermaidx (mermaid.js in an embedded JavaScript engine, installed from PyPI).
"""

import argparse
import functools
import html
import re
import shutil
from pathlib import Path

import mermaidx
import mistune
import nbformat
from export_module import ROOT
from nbconvert import HTMLExporter, MarkdownExporter

NOTEBOOKS = ROOT / "notebooks"
GUIDES = [ROOT / "docs" / "teaching.md"]
MERMAID = re.compile(r"```mermaid\n(.*?)```", re.S)
LINK = re.compile(r"(\]\(|href=\"|src=\")([^)\"\s]+)")
REMOTE_SCRIPT = re.compile(r"<script[^>]*\bsrc=\"(https?:)?//[^\"]*\"[^>]*>\s*</script>|"
                           r"<script type=\"module\">(?:(?!</script>).)*?https?://(?:(?!</script>).)*</script>", re.S)
PAGE_STYLE = """body { max-width: 60rem; margin: 2rem auto; padding: 0 1rem; font: 16px/1.55 system-ui, sans-serif;
  color: #1f2328; } table { border-collapse: collapse; } td, th { border: 1px solid #d0d7de; padding: .3rem .6rem; }
pre, code { background: #f6f8fa; font-size: 90%; } pre { padding: .8rem; overflow-x: auto; }
a { color: #0969da; } .mermaid-diagram svg { max-width: 100%; height: auto; }"""
# mermaidx measures labels with DejaVu Sans, which has no CJK glyphs, so a Chinese label can come out wider than its
# box: let it show past the box rather than be cut off (the Chinese diagram also asks mermaid for wider padding).
DIAGRAM_STYLE = ".mermaid-diagram foreignObject { overflow: visible; }"


def notebook_paths():
    """Every notebook of the cookbook, the Chinese edition's too, in reading order."""
    return sorted(path for path in NOTEBOOKS.glob("**/[0-9][0-9]_*.ipynb") if ".ipynb_checkpoints" not in path.parts)


def site_path(repo_path):
    """Where a file of the repository lives in the site (relative to its root), or None if the site lacks it."""
    relative = repo_path.resolve().relative_to(ROOT)
    if relative == Path("README.md"):
        return Path("index.html")
    if relative.suffix == ".ipynb" and relative.parts[0] == "notebooks":
        return Path(*relative.parts[1:]).with_suffix(".html")
    if repo_path.resolve() in [guide.resolve() for guide in GUIDES]:
        return Path(relative.name).with_suffix(".html")
    if relative.parts[0] == "notebooks" and repo_path.is_file():
        return Path(*relative.parts[1:])  # a module beside the notebooks, copied as it is
    return None


def relinked(text, source, page, markdown_pages=False):
    """`text` (written at repository file `source`) with each local link rewritten for the site page at `page`."""
    def rewrite(match):
        prefix, target = match.groups()
        if re.match(r"[a-z]+:|#|data:", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        target_site = site_path(source.parent / path) if path else None
        if target_site is None:
            return match.group(0)
        if markdown_pages and target_site.suffix == ".html" and target_site.name != "index.html":
            target_site = target_site.with_suffix(".md")
        relative = Path(*([".."] * (len(page.parts) - 1)), target_site).as_posix()
        return prefix + relative + ("#" + anchor if anchor else "")
    return LINK.sub(rewrite, text)


@functools.cache
def mermaid_svg(source):
    """A mermaid diagram drawn as SVG, offline."""
    return mermaidx.render(source).svg()


def with_diagrams_drawn(markdown):
    """Markdown with each ```mermaid block replaced by its SVG (raw HTML, which Markdown passes through)."""
    return MERMAID.sub(lambda match: f'<div class="mermaid-diagram"><style>{DIAGRAM_STYLE}</style>'
                                     f'{mermaid_svg(match.group(1))}</div>\n', markdown)


def local_file_links(text, source):
    """The repository files that `text` (written at `source`) links to and the site copies as they are."""
    for _, target in LINK.findall(text):
        path = source.parent / target.split("#")[0]
        if not re.match(r"[a-z]+:|#", target) and path.is_file() and path.suffix not in (".ipynb", ".md"):
            yield path


ANSWER = ("<details><summary>Show the answer</summary>\n", "</details>\n")
ANSWER_STYLE = ("details > summary { margin: .5rem 0 .5rem 100px; font: 600 14px system-ui, sans-serif; color: #0969da;"
                " cursor: pointer; }")


def hidden(cell):
    """Is this a cell JupyterLab shows collapsed (a Try it answer)?"""
    return cell.get("metadata", {}).get("jupyter", {}).get("source_hidden", False)


def with_answers_folded(cells):
    """Markdown: each hidden cell between raw <details> cells, so that a reader can predict before looking."""
    def raw(text):
        return nbformat.v4.new_raw_cell(text, metadata={"raw_mimetype": "text/markdown"})
    return [folded for cell in cells for folded in ([raw(ANSWER[0]), cell, raw(ANSWER[1])] if hidden(cell) else [cell])]


def html_with_answers_folded(body, cells):
    """HTML: each hidden cell's element inside <details> (nbconvert's templates sanitise raw HTML cells)."""
    parts = re.split(r'(?=<div class="jp-Cell )', body)
    hidden_ids = {f'id="cell-id={cell.id}"' for cell in cells if hidden(cell)}
    folded = "".join(ANSWER[0] + part + ANSWER[1] if any(i in part.split(">", 1)[0] for i in hidden_ids) else part
                     for part in parts)
    return folded.replace("</head>", f"<style>{ANSWER_STYLE}</style>\n</head>", 1)


def notebook_pages(notebook_path, out):
    """Write the notebook's HTML page and Markdown page (with its images beside it); return the files it links to."""
    page = site_path(notebook_path)
    notebook = nbformat.read(notebook_path, as_version=4)
    linked = [path for cell in notebook.cells if cell.cell_type == "markdown"
              for path in local_file_links(cell.source, notebook_path)]
    markdown_notebook = nbformat.from_dict(notebook)
    markdown_notebook.cells = with_answers_folded(markdown_notebook.cells)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = relinked(with_diagrams_drawn(cell.source), notebook_path, page)
    for cell in markdown_notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = relinked(cell.source, notebook_path, page, markdown_pages=True)
    body, _ = HTMLExporter(template_name="lab", embed_images=True).from_notebook_node(notebook)
    body = html_with_answers_folded(REMOTE_SCRIPT.sub("", body), notebook.cells)
    (out / page).parent.mkdir(parents=True, exist_ok=True)
    (out / page).write_text(body)
    files_folder = f"{page.stem}_files"
    markdown, resources = MarkdownExporter().from_notebook_node(
        markdown_notebook, resources={"output_files_dir": files_folder})
    (out / page.with_suffix(".md")).write_text(markdown)
    for name, data in resources.get("outputs", {}).items():
        (out / page.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (out / page.parent / name).write_bytes(data)
    return linked


def document_pages(source, out, title):
    """A Markdown file of the repository (the README, a guide) as an HTML page, and as Markdown beside it; return the
    files it links to."""
    page = site_path(source)
    text = source.read_text()
    body = mistune.html(relinked(with_diagrams_drawn(text), source, page))
    (out / page).write_text(f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                            f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}</style></head>"
                            f"<body>\n{body}</body></html>\n")
    (out / page.with_suffix(".md")).write_text(relinked(text, source, page, markdown_pages=True))
    return list(local_file_links(text, source))


def first_heading(text):
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


def summary(notebook_path):
    """The notebook's H1, and what it builds: its row of the README's notebook table, or else the first sentence of
    its goal paragraph."""
    first = nbformat.read(notebook_path, as_version=4).cells[0].source
    row = re.search(rf"\]\(notebooks/{re.escape(notebook_path.name)}\) \| (.+?) \|$", (ROOT / "README.md").read_text(),
                    re.M)
    goal = " ".join(line for line in first.splitlines()[1:] if line.strip())
    return first_heading(first), row.group(1) if row else re.split(r"(?<=[.。])\s*", goal, maxsplit=1)[0]


def llms_txt(notebooks):
    readme = (ROOT / "README.md").read_text()
    lines = [f"# {first_heading(readme)}", "",
             "> A read-and-run tutorial that gives TypeSafe's Jev model a memory: route support tickets with a Choice"
             " question, save lasting facts with a Noul gate, and add each customer's memories to every later call."
             " Every answer is replayed from 32 real recorded Jev responses, so it runs with no API key.", "",
             "## Notebooks", ""]
    chinese = [path for path in notebooks if path.name.endswith(".zh.ipynb")]
    for heading, paths in (("Notebooks", [path for path in notebooks if path not in chinese]),
                           ("Chinese edition (中文版)", chinese)):
        lines += [] if heading == "Notebooks" else ["", f"## {heading}", ""]
        lines += [f"- [{title}]({site_path(path).with_suffix('.md').as_posix()}): {goal}"
                  for path in paths for title, goal in [summary(path)]]
    lines += ["", "## Guides", "", "- [README](index.md): what the cookbook shows, how to run and test it",
              *(f"- [{first_heading(guide.read_text())}]({site_path(guide).with_suffix('.md').as_posix()}):"
                " a 45-minute lesson plan" for guide in GUIDES)]
    return "\n".join(lines) + "\n"


def build(out):
    out.mkdir(parents=True, exist_ok=True)
    notebooks = notebook_paths()
    copies = set()
    for path in notebooks:
        copies |= set(notebook_pages(path, out))
    copies |= set(document_pages(ROOT / "README.md", out, first_heading((ROOT / "README.md").read_text())))
    for guide in GUIDES:
        copies |= set(document_pages(guide, out, first_heading(guide.read_text())))
    for path in copies:
        if site_path(path):
            shutil.copyfile(path, out / site_path(path))
    (out / "llms.txt").write_text(llms_txt(notebooks))
    return notebooks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="the folder to build into (default: site/)")
    out = parser.parse_args().out.resolve()
    notebooks = build(out)
    print(f"built {len(notebooks)} notebook pages, index.html and llms.txt into {out}; open {out / 'index.html'}")


if __name__ == "__main__":
    main()
