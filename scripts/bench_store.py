"""Benchmark notebook 09's PostgreSQL store against the plain SQL it runs (tools/cookbook_tools/bench.py says how).

    python scripts/bench_store.py                                  # 10,000, 100,000 and 1,000,000 memories
    python scripts/bench_store.py --sizes 10000 --json bench.json  # one size, in well under a minute
"""

from cookbook_tools.bench import main

if __name__ == "__main__":
    main()
