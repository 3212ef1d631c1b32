"""Generated from the notebooks' `#| export app_servers` cells by scripts/export_module.py: do not edit."""

import json
import os
import subprocess
import sys
from memory_cookbook.from_notebooks.postgres_store import PostgresStore
from memory_cookbook.locations import LESSON_FILE, load_lesson
from memory_cookbook.postgres.child_process import LESSON_FILE_VARIABLE, StderrReader


# %% ../../notebooks/09_many_app_servers.ipynb 34768ba9
URL_VARIABLE, SCHEMA_VARIABLE = "APP_SERVER_DATABASE_URL", "APP_SERVER_SCHEMA"


def serve():
    """An app server's loop: the wrapper (the lesson module, loaded from the file the parent names) with a
    PostgresStore of this process's own; a JSON command per line on stdin, a JSON answer per line on stdout."""
    memory = load_lesson(os.environ.get(LESSON_FILE_VARIABLE) or LESSON_FILE)
    with PostgresStore(os.environ[URL_VARIABLE], schema=os.environ[SCHEMA_VARIABLE]) as memory.STORE:
        for line in sys.stdin:
            try:
                answer = handle(memory, **json.loads(line))
            except Exception as error:  # sent back: the notebook raises it with this message
                answer = {"error": f"{type(error).__name__}: {error}"}
            print(json.dumps({"pid": os.getpid(), **answer}), flush=True)


def handle(memory, do, ticket=None, customer=None, subject=None, count=None):
    """One command: route an earlier ticket or a later message, recall, forget, or save `count` test memories."""
    if do in ("ticket", "message"):
        state = (memory.ticket_state(next(t for t in memory.EARLIER if t["id"] == ticket)) if do == "ticket"
                 else memory.later_state(customer, subject))
        response, entry = memory.ask_with_memory(state, memory.ROUTE), memory.LEDGER[-1]
        return {"ticket": entry["ticket"], "customer": entry["customer"], "team": response.choices["team"].choice,
                "routed": memory.routed(response), "memories_sent": entry["memories_sent"], "saved": entry["saved"]}
    if do == "recall":
        return {"memories": memory.memory_ids(customer)}
    if do == "forget_ticket":
        return {"forgotten": memory.STORE.forget_ticket(ticket, customer)}
    if do == "forget_customer":
        return {"forgotten": memory.STORE.forget_customer(customer)}
    if do == "save_many":  # a memory and a ledger entry for each of T-0, T-1, ...: for the concurrency run
        for number in range(count):
            note = {"request": {"customer": {"id": customer}, "ticket": {"id": f"T-{number}"}}, "jev_answered": {}}
            memory.STORE.save(customer, note, p_remember=1.0, model="concurrency-run")
            memory.STORE.log({"customer": customer, "ticket": f"T-{number}"})
        return {"saved": count}
    raise ValueError(f"unknown command {do!r}")


# %% ../../notebooks/09_many_app_servers.ipynb f078fcdf
class AppServer:
    """One app server process: post() a command, answer() reads the oldest answer not yet read; send() does both.
    Its stderr is read as it comes (StderrReader), and shown if it stops."""

    def __init__(self, url, schema="memory_cookbook", lesson_file=LESSON_FILE):
        self.url, self.schema = url, schema
        serve = "from memory_cookbook.from_notebooks.app_servers import serve; serve()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", serve], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env={**os.environ, URL_VARIABLE: url, SCHEMA_VARIABLE: schema,
                            LESSON_FILE_VARIABLE: str(lesson_file)})
        self.stderr = StderrReader(self.process.stderr)

    def post(self, **command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def answer(self):
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(timeout=30)
            raise RuntimeError(f"app server {self.process.pid} stopped:\n{self.stderr.text()}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"app server {answer['pid']}: {answer['error']}")
        return answer

    def send(self, **command):
        self.post(**command)
        return self.answer()

    def stop(self):
        """End its input: the process closes its pool and exits."""
        if not self.process.stdin.closed:
            self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()
        self.stderr.text()


RUNNING = []  # the app servers this process started and has not stopped


def start_app_servers(url, count, schema="memory_cookbook", lesson_file=LESSON_FILE):
    """`count` app servers on this database and schema: the ones this process runs already, or new ones, started
    all at once (any others are stopped first)."""
    if len(RUNNING) != count or any(app.process.poll() is not None or (app.url, app.schema) != (url, schema)
                                    for app in RUNNING):
        stop_app_servers()
        RUNNING.extend(AppServer(url, schema, lesson_file) for _ in range(count))
    return list(RUNNING)


def stop_app_servers():
    """End every app server's input first, so that they all exit side by side, then wait for each."""
    for app in RUNNING:
        app.process.stdin.close()
    while RUNNING:
        RUNNING.pop().stop()
