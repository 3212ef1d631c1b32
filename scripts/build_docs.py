"""Build the cookbook's pages from the committed notebooks, for reading offline: no re-execution, no network.

    python scripts/build_docs.py              # into site/
    python scripts/build_docs.py --out DIR    # elsewhere
    python scripts/build_docs.py --draw-diagrams   # after editing a mermaid diagram: redraw docs/diagrams/*.svg

An HTML and a Markdown page per notebook, index.html from the README, the teacher's guide, and llms.txt; no page
fetches anything from another host. How: tools/cookbook_tools/pages.py.
"""

from cookbook_tools.pages import main

if __name__ == "__main__":
    main()
