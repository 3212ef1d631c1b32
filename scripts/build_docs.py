"""Build the cookbook's pages from the committed notebooks, for reading offline: no re-execution, no network.

    python scripts/build_docs.py              # into site/
    python scripts/build_docs.py --out DIR    # elsewhere
    python scripts/build_docs.py --draw-diagrams   # after editing a mermaid diagram: redraw docs/diagrams/*.svg

An HTML and a Markdown page per notebook, index.html from the README, the teacher's guide, and llms.txt; no page
fetches anything from another host. How: cookbook_tools/pages.py.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project's library, when run as a script
from cookbook_tools.pages import build, draw_diagrams  # noqa: E402
from cookbook_tools.paths import ROOT  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="the folder to build into (default: site/)")
    parser.add_argument("--draw-diagrams", action="store_true",
                        help="draw every mermaid diagram into docs/diagrams/ (committed; the build reads them there)")
    arguments = parser.parse_args()
    if arguments.draw_diagrams:
        drawn = draw_diagrams()
        print(f"drew {len(drawn)} diagrams into {drawn[0].parent if drawn else 'docs/diagrams'}")
        return
    out = arguments.out.resolve()
    notebooks = build(out)
    print(f"built {len(notebooks)} notebook pages, index.html and llms.txt into {out}; open {out / 'index.html'}")


if __name__ == "__main__":
    main()
