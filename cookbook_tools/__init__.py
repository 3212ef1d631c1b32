"""The project's own tools (not the lesson): paths, notebook execution, the module exporter, the pages, the kit.

Scripts in scripts/ are thin command-line entry points over this package; tests import it too.
"""
