"""Edges that the last blind audit found unguarded (issue 18): the classroom kit's wheel tags and markers per target,
SQLite's secure_delete on a build where it is off by default, the budget's rounding of a fractional estimate, the cache
key's 200-character boundary, the cache lock's exclusion, start_from's empty ledger, and thresholds of exactly 0 and 1.
Each was seen failing with a one-line bug planted in the code it guards."""

import json
import platform
import sqlite3
import threading

import pytest
from conftest import cache_keys
from filelock import FileLock, Timeout
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from memory_cookbook import cache_file, cache_miss, jev_request
from memory_cookbook.stores import BudgetedStore, SqliteStore
from memory_cookbook.tools import kit

# The classroom kit: which wheels each target installs, and the markers it evaluates


def installs(target, filename):
    return bool(set(parse_wheel_filename(filename)[3]) & target.tags())


@pytest.mark.parametrize("system, python, wheel, installed", [
    ("windows", "3.12", "tool-1.0-py3-none-win_amd64.whl", True),
    ("windows", "3.12", "tool-1.0-py3-none-manylinux_2_28_x86_64.whl", False),  # pure Python, but for Linux
    ("windows", "3.12", "tool-1.0-cp311-abi3-win_amd64.whl", True),  # the stable ABI of an older Python
    ("windows", "3.12", "tool-1.0-cp313-abi3-win_amd64.whl", False),
    ("windows", "3.11", "tool-1.0-cp312-cp312-win_amd64.whl", False),
    ("windows", "3.12", "tool-1.0-cp312-cp312-win32.whl", False),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", True),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", True),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_31_x86_64.whl", False),  # newer than glibc 2.28
    ("linux", "3.12", "tool-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", False),
    ("linux", "3.12", "tool-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", False),
    ("macos-x86_64", "3.12", "tool-1.0-cp312-cp312-macosx_10_9_x86_64.whl", True),
    ("macos-x86_64", "3.12", "tool-1.0-cp312-cp312-macosx_11_0_arm64.whl", False),
    ("macos-x86_64", "3.12", "tool-1.0-cp312-abi3-macosx_10_15_universal2.whl", True),
    ("macos-arm64", "3.12", "tool-1.0-cp312-cp312-macosx_11_0_x86_64.whl", False),
    ("macos-arm64", "3.12", "tool-1.0-py3-none-macosx_11_0_arm64.whl", True),
])
def test_a_target_installs_the_wheels_of_its_own_system_python_and_abi_only(system, python, wheel, installed):
    assert installs(kit.Target(system, python), wheel) == installed


@pytest.mark.parametrize("system, true_markers, false_markers", [
    ("windows", ['os_name == "nt"', 'sys_platform == "win32"', 'platform_system == "Windows"',
                 'platform_machine == "AMD64"'], ['os_name == "posix"', 'sys_platform == "linux"']),
    ("linux", ['os_name == "posix"', 'sys_platform == "linux"', 'platform_system == "Linux"',
               'platform_machine == "x86_64"'], ['os_name == "nt"', 'sys_platform == "darwin"']),
    ("macos-arm64", ['os_name == "posix"', 'sys_platform == "darwin"', 'platform_system == "Darwin"',
                     'platform_machine == "arm64"'], ['platform_machine == "x86_64"', 'sys_platform == "linux"']),
    ("macos-x86_64", ['sys_platform == "darwin"', 'platform_machine == "x86_64"'], ['platform_machine == "arm64"']),
])
def test_a_targets_markers_name_its_own_system(system, true_markers, false_markers):
    environment = kit.Target(system, "3.13").environment()
    assert [marker for marker in true_markers if not Marker(marker).evaluate(environment)] == []
    assert [marker for marker in false_markers if Marker(marker).evaluate(environment)] == []


@pytest.mark.parametrize("system", ["windows", "linux", "macos-arm64", "this"])
def test_a_targets_markers_name_its_own_python_and_cpython(system):
    other = "3.14" if kit.THIS_PYTHON != "3.14" else "3.13"
    environment = kit.Target(system, other).environment()
    assert (environment["python_version"], environment["python_full_version"]) == (other, f"{other}.0")
    for marker in [f'python_version == "{other}"', f'python_full_version >= "{other}"', 'implementation_name == '
                   '"cpython"', 'platform_python_implementation == "CPython"']:
        assert Marker(marker).evaluate(environment), marker


@pytest.mark.parametrize("system", ["windows", "linux", "macos-arm64", "this"])
def test_a_target_of_this_machines_python_has_its_full_version_whatever_the_system(system):
    environment = kit.Target(system, kit.THIS_PYTHON).environment()
    assert environment["python_full_version"] == platform.python_version()
    assert Marker(f'python_full_version >= "{kit.THIS_PYTHON}"').evaluate(environment)


def available(**packages):
    """{name: (version, requirements)} from name="version: requirement; requirement"."""
    found = {}
    for name, text in packages.items():
        version, _, requires = text.partition(":")
        found[name.replace("_", "-")] = (Version(version), [Requirement(line) for line in requires.split(";;") if line])
    return found


def test_unmet_follows_requirements_down_every_level():
    wheels = available(top="1.0: middle", middle="1.0: bottom>=2", bottom="1.5:")
    assert [str(requirement) for requirement in kit.unmet([Requirement("top")], wheels, {})] == ["bottom>=2"]


def test_unmet_ends_on_a_cycle_and_finds_nothing_missing():
    wheels = available(ipython="9.0: traitlets", traitlets="5.0: ipython")
    assert kit.unmet([Requirement("ipython")], wheels, {}) == []


def test_unmet_reads_package_names_as_pip_does():
    wheels = available(typing_extensions="4.16.0:", jinja2="3.1.6: MarkupSafe>=2.0", markupsafe="3.0.2:")
    assert kit.unmet([Requirement("Jinja2==3.1.6"), Requirement("typing.extensions")], wheels, {}) == []


def test_a_prerelease_that_a_pin_names_satisfies_it():
    wheels = available(tool="2.0rc1:")
    assert kit.unmet([Requirement("tool>=1.0")], wheels, {}) == []


def test_a_package_asked_for_with_an_extra_still_needs_its_own_requirements():
    wheels = available(jsonschema="4.25.0: attrs>=22.2.0;; rfc3987-syntax; extra == \"format-nongpl\"",
                       rfc3987_syntax="1.1.0:")
    assert [str(requirement) for requirement in kit.unmet([Requirement("jsonschema[format-nongpl]")], wheels, {})
            ] == ["attrs>=22.2.0"]


def test_a_wheels_marker_is_evaluated_with_the_targets_python():
    wheels = available(ipython="9.0: exceptiongroup; python_version < \"3.11\"")
    assert [str(requirement) for requirement in kit.unmet(
        [Requirement("ipython")], wheels, kit.Target("windows", "3.10").environment())] == [
        'exceptiongroup; python_version < "3.11"']
    assert kit.unmet([Requirement("ipython")], wheels, kit.Target("windows", "3.12").environment()) == []


# SQLite's secure_delete: on by default only in some builds (Debian's is), so the store must set it itself


@pytest.fixture
def secure_delete_off_by_default(monkeypatch):
    """sqlite3.connect as on a build compiled without SQLITE_SECURE_DELETE: each connection starts with it off."""
    connect = sqlite3.connect

    def connect_as_another_build(*args, **kwargs):
        connection = connect(*args, **kwargs)
        connection.execute("PRAGMA secure_delete = OFF")
        return connection

    monkeypatch.setattr(sqlite3, "connect", connect_as_another_build)


def test_the_stores_connection_overwrites_deleted_rows_even_where_sqlite_does_not_by_default(
        secure_delete_off_by_default, tmp_path):
    assert sqlite3.connect(":memory:").execute("PRAGMA secure_delete").fetchone() == (0,)  # the fixture holds
    with SqliteStore(tmp_path / "memories.sqlite").connect() as db:
        assert db.execute("PRAGMA secure_delete").fetchone() == (1,)


def test_forgetting_removes_the_bytes_from_the_file_even_where_sqlite_keeps_them_by_default(
        secure_delete_off_by_default, tmp_path):
    store = SqliteStore(tmp_path / "memories.sqlite")
    secret = "Harbor Logistics runs the self-hosted edition on Windows Server 2022"
    for customer, text in [("C-forget", secret), ("C-keep", "Fernwood Studio pays by invoice")]:
        store.save(customer, {"request": {"ticket": {"id": f"T-{customer}", "text": text}}, "jev_answered": {}},
                   p_remember=0.9, model="m")
        store.log({"customer": customer, "ticket": f"T-{customer}", "text": text})
    store.forget_customer("C-forget")
    on_disk = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert [text for text in (secret, "C-forget") if text.encode() in on_disk] == []
    assert b"Fernwood Studio pays by invoice" in on_disk


# The memory budget: a fractional estimate is rounded up, so a memory never costs less than its text


class Listed:
    def __init__(self, *memories):
        self.memories = list(memories)

    def recall(self, customer):
        return list(self.memories)


MEMORY = {"request": {"ticket": {"id": "T-1"}}}  # 38 characters of JSON


@pytest.mark.parametrize("tokens_per_char, estimate", [(0.08, 4), (0.25, 10), (0.5, 19), (1, 38)])
def test_a_fractional_estimate_is_rounded_up_and_a_whole_one_kept(tokens_per_char, estimate):
    assert len(json.dumps(MEMORY)) == 38  # times 0.08: 3.04 tokens; times 0.25: 9.5
    assert BudgetedStore(Listed(), 100, tokens_per_char).estimated_tokens(MEMORY) == estimate


def test_a_memory_of_3_point_04_tokens_does_not_fit_in_3():
    assert BudgetedStore(Listed(MEMORY), 3, tokens_per_char=0.08).recall("C-1") == []
    assert BudgetedStore(Listed(MEMORY), 4, tokens_per_char=0.08).recall("C-1") == [MEMORY]


# The cache key: the joined text up to 200 characters, its sha256 digest from 201 on (cooksafe's MAX_KEY_CHARS)


def call_of_key_length(length):
    """A call (model, state_json, questions_json) whose joined key "_system_one|m|{...}|..." has `length` characters."""
    head = len("|".join(["_system_one", "m", "{}", ""]))
    return "m", "{}", "q" * (length - head)


@pytest.mark.parametrize("length, hashed", [(199, False), (200, False), (201, True), (202, True)])
def test_the_cache_key_is_the_text_up_to_200_characters_and_its_digest_beyond(length, hashed):
    call = call_of_key_length(length)
    assert len("|".join(["_system_one", *call])) == length
    key = jev_request.cache_key(*call)
    assert key == next(iter(cache_keys([call])))  # as cooksafe.JsonCache itself files it
    assert (len(key), key.startswith("_system_one|")) == ((64, False) if hashed else (length, True))


def test_the_cache_key_counts_characters_not_bytes():
    call = ("m", "{}", "é" * (200 - len("_system_one|m|{}|")))  # 200 characters, more bytes in UTF-8
    assert jev_request.cache_key(*call) == next(iter(cache_keys([call]))) == "|".join(["_system_one", *call])


# The cache lock: a second writer waits while another holds the lock, then adds its answers to theirs


def lock_file(cache):
    """The lock every writer of `cache` must take: named here, not read from cache_file, so both sides are checked."""
    return FileLock(cache.with_name(f".{cache.name}.lock"))


class Recorder:
    """What MergingWrite writes for: a SharedJsonCache's entries and indent."""

    def __init__(self):
        self._data, self.indent = {}, 2


def test_a_writer_cannot_write_while_another_holds_the_lock(tmp_path, monkeypatch):
    cache = tmp_path / "json_cache.json"
    cache.write_text("{}")
    lock_for = cache_file.lock_for

    def impatient(path):  # the writer's own lock, told to give up at once instead of waiting 60 s
        lock = lock_for(path)
        lock.timeout = 0
        return lock

    monkeypatch.setattr(cache_file, "lock_for", impatient)
    with lock_file(cache):
        with pytest.raises(Timeout):
            cache_file.MergingWrite(Recorder(), cache).write_text('{"k": 1}')
        assert cache.read_text() == "{}"
    cache_file.MergingWrite(Recorder(), cache).write_text('{"k": 1}')
    assert json.loads(cache.read_text()) == {"k": 1}


def test_a_waiting_writer_proceeds_once_the_lock_is_released_and_keeps_what_was_written_meanwhile(tmp_path):
    cache = tmp_path / "json_cache.json"
    cache.write_text("{}")
    writer = threading.Thread(target=cache_file.MergingWrite(Recorder(), cache).write_text, args=('{"b": 2}',))
    with lock_file(cache):
        writer.start()
        writer.join(timeout=0.5)  # with the lock held it can never finish: no timing decides a pass
        assert writer.is_alive() and cache.read_text() == "{}"
        cache.write_text('{"a": 1}')  # what the lock's holder recorded
    writer.join(timeout=60)
    assert not writer.is_alive()
    assert json.loads(cache.read_text()) == {"a": 1, "b": 2}


# start_from and the gate's threshold, on the lesson module


def test_start_from_leaves_no_ledger_entry_even_of_a_customer_outside_customers(memory):
    memory.start_from("T-101")
    memory.LEDGER.append({**memory.LEDGER[0], "customer": "C-9999", "ticket": "T-999"})
    assert "C-9999" not in memory.CUSTOMERS
    memory.start_from()
    assert memory.LEDGER == []


@pytest.mark.parametrize("threshold, probability, saved", [
    (0, 0.0, True), (0, 0.07, True), (1, 1.0, True), (1, 0.9999, False), (1, 0.0, False)])
def test_a_threshold_of_0_saves_everything_and_of_1_only_certainty(memory, monkeypatch, threshold, probability, saved):
    monkeypatch.setattr(memory, "REMEMBER_AT", threshold)
    monkeypatch.setattr(memory, "remember_probability", lambda _memory: probability)
    memory.ask_with_memory(memory.later_state("C-1042", "Slow dashboards"), memory.ROUTE)
    assert memory.memory_ids("C-1042") == (["T-201"] if saved else [])
    assert memory.LEDGER[-1]["saved"] is saved


# What an off-script call says, word for word (mutation testing found its wording and boundaries unchecked)


def compared(state, questions=None):
    from conftest import committed_requests
    import basic_memory

    wire = jev_request.questions_wire(questions or basic_memory.ROUTE)
    return cache_miss.compared_with_recorded("jev-1.13.0", state, wire, committed_requests())


def test_an_edit_a_removed_and_an_added_field_are_named_with_what_to_do(memory):
    state = memory.ticket_state(memory.EARLIER[0])
    state["ticket"]["subject"] = "Slow café"
    del state["ticket"]["received_on"]
    state["ticket"]["urgent"] = True
    assert compared(state) == [
        "Edited since the recording (recorded → this request):",
        '  ticket.received_on: "2026-08-04" → "(absent)"',
        '  ticket.subject: "Adding an admin" → "Slow café"',
        '  ticket.urgent: "(absent)" → true',
        "An edited ticket or question is a new request: undo the edit (and Kernel → Restart Kernel and Run All Cells)"
        " to go back to the recorded answers."]


def test_other_memories_alone_are_named_with_what_to_do(memory):
    state = memory.ticket_state(memory.EARLIER[0])
    state[memory.MEMORY_KEY] = [{"request": memory.ticket_state(memory.EARLIER[3]), "jev_answered": {}}]
    lines = compared(state)
    assert lines[0] == "Memories carried: recorded for T-101: none · this request: T-104." and len(lines) == 2
    assert all(cause in lines[1] for cause in ("basic_memory.REMEMBER_AT", "ran out of order or twice",
                                                "Restart Kernel and Run All Cells"))


def test_a_new_ticket_lists_the_tickets_that_were_asked_about(memory):
    state = memory.ticket_state(memory.EARLIER[0])
    state["ticket"]["id"] = "T-999"
    assert compared(state) == [
        "The published run asked ['team'] about tickets T-201, T-203, T-204, T-206, T-101, T-102, T-103, T-104, T-105,"
        " T-202, T-205, never about T-999: a new ticket is a new request."]


@pytest.mark.parametrize("edits, more", [(6, []), (7, ["  … and 1 more differences"])])
def test_six_differences_are_listed_and_a_seventh_is_counted(memory, edits, more):
    state = memory.ticket_state(memory.EARLIER[0])
    state["ticket"].update({f"field_{number}": number for number in range(edits)})
    lines = compared(state)
    assert len(lines) == 1 + 6 + len(more) + 1 and lines[7:-1] == more


def test_truncated_keeps_text_of_exactly_its_width_and_other_alphabets_as_they_are():
    assert cache_miss.truncated("x" * 8, width=10) == '"xxxxxxxx"'
    assert cache_miss.truncated("café 咖啡") == '"café 咖啡"'
