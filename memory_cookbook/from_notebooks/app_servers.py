"""Generated from the `#| export app_servers` cells of notebooks/09_many_app_servers.ipynb by scripts/export_module.py.
Edit those cells, then run scripts/run_notebooks.py (or export_module.py): never this file."""

import importlib
import json
import os
import subprocess
import sys
from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.postgres.child_process import StderrReader
from typing import Any, TextIO, cast

__all__ = ["AppServer", "LESSON_VARIABLE", "RUNNING", "SCHEMA_VARIABLE", "URL_VARIABLE", "handle", "serve",
           "start_app_servers", "stop_app_servers"]


# %% ../../notebooks/09_many_app_servers.ipynb 34768ba9
URL_VARIABLE, SCHEMA_VARIABLE, LESSON_VARIABLE = "APP_SERVER_DATABASE_URL", "APP_SERVER_SCHEMA", "APP_SERVER_LESSON"


def serve() -> None:
    """An app server's loop: the wrapper of the lesson whose import name the parent hands over (as gunicorn is handed
    its app), with a PostgresStore of this process's own as its store; a JSON command per line on stdin, a JSON answer
    per line on stdout."""
    lesson = importlib.import_module(os.environ[LESSON_VARIABLE])
    with PostgresStore(os.environ[URL_VARIABLE], schema=os.environ[SCHEMA_VARIABLE]) as lesson.MEMORY.store:
        for line in sys.stdin:
            try:
                answer = handle(lesson, **json.loads(line))
            except Exception as error:  # sent back: the notebook raises it with this message
                answer = {"error": f"{type(error).__name__}: {error}"}
            print(json.dumps({"pid": os.getpid(), **answer}), flush=True)


def handle(lesson: Any, do: str, ticket: str = "", customer: str = "", subject: str = "",
           count: int = 0) -> dict[str, Any]:
    """One command: route an earlier ticket or a later message, recall, forget, or save `count` test memories."""
    store = lesson.MEMORY.store
    if do in ("ticket", "message"):
        state = (lesson.ticket_state(next(t for t in lesson.EARLIER if t["id"] == ticket)) if do == "ticket"
                 else lesson.later_state(customer, subject))
        response = lesson.ask_with_memory(state, lesson.ROUTE)
        entry = lesson.MEMORY.last_entry  # this call's, as this process logged it
        return {"ticket": entry["ticket"], "customer": entry["customer"], "team": response.choices["team"].choice,
                "routed": lesson.routed(response), "memories_sent": entry["memories_sent"], "saved": entry["saved"]}
    if do == "recall":
        return {"memories": lesson.memory_ids(customer)}
    if do == "forget_ticket":
        return {"forgotten": store.forget_ticket(customer, ticket)}
    if do == "forget_customer":
        return {"forgotten": store.forget_customer(customer)}
    if do == "save_many":  # a memory and a ledger entry for each of T-0, T-1, ...: for the concurrency run
        for number in range(count):
            note = {"request": {"customer": {"id": customer}, "ticket": {"id": f"T-{number}"}}, "jev_answered": {}}
            store.save(customer, note, p_remember=1.0, model="concurrency-run")
            store.log({"customer": customer, "ticket": f"T-{number}"})
        return {"saved": count}
    raise ValueError(f"unknown command {do!r}")


# %% ../../notebooks/09_many_app_servers.ipynb f078fcdf
class AppServer:
    """One app server process: post() a command, answer() reads the oldest answer not yet read; send() does both.
    Its stderr is read as it comes (StderrReader), and shown if it stops."""

    def __init__(self, url: str, schema: str = "memory_cookbook", *, lesson: str) -> None:
        """`lesson`: the import name of the module whose wrapper (ask_with_memory, MEMORY) the process runs."""
        self.url, self.schema, self.lesson = url, schema, lesson
        serve = "from memory_cookbook.from_notebooks.app_servers import serve; serve()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", serve], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, URL_VARIABLE: url, SCHEMA_VARIABLE: schema, LESSON_VARIABLE: lesson})
        self.stdin, self.stdout = cast(TextIO, self.process.stdin), cast(TextIO, self.process.stdout)  # pipes
        self.stderr = StderrReader(cast(TextIO, self.process.stderr))

    def post(self, **command: object) -> None:
        self.stdin.write(json.dumps(command) + "\n")
        self.stdin.flush()

    def answer(self) -> dict[str, Any]:
        line = self.stdout.readline()
        if not line:
            self.process.wait(timeout=30)
            raise RuntimeError(f"app server {self.process.pid} stopped:\n{self.stderr.text()}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"app server {answer['pid']}: {answer['error']}")
        return answer

    def send(self, **command: object) -> dict[str, Any]:
        self.post(**command)
        return self.answer()

    def stop(self) -> None:
        """End its input: the process closes its pool and exits."""
        if not self.stdin.closed:
            self.stdin.close()
        self.process.wait(timeout=30)
        self.stdout.close()
        self.stderr.text()


RUNNING: list[AppServer] = []  # the app servers this process started and has not stopped


def start_app_servers(url: str, count: int, schema: str = "memory_cookbook", *, lesson: str) -> list[AppServer]:
    """`count` app servers running `lesson`'s wrapper on this database and schema: the ones this process runs
    already, or new ones, started all at once (any others are stopped first)."""
    if len(RUNNING) != count or any(app.process.poll() is not None
                                    or (app.url, app.schema, app.lesson) != (url, schema, lesson) for app in RUNNING):
        stop_app_servers()
        RUNNING.extend(AppServer(url, schema, lesson=lesson) for _ in range(count))
    return list(RUNNING)


def stop_app_servers() -> None:
    """End every app server's input first, so that they all exit side by side, then wait for each."""
    for app in RUNNING:
        app.stdin.close()
    while RUNNING:
        RUNNING.pop().stop()
