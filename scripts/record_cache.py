"""Re-record the notebooks' calls with a TypeSafe key; the cache is replaced only once the new one is whole.

    TYPESAFE_API_KEY=... python scripts/record_cache.py           # ask live only the calls the cache lacks
    TYPESAFE_API_KEY=... python scripts/record_cache.py --fresh   # ask every call again
    TYPESAFE_API_KEY=... python scripts/record_cache.py 03_gate.ipynb   # only some notebooks
    --prune        also drop the entries no notebook uses (they are listed either way; all notebooks only)
    --cache PATH   another cache file (default: json_cache.json)

Set TYPESAFE_ENDPOINT to record from another Jev-compatible server. The notebooks run in fresh kernels (their files
are not rewritten) against a temporary copy of the cache beside it. The copy replaces the cache, in one atomic rename,
only if it parses, every entry is a SystemOneResponse, and it holds every call the notebooks made; an error or an
interruption leaves the old cache as it was. With every notebook, recorded_requests.json beside the cache is
rewritten too: the published run's requests, which an off-script call's message is compared with.
"""

from cookbook_tools.recording import record_cache

if __name__ == "__main__":
    record_cache()
