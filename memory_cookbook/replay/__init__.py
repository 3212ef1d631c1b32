"""How a call reaches Jev and its recorded answer: `calls` (call_jev, offline), the cache file (`cache_file`), what a
call the cache lacks says (`cache_miss`), and the published run's requests (`recorded_requests`)."""
