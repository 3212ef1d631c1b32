"""Write the Chinese edition from one source (tools/cookbook_tools/chinese_edition.py says how).

    python scripts/sync_chinese.py                                    # stable cell ids, then every .zh.ipynb
    python scripts/sync_chinese.py --check                            # exit 1 and list the cells out of date
    python scripts/sync_chinese.py --translated 04_wrapper.zh.ipynb:ID   # after retranslating that cell
    python scripts/sync_chinese.py --adopt 09_many_app_servers.zh.ipynb  # a twin mirrored by hand, cell for cell
"""

import sys

from cookbook_tools.chinese_edition import main

if __name__ == "__main__":
    sys.exit(main())
