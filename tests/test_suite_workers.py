"""The suite's own run: the whole suite, or a folder of it, is spread over two pytest-xdist workers, a file at a time
(nbval's cells of a notebook in one kernel, in order), longest files first; a file or a test named alone runs in one
process. The background work (the readers' run, mypy, the kit's check) runs once a session, in xdist's controller,
and reaches the workers' tests through the handover folder (tests/handover.py); the notebooks' databases are removed
by the controller alone, once every worker is done; the kernels the workers started are counted in the summary."""

import pickle
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from cookbook_tools import execution, pytest_plugin
from cookbook_tools.paths import ROOT

import conftest
import handover
from kit_install import KitInstall


def options(**chosen):
    """pytest's options as a plain `pytest` leaves them, but those chosen."""
    return SimpleNamespace(**{"numprocesses": None, "dist": "no", "tx": [], "collectonly": False, "usepdb": False,
                              "trace": False, "capture": "fd", **chosen})


def command_line(*args, xdist=True, worker=False, **chosen):
    """A config as pytest makes it for `pytest ARGS` run from the repository (no ARGS: pytest.ini's testpaths)."""
    config = SimpleNamespace(args=list(args) or ["notebooks", "tests"], option=options(**chosen),
                             invocation_params=SimpleNamespace(dir=ROOT),
                             pluginmanager=SimpleNamespace(has_plugin=lambda name: xdist and name == "xdist"))
    if worker:
        config.workerinput = {"workerid": "gw0"}
    return config


def test_the_suite_and_a_folder_are_spread_over_workers_and_files_or_tests_named_alone_are_not():
    assert pytest_plugin.spread_over_workers(command_line())
    assert pytest_plugin.spread_over_workers(command_line("tests"))
    assert pytest_plugin.spread_over_workers(command_line("tests/", "notebooks/01_tickets.ipynb"))
    for named in (["tests/test_tables.py"], ["tests/test_tables.py::test_markdown_table_has_a_header_a_separator_per"
                                             "_column_and_a_line_per_row"], ["notebooks/05_probe_sequence.ipynb"],
                  ["tests/test_tables.py", "tests/test_errors.py"]):
        assert not pytest_plugin.spread_over_workers(command_line(*named)), named


@pytest.mark.parametrize("config", [
    command_line(xdist=False), command_line(worker=True), command_line(numprocesses=0), command_line(dist="load"),
    command_line(tx=["popen"]), command_line(collectonly=True), command_line(usepdb=True), command_line(trace=True),
    command_line(capture="no")],
    ids=["-p no:xdist", "in a worker", "-n 0", "--dist", "--tx", "--collect-only", "--pdb", "--trace", "-s"])
def test_a_command_line_that_chooses_or_needs_one_process_is_not_spread(config):
    assert not pytest_plugin.spread_over_workers(config)


def test_spread_is_two_workers_handed_a_file_at_a_time_in_the_suites_order(monkeypatch):
    monkeypatch.setattr(pytest_plugin.os, "cpu_count", lambda: 8)  # two, on a larger machine too
    config = command_line()
    step = pytest_plugin.pytest_cmdline_main(config)
    next(step)  # what the wrapper sets before xdist's own hook reads it
    step.close()
    assert (config.option.numprocesses, config.option.dist, config.option.loadscopereorder) == (2, "loadfile", False)


def item(path, name, slow=False, fixtures=()):
    return SimpleNamespace(path=Path(path), name=name, fixturenames=list(fixtures), nodeid=f"{path}::{name}",
                           get_closest_marker=lambda mark: mark == "slow" and slow or None)


def test_files_go_longest_first_those_reading_background_work_after_them_and_the_kits_test_last():
    items = [item("tests/test_a.py", "test_a1"), item("tests/test_a.py", "test_a2", slow=True),
             item("tests/test_kit.py", conftest.KIT_TEST, fixtures=["kit_install"]),
             item("tests/test_kit.py", "test_kit_lock"),
             item("tests/test_readers.py", "test_r1", slow=True, fixtures=["readers_run"]),
             item("tests/test_readers.py", "test_r2", slow=True),
             item("notebooks/09.ipynb", "Cell 0", slow=True), item("notebooks/09.ipynb", "Cell 1", slow=True),
             item("notebooks/09.ipynb", "Cell 2", slow=True), item("tests/test_quick.py", "test_q")]
    conftest.pytest_collection_modifyitems(items)
    assert [each.nodeid for each in items] == [
        "notebooks/09.ipynb::Cell 0", "notebooks/09.ipynb::Cell 1", "notebooks/09.ipynb::Cell 2",
        "tests/test_a.py::test_a1", "tests/test_a.py::test_a2", "tests/test_quick.py::test_q",
        "tests/test_readers.py::test_r1", "tests/test_readers.py::test_r2", "tests/test_kit.py::test_kit_lock",
        f"tests/test_kit.py::{conftest.KIT_TEST}"]


def controller(tmp_path):
    """A config as xdist's controller has it, whose handover folder is `tmp_path`."""
    return SimpleNamespace(handover_folder=tmp_path, add_cleanup=lambda cleanup: None)


def worker(folder, workerid="gw1"):
    return SimpleNamespace(workerinput={"workerid": workerid, handover.FOLDER: str(folder)}, workeroutput={})


def test_what_the_controller_hands_over_reaches_a_workers_test_once_written_whole(tmp_path):
    done = threading.Event()
    handover.hand_over_when_done(tmp_path, "readers_run", done.wait, lambda: SimpleNamespace(result={"01": [1, 2]}))
    assert not (tmp_path / "readers_run.pickle").exists()  # the work is not done yet
    waiting = []
    reader = threading.Thread(target=lambda: waiting.append(handover.handed_over(worker(tmp_path), "readers_run",
                                                                                 timeout=10)))
    reader.start()
    done.set()
    reader.join(timeout=10)
    assert waiting[0].result == {"01": [1, 2]}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["readers_run.pickle", "readers_run.started"]


def test_an_outcome_that_cannot_be_handed_over_fails_the_test_that_waits_for_it_naming_it(tmp_path):
    handover.hand_over_when_done(tmp_path, "type_check", lambda: None, lambda: SimpleNamespace(lock=threading.Lock()))
    with pytest.raises(RuntimeError, match="(?s)type_check: .*cannot pickle"):
        handover.handed_over(worker(tmp_path), "type_check", timeout=10)


def test_work_the_controller_does_not_do_is_done_by_the_test_itself(tmp_path):
    assert handover.handed_over(SimpleNamespace(), "readers_run") is None  # no workers: this process does it
    (tmp_path / "readers_run.pickle").write_bytes(pickle.dumps("an older session's"))  # without its .started
    assert handover.handed_over(worker(tmp_path), "readers_run") is None


def test_each_worker_says_what_work_its_tests_read_and_the_controller_starts_it_once(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(conftest, "start_background_work", lambda config, wanted, handover=None: started.append(
        (wanted, handover)))
    for workerid in ("gw0", "gw1"):
        config = SimpleNamespace(option=SimpleNamespace(collectonly=False), **vars(worker(tmp_path, workerid)))
        conftest.pytest_collection_finish(SimpleNamespace(config=config, items=[
            item("tests/test_types.py", conftest.TYPE_CHECK_TEST, fixtures=["type_check"]),
            item("tests/test_key_leak.py", "test_key", fixtures=["readers_run", "lesson"])]))
    assert started == []  # a worker starts none of it
    the_controller = controller(tmp_path)
    for workerid in ("gw0", "gw1"):
        conftest.pytest_xdist_node_collection_finished(
            SimpleNamespace(config=the_controller, workerinput={"workerid": workerid}), ids=[])
    assert started == [({"readers_run", "type_check"}, tmp_path)]


def test_a_worker_leaves_the_notebooks_databases_to_the_controller(tmp_path, monkeypatch):
    database = tmp_path / "memories.sqlite"
    database.write_text("07's database, while another worker runs 07")
    monkeypatch.setattr(pytest_plugin, "database_files", lambda: [database])
    pytest_plugin.pytest_sessionfinish(SimpleNamespace(config=worker(tmp_path)))
    assert database.exists()
    pytest_plugin.pytest_sessionfinish(SimpleNamespace(config=SimpleNamespace()))  # the controller, at the end
    assert not database.exists()


def test_the_summary_counts_the_kernels_every_worker_started(monkeypatch):
    monkeypatch.setattr(execution, "KERNELS_STARTED", ["01_tickets.ipynb"] * 10)  # the readers' run, here
    config = SimpleNamespace()
    for started in (3, 2):
        conftest.pytest_testnodedown(SimpleNamespace(config=config, workeroutput={"kernels_started": started}), None)
    lines = []
    nbval = SimpleNamespace(when="call", nodeid="notebooks/01_tickets.ipynb::Cell 0")
    conftest.pytest_terminal_summary(SimpleNamespace(stats={"passed": [nbval]}, write_line=lines.append), config)
    assert lines == ["kernels started: 1 by nbval, 15 by tests and the readers' run"]


def test_a_worker_tells_the_controller_how_many_kernels_its_tests_started(monkeypatch):
    monkeypatch.setattr(execution, "KERNELS_STARTED", ["errors shown as their message", "07"])
    config = worker("unused")
    conftest.pytest_sessionfinish(SimpleNamespace(config=config))
    assert config.workeroutput == {"kernels_started": 2}


@pytest.mark.slow  # pytest and two workers: about two seconds
def test_a_folder_runs_on_two_workers_each_file_in_one_worker_and_in_order(tmp_path):
    """With the suite's own pytest.ini (and so its plugin), a folder of two files, each test noting where it ran."""
    log = tmp_path / "ran.txt"
    for name in ("test_first.py", "test_second.py"):
        (tmp_path / name).write_text("import os\n\n\n" + "".join(
            f"def test_{number}():\n    with open({str(log)!r}, 'a') as log:\n"
            f"        print(os.environ['PYTEST_XDIST_WORKER'], __name__, {number}, file=log)\n\n\n"
            for number in range(3)))
    result = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pytest.ini"), "--rootdir", str(tmp_path),
                             "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert "6 passed" in result.stdout and "created: 2/2 workers" in result.stdout, result.stdout + result.stderr
    ran = [line.split() for line in log.read_text().splitlines()]
    by_file = {module: [(workerid, number) for workerid, name, number in ran if name == module]
               for module in ("test_first", "test_second")}
    assert {module: [number for _, number in runs] for module, runs in by_file.items()} == {
        "test_first": ["0", "1", "2"], "test_second": ["0", "1", "2"]}
    workers = {module: {workerid for workerid, _ in runs} for module, runs in by_file.items()}
    assert workers["test_first"] | workers["test_second"] == {"gw0", "gw1"} and len(workers["test_first"]) == 1


def test_the_kits_check_stopped_by_the_sessions_end_starts_no_further_step():
    kit = KitInstall()
    kit.cleanup()  # the session ended (-x, Ctrl-C) before the check began a step: none begins afterwards
    assert kit.step("venv", [sys.executable, "-c", "pass"]) is False and kit.steps == []
