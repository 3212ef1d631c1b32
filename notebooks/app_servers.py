"""Scratch (phase A): app servers as separate OS processes sharing one PostgreSQL memory."""

import json
import os
import subprocess
import sys
import time

URL_VARIABLE = "APP_SERVER_DATABASE_URL"  # not in argv, where `ps` would show a password
SERVE = "import app_servers; app_servers.serve()"


def serve():
    """Run as an app server: the wrapper with a PostgresStore (and pool) of this process's own. Reads one JSON command
    per line on stdin, answers one JSON line on stdout."""
    import basic_memory
    from postgres_store import PostgresStore

    basic_memory.STORE = PostgresStore(os.environ[URL_VARIABLE])
    for line in sys.stdin:
        try:
            answer = handle(basic_memory, **json.loads(line))
        except Exception as error:  # the parent raises it, with its message
            answer = {"error": f"{type(error).__name__}: {error}"}
        print(json.dumps({"pid": os.getpid(), **answer}), flush=True)
    basic_memory.STORE.close()


def handle(memory, do, customer=None, ticket=None, subject=None, count=None):
    """One command: route a ticket or a message, recall, forget, or save `count` memories as fast as possible."""
    if do in ("ticket", "message"):
        state = (memory.ticket_state(next(t for t in memory.EARLIER if t["id"] == ticket)) if do == "ticket"
                 else memory.later_state(customer, subject))
        response = memory.ask_with_memory(state, memory.ROUTE)
        entry = memory.LEDGER[-1]
        return {"ticket": entry["ticket"], "customer": entry["customer"], "team": response.choices["team"].choice,
                "routed": memory.routed(response), "memories_sent": entry["memories_sent"], "saved": entry["saved"]}
    if do == "recall":
        return {"memories": memory.memory_ids(customer)}
    if do == "forget":
        return {"forgotten": memory.STORE.forget_customer(customer)}
    if do == "save_many":
        started = time.perf_counter()
        for number in range(count):
            note = {"request": {"customer": {"id": customer}, "ticket": {"id": f"T-{number}"}}, "jev_answered": {}}
            memory.STORE.save(customer, note, p_remember=1.0, model="concurrency-run")
            memory.STORE.log({"customer": customer, "ticket": f"T-{number}"})
        return {"saved": count, "seconds": time.perf_counter() - started}
    raise ValueError(f"unknown command {do!r}")


class AppServer:
    """One app server process: send() a command, get its answer."""

    def __init__(self, url):
        self.process = subprocess.Popen([sys.executable, "-c", SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env={**os.environ, URL_VARIABLE: url})

    def post(self, **command):
        """Send a command without waiting for its answer."""
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()

    def answer(self):
        """The answer to the oldest command not yet answered."""
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"app server {self.process.pid} stopped:\n{self.process.stderr.read()}")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"app server {answer['pid']}: {answer['error']}")
        return answer

    def send(self, **command):
        self.post(**command)
        return self.answer()

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()
        self.process.stderr.close()
