"""Mutation-test the hand-written modules against the quick loop (tools/cookbook_tools/mutation.py says how); a
maintainer's check, not CI, that takes about 6 minutes on two cores.

    .venv/bin/pip install -r requirements-mutation.txt
    .venv/bin/python scripts/mutation_test.py                        # every mutant, afresh
    .venv/bin/python scripts/mutation_test.py 'memory_cookbook.replay.calls*'   # only these, after a fix
"""

from cookbook_tools.mutation import main

if __name__ == "__main__":
    main()
