"""Write the modules beside the notebooks from their export cells (cookbook_tools/export.py says how).

    python scripts/export_module.py           # rewrite the generated modules
    python scripts/export_module.py --check   # exit 1 if one is stale
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root, for cookbook_tools
from cookbook_tools.export import module_sources, stale_modules, write_modules  # noqa: E402
from cookbook_tools.paths import NOTEBOOKS, ROOT  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the modules are up to date")
    sources = module_sources()
    if parser.parse_args().check:
        stale = stale_modules(sources)
        if stale:
            sys.exit(f"stale: {', '.join(stale)}: run python scripts/export_module.py")
        print(f"up to date: {', '.join(sources)}")
        return
    write_modules(sources)
    print(f"wrote {', '.join(sources)} in {NOTEBOOKS.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()
