"""The project's own tools (not the lesson): paths, notebook execution, the module exporter, re-recording the cache,
the pages, the classroom kit, and the pytest plugin every test run loads.

Scripts in scripts/ are thin command-line entry points over this package; tests import it too.
"""

import sys

# jsonschema (under nbformat) checks the "iri" format with rfc3987_syntax whenever that is installed (JupyterLab's
# jupyter-events asks for it), and importing it builds 38 Lark parsers: about 3 s of every page build and test run.
# Nothing here validates an IRI, so jsonschema is told the package is absent; set in this package's first lines, it
# precedes every import of nbformat through the package (and the pytest plugin, which loads before nbval).
sys.modules.setdefault("rfc3987_syntax", None)
