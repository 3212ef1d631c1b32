"""The tools' notebook runs (tools/cookbook_tools/execution.py: the readers' run, run_notebooks.py, the recorder) shut
each kernel down when its notebook is done, instead of leaving it idle until the process exits (nbclient keeps a kernel
whose manager it was given)."""

import nbformat
import psutil
import pytest

from cookbook_tools import execution


@pytest.mark.slow  # a kernel
def test_a_notebooks_kernel_is_shut_down_once_the_notebook_has_run():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os\nprint(os.getpid())")])
    execution.execute(notebook)
    kernel_pid = int(notebook.cells[0].outputs[0]["text"])
    assert not psutil.pid_exists(kernel_pid) or psutil.Process(kernel_pid).status() == psutil.STATUS_ZOMBIE
