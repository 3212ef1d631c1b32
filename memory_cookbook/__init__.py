"""The cookbook's runtime package: what the notebooks and the lesson module (notebooks/jev_memory_lesson.py) import, and
what a student's kernel loads. Its top level is what a desk lifts: the store contract (contract), the wrapper's state
(memory), the published dict store (dict_store), a request as data (jev_request), the checks of what a store takes
(memory_checks) and of the wrapper's input (wrapper_checks), the checked reading of the files a reader can damage
(checked_files), where those files are (locations), and how the package's errors show in JupyterLab
(shown_as_message). Its subpackages: replay/ (how a call reaches Jev and its recorded answer), postgres/ (notebook
09's server, pool and errors), classroom/ (folded answers, the memory explorer), desk/ (a desk's view of its memory:
each memory with its provenance, a customer's memory card, a customer's export) and from_notebooks/ (the modules
notebooks' `#| export NAME` cells generate: edit the notebook). It never imports the lesson or the maintainers' tools
(tools/cookbook_tools)."""

__all__: list[str] = []  # nothing at the top: each module says what it offers (its own __all__)
