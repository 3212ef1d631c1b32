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
from kit_install import KIT_TEST, KitInstall
from lzstring import LZString
from memory_cookbook.replay import recorded_requests
from cookbook_tools.pytest_plugin import network_asked

matplotlib.use("Agg")  # charts drawn in tests are never shown

# A recognisable fake key: no test may find it anywhere the cookbook writes or says.
CANARY_KEY = "tsk-canary-7f3a9c1e-do-not-leak"
PLAYGROUND_LINK = re.compile(r"\[([^\]]*)\]\((https://console\.typesafe\.ai/playground#share/[^)]+)\)")


def pytest_collection_modifyitems(items):
    """The tests that read the readers' run go last, and the classroom kit's test after them: both run in the
    background meanwhile (ReadersRun, tests/kit_install.py). (tools/cookbook_tools/pytest_plugin.py marks nbval's
    notebook cells slow.)"""
    items.sort(key=lambda item: (item.name == KIT_TEST, reads_the_readers_run(item)))  # stable: only these move


def pytest_terminal_summary(terminalreporter):
    """The kernels this run started: nbval's, one per notebook, and the tests' own in this process (a recording
    subprocess starts its own too)."""
    nbval = {report.nodeid.split("::")[0] for reports in terminalreporter.stats.values() for report in reports
             if getattr(report, "when", None) == "call" and ".ipynb::" in report.nodeid}
    terminalreporter.write_line(f"kernels started: {len(nbval)} by nbval, {len(execution.KERNELS_STARTED)} by tests in"
                                " this process")


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
        self.result, self.error, self.begun = None, None, False
        # Copied here, in the main thread before any test runs: a test's monkeypatch.setenv must not reach the kernels.
        self.environment = dict(os.environ)

    def begin(self):
        if not self.begun:
            self.begun = True
            self.start()

    def run(self):
        try:
            with tempfile.TemporaryDirectory(prefix="cookbook-readers-") as folder:  # not pytest's: see postgres_server
                self.result = run_as_readers(Path(folder), ENGLISH_NOTEBOOKS, environment=self.environment)
        except BaseException as error:  # raised again in the tests that read the run
            self.error = error


@pytest.fixture(scope="session")
def readers_run(pytestconfig):
    """The readers' run of every English notebook: the audit, the key scan, the re-run comparisons and the recording
    test all read this one run."""
    background = getattr(pytestconfig, "readers_run", None)
    if background is None:  # collected without the hook below (a test named alone): run it here
        background = pytestconfig.readers_run = ReadersRun()
    background.begin()
    background.join(timeout=600)
    assert not background.is_alive(), "the readers' run did not finish within 10 minutes"
    if background.error:
        raise background.error
    return background.result


def reads_the_readers_run(item):
    return "readers_run" in getattr(item, "fixturenames", ())


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


@pytest.fixture(scope="session")
def type_check(pytestconfig):
    """mypy's run (TypeCheck), finished: started here when the test was collected without the hook below."""
    check = getattr(pytestconfig, "type_check", None)
    if check is None:
        check = pytestconfig.type_check = TypeCheck()
        check.start()
    check.join(timeout=600)
    assert not check.is_alive(), "mypy did not finish within 10 minutes"
    return check


def pytest_collection_finish(session):
    if any(reads_the_readers_run(item) for item in session.items) and not session.config.option.collectonly:
        session.config.readers_run = ReadersRun()
        session.config.readers_run.begin()
    if any(item.name == TYPE_CHECK_TEST for item in session.items) and not session.config.option.collectonly:
        session.config.type_check = TypeCheck()
        session.config.type_check.start()
    if (any(item.name == KIT_TEST for item in session.items) and not session.config.option.collectonly
            and network_asked(session.config)):
        # The pages once a session: built here, before the kit's check starts, which copies them into its kit; the
        # page tests (tests/test_docs.py's site_build) read the same build.
        folder = Path(tempfile.mkdtemp(prefix="cookbook-site-"))
        session.config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        session.config.site_build = built_site(folder / "site")
        session.config.kit_install = KitInstall(site=session.config.site_build.out)
        session.config.add_cleanup(session.config.kit_install.cleanup)
        session.config.kit_install.start()


@pytest.fixture(scope="session")
def kit_install(pytestconfig):
    """The classroom kit's background check (KitInstall), finished."""
    pytestconfig.kit_install.join(timeout=600)
    assert not pytestconfig.kit_install.is_alive(), "the classroom kit's check did not finish within 10 minutes"
    return pytestconfig.kit_install


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
