"""Shared test helpers and fixtures: the lesson offline with nothing remembered, jevcompat's fake Jev, a copy of the
repository to run in, the readers' run of every notebook, and what a playground link or a notebook's outputs hold."""

import collections
import functools
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import matplotlib
import pytest
from cookbook_tools import execution
from cooksafe import JsonCache
from cookbook_tools.paths import CACHE_FILE, ENGLISH_NOTEBOOKS, NOTEBOOKS, RECORDED_REQUESTS_FILE, ROOT
from jevcompat.mock import MockConfig, Running
from handover import FOLDER as HANDOVER
from handover import controller_folder, handed_over, hand_over_when_done, worker_folder
from kit_install import KIT_TEST, KitInstall
from lzstring import LZString
from memory_cookbook.replay import recorded_requests
from cookbook_tools.pytest_plugin import is_worker, network_asked

matplotlib.use("Agg")  # charts drawn in tests are never shown

# A recognisable fake key: no test may find it anywhere the cookbook writes or says.
CANARY_KEY = "tsk-canary-7f3a9c1e-do-not-leak"
PLAYGROUND_LINK = re.compile(r"\[([^\]]*)\]\((https://console\.typesafe\.ai/playground#share/[^)]+)\)")


def pytest_collection_modifyitems(items):
    """File by file, the files with more slow tests first (tools/cookbook_tools/pytest_plugin.py has marked nbval's
    notebook cells slow): xdist's workers are handed a file at a time in this order, so the short files come last and
    the two workers end together. The files whose tests read the background work (the readers' run, mypy, the kit's
    check: it goes on meanwhile) go after them, and the classroom kit's test last of all. Within a file the order
    stays (nbval's cells in order)."""
    slow = collections.Counter(item.path for item in items if item.get_closest_marker("slow"))
    waiting = {item.path for item in items if background_work_read([item])}
    items.sort(key=lambda item: (item.name == KIT_TEST, item.path in waiting, -slow[item.path]))  # stable


def pytest_terminal_summary(terminalreporter, config):
    """The kernels this run started: nbval's, one per notebook, and the tests' own and the readers' run's in pytest's
    processes (xdist's workers count theirs: pytest_sessionfinish below; a recording subprocess starts its own too)."""
    nbval = {report.nodeid.split("::")[0] for reports in terminalreporter.stats.values() for report in reports
             if getattr(report, "when", None) == "call" and ".ipynb::" in report.nodeid}
    started = len(execution.KERNELS_STARTED) + getattr(config, "kernels_started_by_workers", 0)
    terminalreporter.write_line(f"kernels started: {len(nbval)} by nbval, {started} by tests and the readers' run")


def pytest_sessionfinish(session):
    if hasattr(session.config, "workeroutput"):  # an xdist worker: its count goes to the controller
        session.config.workeroutput["kernels_started"] = len(execution.KERNELS_STARTED)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist's controller: a worker is done, and says how many kernels its tests started."""
    config = node.config
    config.kernels_started_by_workers = (getattr(config, "kernels_started_by_workers", 0)
                                         + getattr(node, "workeroutput", {}).get("kernels_started", 0))


def configure(monkeypatch, cache_path=None, key=None, endpoint=None):
    """Set COOKBOOK_CACHE, TYPESAFE_API_KEY and TYPESAFE_ENDPOINT as given (unset when None): replay reads them at
    each call. A key needs a cache path: with the committed cache in use, a miss would be recorded into it."""
    if key and not cache_path:
        raise ValueError("configure(): a key with the committed cache would record into it; give a cache_path")
    for name, value in {"COOKBOOK_CACHE": cache_path, "TYPESAFE_API_KEY": key, "TYPESAFE_ENDPOINT": endpoint}.items():
        if value:
            monkeypatch.setenv(name, str(value))
        else:
            monkeypatch.delenv(name, raising=False)


def requests_served(server):
    """How many requests a jevcompat fake server has answered."""
    return server.server.RequestHandlerClass.cfg.requests


def run_earlier_tickets(module):
    """The five earlier tickets through the wrapper, in order, as the published run sends them."""
    for ticket in module.EARLIER:
        module.ask_with_memory(module.ticket_state(ticket), module.ROUTE)


def unseen_state(module, ticket_id="T-999"):
    """C-1042's "Slow dashboards" under a ticket id the published run never asked about."""
    state = module.later_state("C-1042", "Slow dashboards")
    state["ticket"]["id"] = ticket_id
    return state


def link_share(link):
    """What a playground link carries: its LZString-compressed JSON, decoded."""
    return json.loads(decompressed(link.split("#share/", 1)[1].rstrip(")")))


@functools.cache
def decompressed(share):
    """LZString's decoding of a link's share (pure Python: decoded once per session, the tests read each link often)."""
    return LZString.decompressFromEncodedURIComponent(share)


def decoded_link(link):
    """(model, state, questions) that a playground link carries."""
    share = link_share(link)
    return share["selectedModels"][0], json.loads(share["documentText"]), json.loads(share["promptsText"])


def output_texts(notebook):
    """The text of every output of a notebook's code cells (stream text, and each non-image display format)."""
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            yield output.get("text", "")
            yield from (value for key, value in output.get("data", {}).items() if key.startswith("text/"))


def committed_requests():
    """The committed recorded_requests.json, read by cache_miss.recorded_requests (RecordedRequest tuples)."""
    return recorded_requests.recorded_requests(RECORDED_REQUESTS_FILE)


def request_call(request):
    """A RecordedRequest as the call (model, state_json, questions_json) that made it."""
    return request.model, json.dumps(request.state), json.dumps(request.questions)


def committed_entries():
    """The committed cache's entries {key: response}."""
    return json.loads(CACHE_FILE.read_text())


@pytest.fixture
def cache_copy(tmp_path):
    """A copy of the committed cache in a temporary folder."""
    copy = tmp_path / "json_cache.json"
    shutil.copyfile(CACHE_FILE, copy)
    return copy


@pytest.fixture
def lesson(monkeypatch):
    """The lesson module, offline over the committed cache, its MEMORY on a new, empty DictStore (as published) at the
    published threshold, and no call recorded yet; all restored afterwards. CALLS is emptied in place: the lesson
    holds the same list."""
    import jev_memory_lesson
    from memory_cookbook.dict_store import DictStore
    from memory_cookbook.replay.calls import CALLS

    configure(monkeypatch)
    monkeypatch.setattr(jev_memory_lesson.MEMORY, "store", DictStore())
    monkeypatch.setattr(jev_memory_lesson.MEMORY, "remember_at", jev_memory_lesson.REMEMBER_AT)
    calls_before = list(CALLS)
    CALLS.clear()
    yield jev_memory_lesson
    CALLS[:] = calls_before


def fake_jev():
    """jevcompat's fake Jev-compatible server on 127.0.0.1, requiring the canary key (a context manager). Its loop
    looks for the stop request every 0.05 s, not every 0.5 s: stopping it is then not half a second per test."""
    server = Running(MockConfig(key=CANARY_KEY))
    server.thread = threading.Thread(target=server.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    return server


@pytest.fixture(scope="session")
def postgres_server():
    """One embedded PostgreSQL server for the whole run, started by the first test that needs it; stopped and its
    folder removed when the run ends, failed tests or not, and no process of it may be left. Its folder is not under
    pytest's temporary folder: as root the server runs as another user, and every pytest run (other sessions' too)
    makes /tmp/pytest-of-root unreadable to other users."""
    from memory_cookbook.postgres.server import EmbeddedServer

    folder = Path(tempfile.mkdtemp(prefix="cookbook-postgres-"))
    try:
        server = EmbeddedServer(folder / "data")
        yield server
        server.stop()
        # Checked before the folder is removed, so that a server left running is named as such, not as a folder
        # that is not empty.
        assert processes_naming(server.folder) == [], "the tests' PostgreSQL server is still running"
        folder.rmdir()  # fails if stop() left anything in it
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # a server that failed to start, or a failed check above


def processes_naming(folder):
    """The live processes whose command line names `folder`, from Linux's /proc (an exited process that its parent
    has not reaped yet has no command line)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if str(folder).encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:  # it exited meanwhile
            pass
    return found


SCHEMAS = itertools.count(1)


TEST_PARTITIONS = 4  # fewer than the store's 32: each test's schema is made in a fraction of the time


@pytest.fixture
def postgres_store(postgres_server):
    """A PostgresStore on the session's server, as its owner, in a schema of its own (dropped afterwards)."""
    from memory_cookbook.from_notebooks.postgres_store import PostgresStore, create_memory_tables

    schema = f"test_{next(SCHEMAS)}"
    create_memory_tables(postgres_server.url, schema, partitions=TEST_PARTITIONS)
    store = PostgresStore(postgres_server.url, schema=schema)
    yield store
    store.execute(f"DROP SCHEMA {store.schema} CASCADE")
    store.close()


APP_ROLE = "cookbook_app"


@pytest.fixture(scope="session")
def app_role_url(postgres_server):
    """The URL of a role that may log in and nothing more (no superuser, owns nothing): an app server's role."""
    import psycopg

    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute(f"CREATE ROLE {APP_ROLE} LOGIN")
    yield psycopg.conninfo.make_conninfo(postgres_server.url, user=APP_ROLE)
    with psycopg.connect(postgres_server.url, autocommit=True) as db:
        db.execute(f"DROP OWNED BY {APP_ROLE}")
        db.execute(f"DROP ROLE {APP_ROLE}")


@pytest.fixture
def app_store(postgres_store, app_role_url):
    """A PostgresStore on postgres_store's schema, as the app role, given the row rights grant_row_rights gives."""
    from memory_cookbook.from_notebooks.postgres_store import PostgresStore, grant_row_rights

    grant_row_rights(postgres_store.url, APP_ROLE, postgres_store.schema)
    with PostgresStore(app_role_url, schema=postgres_store.schema) as store:
        yield store


@pytest.fixture
def jev_server():
    """jevcompat's fake Jev-compatible server on 127.0.0.1, requiring the canary key; stopped afterwards."""
    with fake_jev() as server:
        yield server


def copy_of_the_repository(folder):
    """What the notebooks need, copied into `folder`: notebooks (with the modules), data, the cache, the requests."""
    shutil.copytree(NOTEBOOKS, folder / "notebooks", ignore=shutil.ignore_patterns(
        "__pycache__", ".ipynb_checkpoints", "*.sqlite", "*.sqlite-journal", "postgres_data", "desk_postgres_data"))
    shutil.copytree(ROOT / "data", folder / "data")
    for path in (CACHE_FILE, RECORDED_REQUESTS_FILE):
        shutil.copyfile(path, folder / path.name)
    return folder


LONGEST_READERS_RUN = ("09_", "10_", "05_")


def run_as_readers(folder, notebook_paths, committed_cache=CACHE_FILE, run_notebook=execution.executed_as_readers_do,
                   environment=None):
    """Each notebook run once more beside nbval's run, the way readers do (each code cell twice in a row, then Run
    All again, in one kernel), in a copy of the repository in `folder` (so nothing in the committed tree is written),
    with the canary key set and jevcompat's fake Jev as the endpoint: any call the cache lacked would reach the fake
    server (counted) instead of failing, so the audit sees it, and the key leak scan reads outputs made with a key.
    `environment`: the kernels' environment before those settings (default: this process's, as it is now)."""
    cache_before = committed_cache.read_bytes()  # what the copy starts from, read before anything can change it
    copy = copy_of_the_repository(folder)
    with fake_jev() as server:
        # The kernels' own environment, not this process's: the run goes on beside other tests (ReadersRun), which
        # set and unset variables meanwhile.
        env = {**(os.environ if environment is None else environment), "COOKBOOK_CACHE": str(copy / CACHE_FILE.name),
               "TYPESAFE_API_KEY": CANARY_KEY, "TYPESAFE_ENDPOINT": server.url}
        # Two kernels at a time, one per core: each notebook runs in its own kernel, so they do not meet. The longest
        # (09 starts a server and four processes) goes first, so that it does not run alone at the end.
        ordered = sorted(notebook_paths, key=lambda path: not path.name.startswith(LONGEST_READERS_RUN))
        with ThreadPoolExecutor(max_workers=2) as pool:
            executed = pool.map(lambda path: run_notebook(path, folder=copy / "notebooks", env=env), ordered)
            runs = {path.name: run for path, run in zip(ordered, executed, strict=True)}
        requests = requests_served(server)
    return SimpleNamespace(runs=runs, cache_before=cache_before, cache_after=(copy / CACHE_FILE.name).read_bytes(),
                           requests=requests)


class ReadersRun(threading.Thread):
    """The readers' run of every English notebook, in the background from the moment the session's tests are chosen
    (its kernels and the other tests often wait on processes, so each fills the other's waits); the tests that read
    it run last but the kit's. (Measured here: 75.6 s for the whole suite, against 78.7 s when it starts only once
    nbval's notebooks are done.)"""

    def __init__(self):
        super().__init__(daemon=True)
        self.result, self.error = None, None
        # Copied here, in the main thread before any test runs: a test's monkeypatch.setenv must not reach the kernels.
        self.environment = dict(os.environ)

    def run(self):
        try:
            with tempfile.TemporaryDirectory(prefix="cookbook-readers-") as folder:  # not pytest's: see postgres_server
                self.result = run_as_readers(Path(folder), ENGLISH_NOTEBOOKS, environment=self.environment)
        except BaseException as error:  # raised again in the tests that read the run
            self.error = error

    def outcome(self):
        return SimpleNamespace(result=self.result, error=self.error)


@pytest.fixture(scope="session")
def readers_run(pytestconfig):
    """The readers' run of every English notebook: the audit, the key scan, the re-run comparisons and the recording
    test all read this one run."""
    run = handed_over(pytestconfig, "readers_run") or finished(pytestconfig, "readers_run")
    if run.error:
        raise run.error
    return run.result


def finished(config, name):
    """This process's background work `name` (a thread), finished: started here when the session's collection did
    not start it (a test named alone)."""
    if getattr(config, name, None) is None:
        start_background_work(config, {name})
    work = getattr(config, name)
    work.join(timeout=600)
    assert not work.is_alive(), f"{name} did not finish within 10 minutes"
    return work


BACKGROUND_WORK = ("readers_run", "type_check", "kit_install")  # each a fixture, and the config attribute of its thread


def background_work_read(items):
    """The background work that these tests read (BACKGROUND_WORK's names)."""
    return {name for item in items for name in BACKGROUND_WORK if name in getattr(item, "fixturenames", ())}


def built_site(out):
    """The pages, built into `out` in this process, counting each template's compilations and the diagrams drawn
    (not read committed): SimpleNamespace(out, compiled, drawn)."""
    import jinja2
    from cookbook_tools import pages

    compiled, drawn = collections.Counter(), []
    compile_template, draw_diagram = jinja2.Environment.compile, pages.draw_diagram

    def counted_compile(environment, source, name=None, *args, **kwargs):
        compiled[name] += 1
        return compile_template(environment, source, name, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jinja2.Environment, "compile", counted_compile)
        patch.setattr(pages, "draw_diagram", lambda source: drawn.append(source) or draw_diagram(source))
        pages.mermaid_svg.cache_clear()
        pages.build(out)
    pages.mermaid_svg.cache_clear()
    return SimpleNamespace(out=out, compiled=compiled, drawn=drawn)


TYPE_CHECK_TEST = "test_mypy_passes_over_the_runtime_the_lesson_and_the_store_contract"


class TypeCheck(threading.Thread):
    """mypy over what pyproject.toml's [tool.mypy] names, in a process of its own from the moment the session's tests
    are chosen (tests/test_types.py reads its result), so that its seconds overlap the other tests'. Its cache is
    outside the tree, one per checkout: a later run checks only what changed."""

    CACHE = Path(tempfile.gettempdir()) / f"cookbook-mypy-{hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]}"

    def __init__(self):
        super().__init__(daemon=True)
        self.result, self.seconds = None, None

    def run(self):
        started = time.perf_counter()
        self.result = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(self.CACHE)], cwd=ROOT,
                                     capture_output=True, text=True, timeout=600,
                                     preexec_fn=lambda: os.nice(10))  # the tests' kernels and servers come first
        self.seconds = time.perf_counter() - started

    def outcome(self):
        return SimpleNamespace(result=self.result, seconds=self.seconds)


@pytest.fixture(scope="session")
def type_check(pytestconfig):
    """mypy's run (TypeCheck), finished: started here when the test was collected without the hook below."""
    return handed_over(pytestconfig, "type_check") or finished(pytestconfig, "type_check")


@pytest.hookimpl(tryfirst=True)  # in an xdist worker, before xdist sends the collection to the controller
def pytest_collection_finish(session):
    config = session.config
    if config.option.collectonly:
        return
    wanted = background_work_read(session.items)
    folder = worker_folder(config)
    if folder is not None:  # an xdist worker: the controller does the work, once for all workers (tests/handover.py)
        (folder / f"wanted-{config.workerinput['workerid']}.json").write_text(json.dumps(sorted(wanted)))
    elif not is_worker(config):
        start_background_work(config, wanted)


def start_background_work(config, wanted, handover=None):
    """Start, in this process, the background work these tests read; with `handover` (xdist's controller's folder),
    hand each outcome over to the workers' tests when it is done."""
    work = {}
    if "readers_run" in wanted:
        work["readers_run"] = config.readers_run = ReadersRun()
    if "type_check" in wanted:
        work["type_check"] = config.type_check = TypeCheck()
    if "kit_install" in wanted and network_asked(config):
        # The pages once a session: built first by the kit's check, which copies them into its kit; the page tests
        # (tests/test_docs.py's site_build) read the same build.
        work["kit_install"] = config.kit_install = KitInstall(pages=built_site)
        config.add_cleanup(config.kit_install.cleanup)
        if handover:
            hand_over_when_done(handover, "site_build", config.kit_install.pages_built.wait,
                                lambda: config.kit_install.site_build)
    for name, thread in work.items():
        thread.start()
        if handover:
            hand_over_when_done(handover, name, thread.join, thread.outcome)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist's controller, before it starts a worker: where the worker finds what the controller hands over."""
    node.workerinput[HANDOVER] = str(controller_folder(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """xdist's controller, once a worker has collected (every worker collects the same tests) and before any test is
    sent: it starts the background work that worker's tests read, once for all workers."""
    config = node.config
    if not getattr(config, "background_work_started", False):
        config.background_work_started = True
        wanted = controller_folder(config) / f"wanted-{node.workerinput['workerid']}.json"
        start_background_work(config, set(json.loads(wanted.read_text())) if wanted.exists() else set(),
                              handover=controller_folder(config))


def pages_built_by_the_kit(config):
    """The pages the kit's check built for its kit this session (SimpleNamespace(out, compiled, drawn)), once built;
    None if it builds none (it runs with --run-network only)."""
    kit = getattr(config, "kit_install", None)
    if kit is not None:
        kit.pages_built.wait(timeout=600)
        return kit.site_build
    return handed_over(config, "site_build")


@pytest.fixture(scope="session")
def kit_install(pytestconfig):
    """The classroom kit's background check (KitInstall), finished."""
    return handed_over(pytestconfig, "kit_install") or finished(pytestconfig, "kit_install")


def cache_keys(calls):
    """The keys cooksafe.JsonCache files these calls under, computed by JsonCache itself: the tests' oracle for
    jev_request.cache_key."""
    with tempfile.TemporaryDirectory() as folder:
        keys_file = Path(folder) / "keys.json"
        cache = JsonCache(keys_file)

        @cache
        def _system_one(model, state_json, questions_json):
            return None

        for call in calls:
            _system_one(*call)
        return set(json.loads(keys_file.read_text())) if keys_file.exists() else set()
