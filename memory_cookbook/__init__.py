"""The cookbook's machinery beside the lesson (notebooks/basic_memory.py): how a call reaches Jev and its recorded
answer (replay, cache_file, cache_miss, jev_request, recorded_requests), the modules later notebooks export (display,
ledger, stores, published_run), the classroom aids (folded, explorer), and the project's own tools (tools/)."""
