"""Generated: the modules that notebooks' `#| export NAME` cells write (scripts/export_module.py). Edit the notebook
each file names at its top, never these files."""
