"""How JupyterLab (and IPython in a terminal) shows the cookbook's own errors: as their message alone. Each message
names what happened, the file, folder or database, and the fix; the frames through the cookbook's modules above it,
with their absolute paths, say nothing a reader can act on. IPython asks an uncaught exception for
`_render_traceback_()` before it formats a traceback, and the error still fails its cell: the kernel's execute_reply
is an error, so the kernel aborts the cells queued after it ("Run All", "Run Selected Cell and All Below").

It aborts only the requests that have reached it by then. JupyterLab sends every queued cell's request at once, and
some arrive later: in JupyterLab here, a plain ValueError raised at once let 21 and then 27 of the 30 cells below it
run, in 2 runs of 12; raised 0.2 s later, none in 8 (ipykernel 7 does not apply its stop_on_error_timeout). So in a
kernel the error waits a moment before it is shown, for the requests sent with its cell. Hand-written, tested in
tests/test_errors_shown_as_message.py."""

import sys
import time

__all__ = ["ShownAsMessage", "WAIT_FOR_QUEUED_REQUESTS", "running_in_a_kernel"]

WAIT_FOR_QUEUED_REQUESTS = 0.5  # seconds: 0.2 s was enough in 8 runs of 8, this leaves room for a busy machine


class ShownAsMessage:
    """A mixin for an exception class whose message says what happened and what to do: an uncaught one is shown as
    `Name: message` (and its notes), without the traceback. Put it first among the bases, e.g.
    `class DamagedFile(ShownAsMessage, RuntimeError)`; it works beside any exception class, psycopg's included."""

    def _render_traceback_(self) -> list[str]:
        if running_in_a_kernel() and not getattr(self, "_waited_for_queued_requests", False):
            self._waited_for_queued_requests = True  # IPython renders it again, for its history: wait once
            time.sleep(WAIT_FOR_QUEUED_REQUESTS)
        return [f"{type(self).__name__}: {self}", *getattr(self, "__notes__", ())]


def running_in_a_kernel() -> bool:
    """Whether this process is a Jupyter kernel (an IPython shell with a kernel), whose queued cells an error stops."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython else None
    return getattr(shell, "kernel", None) is not None
