"""The cookbook's own errors, as a reader meets them in JupyterLab: an uncaught one shows as its message alone (no
traceback through the cookbook's modules, no file paths but the ones the message names), and it fails its cell, so the
kernel aborts the cells queued after it, even one whose request reaches the kernel a moment after the error."""

import importlib
import inspect
import json
import shutil
import time

import pytest
from cookbook_tools import execution
from cookbook_tools.paths import CACHE_FILE, NOTEBOOKS, PACKAGE, ROOT
from jupyter_client.manager import KernelManager
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, NbvalKernelspecManager

from memory_cookbook import shown_as_message
from memory_cookbook.checked_files import DamagedFile
from memory_cookbook.shown_as_message import ShownAsMessage


def runtime_exception_classes():
    """Every exception class the runtime package defines (warnings are not raised at a reader)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        for _, value in inspect.getmembers(module, inspect.isclass):
            if (value.__module__ == module.__name__ and issubclass(value, BaseException)
                    and not issubclass(value, Warning)):
                yield value


def test_every_error_class_of_the_runtime_package_is_shown_as_its_message():
    classes = list(runtime_exception_classes())
    assert {"CacheMiss", "DamagedFile", "ServerFolderError", "DatabaseError", "NotACheckout"} <= {
        kind.__name__ for kind in classes}
    assert [kind.__name__ for kind in classes if not issubclass(kind, ShownAsMessage)] == []


def test_outside_a_kernel_the_message_and_its_notes_are_shown_at_once(monkeypatch):
    monkeypatch.setattr(shown_as_message.time, "sleep", lambda seconds: pytest.fail("waited outside a kernel"))
    error = DamagedFile("data/tickets.json is missing: get it back")
    error.add_note("While reading the tickets.")
    assert error._render_traceback_() == ["DamagedFile: data/tickets.json is missing: get it back",
                                          "While reading the tickets."]


# What a reader runs into, one cell each (each sets the cache it needs: COOKBOOK_CACHE is read at each call).
LESSON = ("import os\nfrom pathlib import Path\n"
          "from jev_memory_lesson import EXPECTED, ROUTE, as_memory, ask, later_state\n")
CELLS = {
    "CacheMiss": 'os.environ.pop("COOKBOOK_CACHE", None)\nstate = later_state("C-2210", "More seats")\n'
                 'state["ticket"]["subject"] = "Seats"\nask(state, ROUTE)',
    "missing cache": 'os.environ["COOKBOOK_CACHE"] = "{folder}/no_cache_here.json"\n'
                     'ask(later_state("C-1042", "Slow dashboards"), ROUTE)',
    "damaged cache": 'os.environ["COOKBOOK_CACHE"] = "{folder}/cut_short/json_cache.json"\n'
                     'ask(later_state("C-1042", "Slow dashboards"), ROUTE)',
    "missing recorded_requests.json": 'from memory_cookbook.classroom.explorer import recorded_routing_calls\n'
                                      'own_cache = Path("{folder}/own/json_cache.json")\n'
                                      'recorded_routing_calls(EXPECTED, as_memory, own_cache)',
    "server folder": 'from memory_cookbook.postgres.server import memory_database\n'
                     'memory_database("{folder}/not_a_server")',
    "database": 'from memory_cookbook.from_notebooks.postgres_store import PostgresStore\n'
                'PostgresStore("postgresql://desk:secret@127.0.0.1:1/desk", timeout=2)',
}
RAISED = {"CacheMiss": "CacheMiss", "missing cache": "CacheError", "damaged cache": "CacheError",
          "missing recorded_requests.json": "DamagedFile", "server folder": "ServerFolderError",
          "database": "DatabaseUnavailable"}
QUEUED = 'print("a queued cell ran")'


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """A kernel of this environment in notebooks/, as JupyterLab starts one, with the files the cells damage."""
    folder = tmp_path_factory.mktemp("reader")
    (folder / "cut_short").mkdir()
    (folder / "cut_short" / "json_cache.json").write_text(CACHE_FILE.read_text()[:300])
    (folder / "own").mkdir()
    shutil.copyfile(CACHE_FILE, folder / "own" / "json_cache.json")  # and no recorded_requests.json beside it
    (folder / "not_a_server").mkdir()
    (folder / "not_a_server" / "notes.txt").write_text("a desk's file")
    execution.KERNELS_STARTED.append("errors shown as their message")
    manager = KernelManager(kernel_name=CURRENT_ENV_KERNEL_NAME, kernel_spec_manager=NbvalKernelspecManager())
    manager.start_kernel(cwd=str(NOTEBOOKS))
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        assert replies(client, [client.execute(LESSON)])[0]["status"] == "ok"
        yield client, folder
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def replies(client, message_ids):
    """The execute_reply contents of `message_ids`, in that order."""
    found = {}
    while len(found) < len(message_ids):
        reply = client.get_shell_msg(timeout=60)
        if reply["parent_header"].get("msg_id") in message_ids:
            found[reply["parent_header"]["msg_id"]] = reply["content"]
    return [found[message_id] for message_id in message_ids]


def wait_for_queued_requests(client, seconds):
    """Set, in the kernel, how long an error waits before it is shown (shown_as_message.WAIT_FOR_QUEUED_REQUESTS)."""
    setting = f"import memory_cookbook.shown_as_message as shown\nshown.WAIT_FOR_QUEUED_REQUESTS = {seconds!r}"
    assert replies(client, [client.execute(setting)])[0]["status"] == "ok"


@pytest.mark.slow  # a kernel
@pytest.mark.parametrize("case", CELLS)
def test_an_uncaught_error_shows_its_message_alone_and_stops_the_cell_queued_after_it(kernel, case):
    client, folder = kernel
    # The queued cell's request is sent right after the error's: a shorter wait than the committed one (which the next
    # test needs) is ample for it (on a busy machine here, with none it ran in 4 of 32 runs; with 0.1 s, in 0 of 10).
    wait_for_queued_requests(client, 0.2)
    failed, queued = replies(client, [client.execute(CELLS[case].replace("{folder}", str(folder))),
                                      client.execute(QUEUED)])
    assert (failed["status"], failed["ename"]) == ("error", RAISED[case]), failed.get("evalue")
    assert failed["traceback"] == [f"{failed['ename']}: {failed['evalue']}"]  # the message, no frames
    assert str(ROOT / "memory_cookbook") not in json.dumps(failed)
    assert "secret" not in failed["evalue"]  # the database's password stays masked
    assert queued["status"] == "aborted"


def started(client, message_id):
    """Wait until the kernel has begun to run the request `message_id` (it publishes its execute_input)."""
    while True:
        message = client.get_iopub_msg(timeout=60)
        if message["msg_type"] == "execute_input" and message["parent_header"].get("msg_id") == message_id:
            return


@pytest.mark.slow  # a kernel
def test_a_cell_whose_request_reaches_the_kernel_just_after_the_error_is_stopped_too(kernel):
    """JupyterLab sends the requests of every queued cell at once; they reached the kernel within 0.2 s here."""
    client, folder = kernel
    wait_for_queued_requests(client, shown_as_message.WAIT_FOR_QUEUED_REQUESTS)  # as committed
    failing = client.execute('from memory_cookbook.checked_files import read_json\nread_json("no_such_file.json")')
    started(client, failing)
    time.sleep(0.2)
    failed, late = replies(client, [failing, client.execute(QUEUED)])
    assert (failed["status"], failed["ename"], late["status"]) == ("error", "DamagedFile", "aborted")
    assert replies(client, [client.execute(QUEUED)])[0]["status"] == "ok"  # a cell run afterwards runs
