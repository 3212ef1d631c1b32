"""The project's own tools (not the lesson): paths, notebook execution, the module exporter, re-recording the cache,
the pages, the classroom kit, and the pytest plugin every test run loads.

Scripts in scripts/ are thin command-line entry points over this package; tests import it too.
"""
