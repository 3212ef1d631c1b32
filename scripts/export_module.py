"""Write the generated modules from the notebooks' export cells (tools/cookbook_tools/export.py says how).

    python scripts/export_module.py           # rewrite the generated modules
    python scripts/export_module.py --check   # exit 1 if one is stale
"""

from cookbook_tools.export import main

if __name__ == "__main__":
    main()
