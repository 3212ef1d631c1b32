"""The cookbook's runtime package: what the notebooks and the lesson module (notebooks/jev_memory_lesson.py) import, and
what a student's kernel loads. How a call reaches Jev and its recorded answer (replay, cache_file, cache_miss,
jev_request, recorded_requests), the checked reading of the files a reader can damage (checked_files), where those files
are (locations), how the package's errors show in JupyterLab (shown_as_message), the modules notebooks export (tables,
ledger, stores, postgres_store, app_servers), and the classroom aids (folded, explorer). It never imports the lesson or
the maintainers' tools (tools/cookbook_tools)."""
